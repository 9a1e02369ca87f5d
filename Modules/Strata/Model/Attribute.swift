import StrataStorage

/// Declares a stored attribute on a ``ManagedObject`` subclass.
///
/// ```swift
/// final class Account: ManagedObject {
///     @Attribute(.unique) var name = ""
///     @Attribute var balance: Int64 = 0
///     @Attribute var closedAt: Date?
/// }
/// ```
///
/// The column is named after the property. The default is evaluated once, when the schema
/// is built, like a SQL column default; a default that changes per instance (`Date()`,
/// `UUID()`) is rejected with ``StrataStorage/StrataError/invalidSchema(_:)`` — set such values in
/// ``ManagedObject/awakeFromInsert()`` instead.
///
/// The declaration takes the initial value (the default) and, optionally, ``AttributeOptions``:
/// `@Attribute var count: Int64 = 0`, `@Attribute(.unique) var name = ""`,
/// `@Attribute(.indexed) var openedAt: Date?` (an optional attribute defaults to nil).
///
/// A renamed attribute declares the name older stores know it by, so that a migration renames
/// the column and keeps its values instead of dropping one and adding another:
/// `@Attribute(originalName: "memo") var note = ""` (see `Docs/Migrations.md`).
///
/// Lifetime rule: read and write attributes only inside the owning context's `perform`
/// (or before the object is inserted). Access from anywhere else stops the program with a
/// message naming the property.
///
/// The wrapper finds its column by the declaration's source position, which Swift passes to
/// its initialisers through hidden, underscored parameters; leave them to their defaults
/// (see `Docs/DeclarationSites.md`).
@propertyWrapper
public struct Attribute<Value: AttributeValue> {
    /// The declaration's identity (see ``PropertySite``). The default and options live in the
    /// entity's model, captured once from its prototype, so each object carries only this.
    @usableFromInline
    let site: UInt32

    /// An attribute with a default value: `@Attribute(.unique) var name = ""`.
    ///
    /// `originalName` is the attribute's name in older stores, for a renamed attribute.
    ///
    /// `_fileID`, `_line` and `_column` identify the declaration: leave them to their defaults.
    /// (Pass an explicit `_line` or `_column` only to tell apart two properties that generated
    /// code declares at one reported position; the schema refuses a model where two collide.)
    /// The underscored labels keep this initialiser out of the documented interface.
    @_documentation(visibility: internal)
    @inlinable @inline(__always)
    public init(
        wrappedValue: Value, _ options: AttributeOptions = [], originalName: String? = nil,
        _fileID: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column
    ) {
        site = PropertySite.make(fileID: _fileID, line: _line, column: _column)
        if DeclarationCapture.isCapturing { Self.declare(site, wrappedValue, options, originalName) }
    }

    /// An optional attribute that defaults to nil: `@Attribute var closedAt: Date?`.
    ///
    /// `originalName` is the attribute's name in older stores, for a renamed attribute.
    ///
    /// `_fileID`, `_line` and `_column` identify the declaration: leave them to their defaults.
    @_documentation(visibility: internal)
    @inlinable @inline(__always)
    public init(
        _ options: AttributeOptions = [], originalName: String? = nil,
        _fileID: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column
    ) where Value: ExpressibleByNilLiteral {
        site = PropertySite.make(fileID: _fileID, line: _line, column: _column)
        if DeclarationCapture.isCapturing { Self.declare(site, nil, options, originalName) }
    }

    /// Records the declaration while the schema builder constructs the prototype.
    @usableFromInline
    static func declare(_ site: UInt32, _ defaultValue: Value, _ options: AttributeOptions, _ originalName: String?) {
        DeclarationCapture.record(site) {
            .attribute(
                defaultValue: defaultValue.storedValue, typedDefault: defaultValue, options: options,
                originalName: originalName)
        }
    }

    @available(*, unavailable, message: "@Attribute is only available on ManagedObject subclasses")
    /// Unavailable: the value is reached through the enclosing object.
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// Reads and writes the value through the object's row storage.
    ///
    /// Inlinable, so that each access is specialised for the model class and value type. A read
    /// loads the wrapper's site (a field of the object), finds the column by a scan of a few
    /// words and loads the value; in optimised builds it forms no key path, so it costs no
    /// reference counting beyond the value's own. Writes also pass the wrapped key path, which
    /// only prototypes use (for the schema builder).
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let site = object[keyPath: storageKeyPath].site
            if let slot = object.fastReadSlot(site: site), let value = Value(storedValue: slot.value) {
                return value
            }
            return slowGet(object, site: site)
        }
        set {
            let site = object[keyPath: storageKeyPath].site
            if !object.fastWriteColumn(site: site, newValue.storedValue) {
                slowSet(newValue, object, site: site, wrappedKeyPath)
            }
        }
    }

    /// Reads on prototypes and on objects not yet inserted, and the default when a stored value
    /// does not convert.
    @usableFromInline
    static func slowGet(_ object: ManagedObject, site: UInt32) -> Value {
        let property = object.property(site: site, accessedAs: nil)
        let stored = object.readColumn(property)
        if let value = Value(storedValue: stored) { return value }
        return object.resolvedModel.typedDefault(ofProperty: property) as! Value
    }

    /// Writes on prototypes (which record the key path for the schema builder) and on objects
    /// not yet inserted.
    @usableFromInline
    static func slowSet(_ newValue: Value, _ object: ManagedObject, site: UInt32, _ wrappedKeyPath: AnyKeyPath) {
        let property = object.property(site: site, accessedAs: wrappedKeyPath)
        object.writeColumn(property, newValue.storedValue)
    }
}

/// Options for an ``Attribute``.
public struct AttributeOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: UInt8
    /// Options from raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// No two objects of the entity may share this value (checked at save).
    public static let unique = AttributeOptions(rawValue: 1 << 0)
    /// Keep an index on this attribute for fast filtering and sorting.
    public static let indexed = AttributeOptions(rawValue: 1 << 1)
    /// Keep the attribute's last value in the persistent history's tombstone of a deleted object
    /// (Core Data's "preserve after deletion"): ``PersistentHistoryChange/tombstone``. It changes
    /// nothing in the store's layout.
    ///
    /// ```swift
    /// @Attribute(.preserveAfterDeletion) var name = ""
    /// ```
    public static let preserveAfterDeletion = AttributeOptions(rawValue: 1 << 2)
}

/// What the schema builder reads from an `@Attribute` through reflection (its default and
/// options come from the ``DeclarationCapture`` of the prototype, by site).
protocol AttributeWrapper {
    var site: UInt32 { get }
    var columnType: ColumnType { get }
    var isOptional: Bool { get }
}

extension Attribute: AttributeWrapper {
    var columnType: ColumnType { Value.columnType }
    var isOptional: Bool { Value.isOptional }
}
