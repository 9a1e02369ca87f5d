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
/// at save. The projected value (`$account`) is the related object's ``StrataStorage/ObjectID``, usable in
/// predicates: `#Predicate<Transaction> { $0.$account == accountID }`.
///
/// The declaration takes `inverse:` (a key path on the target, on one side only) and
/// `deleteRule:` (``DeleteRule``, `.nullify` unless given); both may be omitted.
///
/// Lifetime rule: use relationships only inside the owning context's `perform`, and only on
/// inserted or fetched objects.
///
/// Like ``Attribute``, the wrapper is identified by its declaration's source position, passed
/// through hidden, underscored initialiser parameters that are left to their defaults.
@propertyWrapper
public struct Relationship<Value: RelationshipValue> {
    /// The declaration's identity (see ``PropertySite``). The inverse and delete rule live in
    /// the entity's model, captured once from its prototype, so each object carries only this.
    @usableFromInline
    let site: UInt32

    /// A to-one relationship: `@Relationship(inverse: \Account.owner) var partner: Account?`.
    /// - Parameters:
    ///   - inverse: the property on the target that points back (to-one or to-many); omit it
    ///     when the target names this property as its inverse.
    ///   - deleteRule: what deleting this object does to the target (default `.nullify`).
    ///   - _fileID: identifies the declaration, with `_line` and `_column`: leave all three to
    ///     their defaults (see `Docs/DeclarationSites.md`).
    ///   - _line: the declaration's line.
    ///   - _column: the declaration's column.
    @_documentation(visibility: internal)
    @inlinable @inline(__always)
    public init<Target: ManagedObject>(
        inverse: PartialKeyPath<Target>? = nil, deleteRule: DeleteRule = .nullify,
        _fileID: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column
    ) where Value == Target? {
        site = PropertySite.make(fileID: _fileID, line: _line, column: _column)
        if DeclarationCapture.isCapturing { Self.declare(site, inverse, deleteRule) }
    }

    /// A to-many relationship:
    /// `@Relationship(inverse: \Transaction.account, deleteRule: .deny) var transactions: RelatedObjects<Transaction>`.
    /// - Parameters:
    ///   - inverse: the property on the target that points back (to-one, or to-many for
    ///     many-to-many); omit it when the target names this property as its inverse.
    ///   - deleteRule: what deleting this object does to the targets (default `.nullify`).
    ///   - _fileID: identifies the declaration, with `_line` and `_column`: leave all three to
    ///     their defaults.
    ///   - _line: the declaration's line.
    ///   - _column: the declaration's column.
    @_documentation(visibility: internal)
    @inlinable @inline(__always)
    public init<Target: ManagedObject>(
        inverse: PartialKeyPath<Target>? = nil, deleteRule: DeleteRule = .nullify,
        _fileID: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column
    ) where Value == RelatedObjects<Target> {
        site = PropertySite.make(fileID: _fileID, line: _line, column: _column)
        if DeclarationCapture.isCapturing { Self.declare(site, inverse, deleteRule) }
    }

    /// A relationship whose inverse the target names, with the `.nullify` rule:
    /// `@Relationship var account: Account?`.
    ///
    /// `_fileID`, `_line` and `_column` identify the declaration: leave them to their defaults.
    @_documentation(visibility: internal)
    @inlinable @inline(__always)
    public init(_fileID: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column) {
        site = PropertySite.make(fileID: _fileID, line: _line, column: _column)
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
            let property = object.fastPropertyIndex(site: site) ?? object.property(site: site, accessedAs: nil)
            return Value.relationshipAccessors.read(object, property)
        }
        set {
            let site = object[keyPath: storageKeyPath].site
            let property =
                object.fastPropertyIndex(site: site) ?? object.property(site: site, accessedAs: wrappedKeyPath)
            Value.relationshipAccessors.write(newValue, object, property)
        }
    }

    /// The related object IDs, for predicates and for passing across `perform`.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        projected projectedKeyPath: KeyPath<Object, Value.Projection>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value.Projection {
        let property = object.property(site: object[keyPath: storageKeyPath].site, accessedAs: projectedKeyPath)
        return Value.relationshipAccessors.project(object, property)
    }
}

/// What deleting an object does to the objects its relationship points at, applied at save.
public enum DeleteRule: String, Sendable, Hashable {
    /// The targets stay; their inverse relationship forgets the deleted object.
    case nullify
    /// The targets are deleted too (and their own rules apply).
    case cascade
    /// The save fails with ``StrataStorage/StrataError/validation(_:)`` while any target exists.
    case deny
}

/// A value a ``Relationship`` can hold: `Target?` (to-one) or ``RelatedObjects`` (to-many).
///
/// Only those two conform; the protocol is public so that `Relationship`'s generic signature
/// can name it. Its one requirement returns a type whose initialiser is internal to Strata, so
/// no other type can provide a working conformance. Do not conform your own types.
public protocol RelationshipValue {
    /// The related class.
    associatedtype Target: ManagedObject
    /// What the wrapper's projected value (`$property`) gives: the related IDs.
    associatedtype Projection
    /// How ``Relationship`` reads, writes and projects this kind of value.
    @_documentation(visibility: internal)
    static var relationshipAccessors: RelationshipAccessors<Self> { get }
}

/// The operations ``Relationship`` performs on one kind of ``RelationshipValue``, built only
/// by Strata (its initialiser is internal). An implementation detail of the property wrapper.
@_documentation(visibility: internal)
public struct RelationshipAccessors<Value: RelationshipValue> {
    /// Whether the value is a to-many relationship.
    @usableFromInline let isToMany: Bool
    /// Reads property `property` of the owner.
    @usableFromInline let read: (ManagedObject, Int) -> Value
    /// Writes a value to property `property` of the owner.
    @usableFromInline let write: (Value, ManagedObject, Int) -> Void
    /// The projected value of property `property` of the owner.
    @usableFromInline let project: (ManagedObject, Int) -> Value.Projection

    @inlinable
    init(
        isToMany: Bool, read: @escaping (ManagedObject, Int) -> Value,
        write: @escaping (Value, ManagedObject, Int) -> Void,
        project: @escaping (ManagedObject, Int) -> Value.Projection
    ) {
        self.isToMany = isToMany
        self.read = read
        self.write = write
        self.project = project
    }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    /// The related class.
    public typealias Target = Wrapped
    /// A to-one relationship projects the target's ID.
    public typealias Projection = ObjectID?

    /// To-one: the target (typed by a checked cast), its setter, and its ID.
    @_documentation(visibility: internal)
    @inlinable
    public static var relationshipAccessors: RelationshipAccessors<Wrapped?> {
        RelationshipAccessors(
            isToMany: false,
            read: { owner, property in owner.toOneTarget(property, as: Wrapped.self) },
            write: { value, owner, property in owner.setToOneTarget(property, value) },
            project: { owner, property in owner.toOneTargetID(property) }
        )
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
    var isToMany: Bool { Value.relationshipAccessors.isToMany }
}

/// A declared relationship as the schema builder resolves it.
struct RelationshipDeclaration {
    let targetType: ManagedObject.Type
    let isToMany: Bool
    let inverseKeyPath: AnyKeyPath?
    let declaredDeleteRule: DeleteRule
}
