public import Foundation
import StrataStorage

/// A typed value of an aggregate result: read it with the accessor of its type.
///
/// Counts are ``integer``; sums are ``integer`` for integer attributes and ``double`` for
/// floating-point ones; averages are ``double``; minimum, maximum and group values have the
/// attribute's type (``string``, ``date``, ``bool``, ``uuid``, ``data``, ``integer``, ``double``), and
/// a to-one relationship's group value is ``objectID``. Any attribute type reads back with
/// ``value(as:)``.
///
/// ```swift
/// let total = row.values[0].integer ?? 0
/// let category = row.group[0].value(as: String?.self) ?? nil
/// ```
public struct AggregateValue: Sendable, Hashable, CustomStringConvertible {
    let stored: StoredValue
    let type: ColumnType?
    let reference: ObjectID?

    init(_ stored: StoredValue, type: ColumnType?, storeIdentifier: UUID, target: String?) {
        self.stored = stored
        self.type = type
        if let target, case .integer(let key) = stored, key > 0 {
            reference = ObjectID(storeIdentifier: storeIdentifier, entityName: target, primaryKey: key)
        } else {
            reference = nil
        }
    }

    /// Whether there is no value (a nil group, or a minimum over no values).
    public var isNil: Bool { stored.isNull }

    /// An integer value (counts, sums and values of integer attributes).
    public var integer: Int64? {
        guard type != .bool, type != .reference, case .integer(let value) = stored else { return nil }
        return value
    }

    /// A floating-point value (averages, sums and values of `Double` attributes).
    public var double: Double? {
        guard type != .date, case .real(let value) = stored else { return nil }
        return value
    }

    /// A text value.
    public var string: String? {
        guard case .text(let value) = stored else { return nil }
        return value
    }

    /// A `Bool` attribute's value.
    public var bool: Bool? {
        guard type == .bool, case .integer(let value) = stored else { return nil }
        return value != 0
    }

    /// A `Date` attribute's value.
    public var date: Date? {
        guard type == .date else { return nil }
        return Date(storedValue: stored)
    }

    /// A `UUID` attribute's value.
    public var uuid: UUID? {
        guard type == .uuid else { return nil }
        return UUID(storedValue: stored)
    }

    /// A `Data` attribute's value.
    public var data: Data? {
        guard type == .data, case .blob(let value) = stored else { return nil }
        return value
    }

    /// The object a to-one relationship's group value names.
    public var objectID: ObjectID? { reference }

    /// The value as an attribute type, or nil when it is not of that type (`String?.self` reads
    /// a nil as `.some(nil)`).
    public func value<Value: AttributeValue>(as type: Value.Type) -> Value? {
        Value(storedValue: stored)
    }

    /// The value as text, for logs.
    public var description: String {
        if let reference { return reference.uriString }
        if let date { return date.description }
        if let bool { return bool.description }
        return RecordedValue(stored).description
    }
}
