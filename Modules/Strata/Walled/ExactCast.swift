/// Casts from ``ManagedObject`` to a fetch's entity class that cost no per-object dynamic cast.
///
/// Walled file (see "Unsafe code" in `Docs/Architecture.md`). A fetch makes every object from
/// its request's model, whose class is exactly the request's `Entity`; the per-row loops work
/// on `ManagedObject` to stay free of generic metadata. These casts check that claim, in release
/// builds too, by comparing each object's class with `Entity` (one load and compare), and then
/// reinterpret without the runtime's general cast.
enum ExactCast {
    /// `objects` as `[Entity]`; stops the program unless every object's class is exactly `Entity`.
    @inline(__always)
    static func array<Entity: ManagedObject>(_ objects: [ManagedObject], as _: Entity.Type) -> [Entity] {
        for object in objects { check(object, Entity.self) }
        // Arrays of class references share one layout.
        return unsafe unsafeBitCast(objects, to: [Entity].self)
    }

    /// `object` as `Entity`; stops the program unless its class is exactly `Entity`.
    @inline(__always)
    static func object<Entity: ManagedObject>(_ object: ManagedObject, as _: Entity.Type) -> Entity {
        check(object, Entity.self)
        return unsafe unsafeDowncast(object, to: Entity.self)
    }

    @inline(__always)
    private static func check<Entity: ManagedObject>(_ object: ManagedObject, _: Entity.Type) {
        precondition(
            ObjectIdentifier(type(of: object)) == ObjectIdentifier(Entity.self),
            "Strata: a fetch made an object of another class than its entity")
    }
}
