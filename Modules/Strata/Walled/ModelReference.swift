/// An object's reference to its entity's model that costs no reference counting: every
/// attribute access goes through it.
///
/// Walled file (see "Unsafe code" in `Docs/Architecture.md`). The reference is unretained
/// (`Unmanaged`, read with `_withUnsafeGuaranteedRef`, which neither retains nor releases;
/// an `unowned(unsafe)` reference costs a retain and a release per use), which is sound because
/// of what ``init(_:for:)`` checks (in release builds too): the model is published by
/// ``ModelRegistry``, which keeps every published model for the rest of the process, or the
/// object is the model's own prototype, which the model owns (so the prototype cannot outlive it).
@safe struct ModelReference {
    private let target: Unmanaged<EntityModel>

    /// A reference from `object` to `model`; stops the program unless the model lives at least
    /// as long as the object (see the type's summary).
    @inline(__always)
    init(_ model: EntityModel, for object: ManagedObject) {
        precondition(
            model.isPublished || model.prototype === object,
            "Strata: an object's model must be published by the model registry")
        unsafe target = Unmanaged.passUnretained(model)
    }

    /// The model.
    @inline(__always)
    var model: EntityModel { unsafe target.takeUnretainedValue() }

    /// The column of property `index` (-1 for a to-many relationship); see
    /// ``EntityModel/column(ofProperty:)``.
    @inline(__always)
    func column(ofProperty index: Int) -> Int {
        unsafe target._withUnsafeGuaranteedRef { $0.column(ofProperty: index) }
    }

    /// ``EntityModel/propertyIndex(forSite:)``, without reference counting.
    @inline(__always)
    func propertyIndex(forSite site: UInt32) -> Int? {
        unsafe target._withUnsafeGuaranteedRef { $0.propertyIndex(forSite: site) }
    }

    /// ``EntityModel/column(forSite:)``, without reference counting.
    @inline(__always)
    func column(forSite site: UInt32) -> Int? { unsafe target._withUnsafeGuaranteedRef { $0.column(forSite: site) } }

    /// The number of columns of the entity.
    @inline(__always)
    var columnCount: Int { unsafe target._withUnsafeGuaranteedRef { $0.columnCount } }
}
