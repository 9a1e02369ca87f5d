public import StrataStorage
/// Declares a relationship on a ``ManagedObject`` subclass: to-one (`Target?`) or to-many
/// (``RelatedObjects``). Every relationship has an inverse, so both sides stay in sync.
///
/// Name the inverse on **one** side only (as in SwiftData: naming it on both sides makes the
/// two key paths refer to each other, which Swift rejects as a circular reference). The
/// other side finds it.
///
/// ```swift
/// final class Account: ManagedObject {
///     @Relationship(inverse: \Transaction.account, deleteRule: .deny)
///     var transactions: RelatedObjects<Transaction>
/// }
/// final class Transaction: ManagedObject {
///     @Relationship var account: Account?
/// }
/// ```
///
/// A to-one relationship is stored as a foreign key; a to-many whose inverse is to-one is
/// derived from it; a to-many whose inverse is to-many (many-to-many) uses a join table.
/// Related objects load lazily on first access, inside the context. Delete rules are applied
/// at save. The projected value (`$account`) is the related object's ``ObjectID``, usable in
/// predicates: `#Predicate<Transaction> { $0.$account == accountID }`.
///
/// Lifetime rule: use relationships only inside the owning context's `perform`, and only on
/// inserted or fetched objects.
@propertyWrapper
public struct Relationship<Value: RelationshipValue> {
    /// The declaration's identity (see ``PropertySite``). The inverse and delete rule live in
    /// the entity's model, captured once from its prototype, so each object carries only this.
    @usableFromInline
    let site: UInt32

    /// A to-one relationship.
    /// - Parameters:
    ///   - inverse: the property on the target that points back (to-one or to-many); omit it
    ///     when the target names this property as its inverse.
    ///   - deleteRule: what deleting this object does to the target (default `.nullify`).
    ///   - fileID: identifies the declaration, with `line` and `column`: leave all three to their
    ///     defaults (see ``Attribute/init(wrappedValue:_:fileID:line:column:)``).
    ///   - line: the declaration's line.
    ///   - column: the declaration's column.
    @inlinable @inline(__always)
    public init<Target: ManagedObject>(
        inverse: PartialKeyPath<Target>? = nil, deleteRule: DeleteRule = .nullify,
        fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column
    ) where Value == Target? {
        site = PropertySite.make(fileID: fileID, line: line, column: column)
        if DeclarationCapture.isCapturing { Self.declare(site, inverse, deleteRule) }
    }

    /// A to-many relationship.
    /// - Parameters:
    ///   - inverse: the property on the target that points back (to-one, or to-many for
    ///     many-to-many); omit it when the target names this property as its inverse.
    ///   - deleteRule: what deleting this object does to the targets (default `.nullify`).
    ///   - fileID: identifies the declaration, with `line` and `column`: leave all three to their
    ///     defaults (see ``Attribute/init(wrappedValue:_:fileID:line:column:)``).
    ///   - line: the declaration's line.
    ///   - column: the declaration's column.
    @inlinable @inline(__always)
    public init<Target: ManagedObject>(
        inverse: PartialKeyPath<Target>? = nil, deleteRule: DeleteRule = .nullify,
        fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column
    ) where Value == RelatedObjects<Target> {
        site = PropertySite.make(fileID: fileID, line: line, column: column)
        if DeclarationCapture.isCapturing { Self.declare(site, inverse, deleteRule) }
    }

    /// A relationship whose inverse the target names, with the `.nullify` rule.
    ///
    /// `fileID`, `line` and `column` identify the declaration: leave them to their defaults.
    @inlinable @inline(__always)
    public init(fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column) {
        site = PropertySite.make(fileID: fileID, line: line, column: column)
        if DeclarationCapture.isCapturing { Self.declare(site, nil, .nullify) }
    }

    /// Records the declaration while the schema builder constructs the prototype.
    @usableFromInline
    static func declare(_ site: UInt32, _ inverse: AnyKeyPath?, _ deleteRule: DeleteRule) {
        DeclarationCapture.record(site) { .relationship(inverse: inverse, deleteRule: deleteRule) }
    }

    @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
    /// Unavailable: the value is reached through the enclosing object.
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
    /// Unavailable: the projection is reached through the enclosing object.
    public var projectedValue: Value.Projection {
        fatalError("unavailable")
    }

    /// Reads and writes the related object(s) through the owning context.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let site = object[keyPath: storageKeyPath].site
            return Value._read(owner: object, property: object.fastPropertyIndex(site: site) ?? object.property(site: site, accessedAs: nil))
        }
        set {
            let site = object[keyPath: storageKeyPath].site
            let property = object.fastPropertyIndex(site: site) ?? object.property(site: site, accessedAs: wrappedKeyPath)
            Value._write(newValue, owner: object, property: property)
        }
    }

    /// The related object IDs, for predicates and for passing across `perform`.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        projected projectedKeyPath: KeyPath<Object, Value.Projection>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value.Projection {
        Value._project(owner: object, property: object.property(site: object[keyPath: storageKeyPath].site, accessedAs: projectedKeyPath))
    }
}

/// What deleting an object does to the objects its relationship points at, applied at save.
public enum DeleteRule: String, Sendable, Hashable {
    /// The targets stay; their inverse relationship forgets the deleted object.
    case nullify
    /// The targets are deleted too (and their own rules apply).
    case cascade
    /// The save fails with ``StrataError/validation(_:)`` while any target exists.
    case deny
}

/// A value a ``Relationship`` can hold: `Target?` (to-one) or ``RelatedObjects`` (to-many).
///
/// The underscored requirements are implementation details of the property wrapper.
public protocol RelationshipValue {
    associatedtype Target: ManagedObject
    associatedtype Projection
    static var isToMany: Bool { get }
    static func _read(owner: ManagedObject, property: Int) -> Self
    static func _write(_ value: Self, owner: ManagedObject, property: Int)
    static func _project(owner: ManagedObject, property: Int) -> Projection
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    /// The related class.
    public typealias Target = Wrapped
    /// A to-one relationship projects the target's ID.
    public typealias Projection = ObjectID?
    /// To-one.
    public static var isToMany: Bool { false }

    /// Implementation detail of ``Relationship``.
    public static func _read(owner: ManagedObject, property: Int) -> Wrapped? {
        owner.toOneTarget(property).map { $0 as! Wrapped }
    }

    /// Implementation detail of ``Relationship``.
    public static func _write(_ value: Wrapped?, owner: ManagedObject, property: Int) {
        owner.setToOneTarget(property, value)
    }

    /// Implementation detail of ``Relationship``.
    public static func _project(owner: ManagedObject, property: Int) -> ObjectID? {
        owner.toOneTargetID(property)
    }
}

/// What the schema builder reads from a `@Relationship` through reflection (its inverse and
/// delete rule come from the ``DeclarationCapture`` of the prototype, by site).
protocol RelationshipWrapper {
    var site: UInt32 { get }
    var targetType: ManagedObject.Type { get }
    var isToMany: Bool { get }
}

extension Relationship: RelationshipWrapper {
    var targetType: ManagedObject.Type { Value.Target.self }
    var isToMany: Bool { Value.isToMany }
}

/// A declared relationship as the schema builder resolves it.
struct RelationshipDeclaration {
    let targetType: ManagedObject.Type
    let isToMany: Bool
    let inverseKeyPath: AnyKeyPath?
    let declaredDeleteRule: DeleteRule
}
