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
/// `UUID()`) is rejected with ``StrataError/invalidSchema(_:)`` — set such values in
/// ``ManagedObject/awakeFromInsert()`` instead.
///
/// Lifetime rule: read and write attributes only inside the owning context's `perform`
/// (or before the object is inserted). Access from anywhere else stops the program with a
/// message naming the property.
@propertyWrapper
public struct Attribute<Value: AttributeValue> {
    let defaultValue: Value
    var options: AttributeOptions

    /// An attribute with a default value.
    public init(wrappedValue: Value, _ options: AttributeOptions = []) {
        self.defaultValue = wrappedValue
        self.options = options
    }

    /// An optional attribute that defaults to nil.
    public init(_ options: AttributeOptions = []) where Value: ExpressibleByNilLiteral {
        self.defaultValue = nil
        self.options = options
    }

    @available(*, unavailable, message: "@Attribute is only available on ManagedObject subclasses")
    /// Unavailable: the value is reached through the enclosing object.
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// Reads and writes the value through the object's row storage.
    ///
    /// Inlinable, so that each access is specialised for the model class and value type: once a
    /// property has been used, a read is a scan of a few words and an array load, with no
    /// generic metadata and no key-path work beyond the key path's identity.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            if let stored = object.fastReadColumn(storage: ObjectIdentifier(storageKeyPath)), let value = Value(storedValue: stored) {
                return value
            }
            return slowGet(object, wrappedKeyPath, storageKeyPath)
        }
        set {
            if !object.fastWriteColumn(storage: ObjectIdentifier(storageKeyPath), newValue.storedValue) {
                slowSet(newValue, object, wrappedKeyPath, storageKeyPath)
            }
        }
    }

    /// The first read of a property (which maps its key path), reads on prototypes and on
    /// objects not yet inserted, and the default when a stored value does not convert.
    @usableFromInline
    static func slowGet<Object: ManagedObject>(
        _ object: Object, _ wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        _ storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        let property = object.property(for: storageKeyPath, accessedAs: wrappedKeyPath)
        let stored = object.readColumn(property)
        return Value(storedValue: stored) ?? object[keyPath: storageKeyPath].defaultValue
    }

    /// The write counterpart of ``slowGet(_:_:_:)``.
    @usableFromInline
    static func slowSet<Object: ManagedObject>(
        _ newValue: Value, _ object: Object, _ wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        _ storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) {
        let property = object.property(for: storageKeyPath, accessedAs: wrappedKeyPath)
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
    /// Internal marker used while mapping key paths to properties.
    static let probe = AttributeOptions(rawValue: 1 << 7)
}

/// What the schema builder reads from an `@Attribute` through reflection.
protocol AttributeDeclaration {
    var columnType: ColumnType { get }
    var isOptional: Bool { get }
    var defaultStoredValue: StoredValue { get }
    var declaredOptions: AttributeOptions { get }
}

extension Attribute: AttributeDeclaration {
    var columnType: ColumnType { Value.columnType }
    var isOptional: Bool { Value.isOptional }
    var defaultStoredValue: StoredValue { defaultValue.storedValue }
    var declaredOptions: AttributeOptions { options }
}

extension Attribute: PropertyProbe {
    @usableFromInline
    var isProbed: Bool {
        get { options.contains(.probe) }
        set { if newValue { options.insert(.probe) } else { options.remove(.probe) } }
    }
}
