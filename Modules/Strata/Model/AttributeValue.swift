public import Foundation
public import StrataStorage

/// A Swift type an ``Attribute`` can hold: `Bool`, `Int`, `Int64`, `Double`, `String`, `Date`,
/// `Data`, `UUID`, raw-value enums (``RawValueAttribute``), `Codable` values
/// (``CodableAttribute``, and arrays of `Codable` attribute values), and the optional form of each.
///
/// Declare your own types through ``RawValueAttribute`` or ``CodableAttribute``, which give
/// every requirement a default:
///
/// ```swift
/// enum Status: String, RawValueAttribute { case draft, active }
/// struct Address: CodableAttribute { var city: String }
/// ```
///
/// Conversions are exact: dates keep their full `Double` precision
/// (`timeIntervalSinceReferenceDate`), UUIDs are 16 bytes.
///
/// The requirements speak of ``StoredAttributeValue`` and ``AttributeColumnType``, opaque types
/// that only Strata makes and reads: you never implement or call them.
public protocol AttributeValue: Sendable {
    /// The kind of column this Swift type is stored in.
    static var attributeColumnType: AttributeColumnType { get }
    /// Whether the type admits nil.
    static var isOptional: Bool { get }
    /// Converts a stored value back; nil when the stored value has the wrong shape.
    init?(storedAttributeValue: StoredAttributeValue)
    /// The value as stored.
    var storedAttributeValue: StoredAttributeValue { get }
}

extension AttributeValue {
    /// Not optional: only `Optional` says otherwise.
    public static var isOptional: Bool { false }

    /// The engine-level column type (for the schema builder and the predicate compiler).
    package static var columnType: ColumnType { attributeColumnType.type }

    /// The engine-level value, as the accessors and the predicate compiler use it.
    @inlinable @inline(__always)
    package var storedValue: StoredValue { storedAttributeValue.value }

    /// Converts an engine-level value back; nil when it has the wrong shape.
    @inlinable @inline(__always)
    package init?(storedValue: StoredValue) { self.init(storedAttributeValue: StoredAttributeValue(storedValue)) }
}

extension Bool: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.bool) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard case .integer(let v) = storedValue, v == 0 || v == 1 else { return nil }
        self = v == 1
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(.integer(self ? 1 : 0)) }
}

extension Int: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.int) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard case .integer(let v) = storedValue, let value = Int(exactly: v) else { return nil }
        self = value
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(.integer(Int64(self))) }
}

extension Int64: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.int64) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard case .integer(let v) = storedValue else { return nil }
        self = v
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(.integer(self)) }
}

extension Double: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.double) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        switch storedValue {
        case .real(let v): self = v
        case .integer(let v): self = Double(v)
        default: return nil
        }
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(.real(self)) }
}

extension String: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.string) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard case .text(let v) = storedValue else { return nil }
        self = v
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(.text(self)) }
}

extension Date: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.date) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        switch storedValue {
        case .real(let v): self = Date(timeIntervalSinceReferenceDate: v)
        case .integer(let v): self = Date(timeIntervalSinceReferenceDate: Double(v))
        default: return nil
        }
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue {
        StoredAttributeValue(.real(timeIntervalSinceReferenceDate))
    }
}

extension Data: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.data) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard case .blob(let v) = storedValue else { return nil }
        self = v
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(.blob(self)) }
}

extension UUID: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.uuid) }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard case .blob(let v) = storedValue, v.count == 16 else { return nil }
        let b = v.startIndex
        self = UUID(
            uuid: (
                v[b], v[b + 1], v[b + 2], v[b + 3], v[b + 4], v[b + 5], v[b + 6], v[b + 7],
                v[b + 8], v[b + 9], v[b + 10], v[b + 11], v[b + 12], v[b + 13], v[b + 14], v[b + 15]
            ))
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue {
        let u = uuid
        return StoredAttributeValue(
            .blob(Data([u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15])))
    }
}

extension Optional: AttributeValue where Wrapped: AttributeValue {
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(Wrapped.attributeColumnType.type) }
    public static var isOptional: Bool { true }
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        if case .null = storedValue {
            self = .none
        } else if let value = Wrapped(storedValue: storedValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(self?.storedValue ?? .null) }
}
