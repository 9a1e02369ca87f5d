/// An attribute type stored as its raw value: declare an enum (or any `RawRepresentable` type)
/// whose raw value is an ``AttributeValue`` and it gets everything from default implementations.
///
/// ```swift
/// enum Status: String, RawValueAttribute {
///     case draft, active, archived
/// }
///
/// final class Book: ManagedObject {
///     @Attribute var status = Status.draft
///     @Attribute var previousStatus: Status?
/// }
///
/// let active = Status.active   // #Predicate takes no case literal: capture the value
/// let activeBooks = #Predicate<Book> { $0.status == active }
/// ```
///
/// The column has the raw value's type (`Status` above is stored as the text `"active"`), so
/// the column can be indexed and made unique, and in predicates:
/// - `==`, `!=`, nil checks and membership in a constant collection (`statuses.contains($0.status)`)
///   run in the engine, comparing raw values;
/// - comparisons of the raw value (`$0.status.rawValue < "b"`, `$0.priority.rawValue >= 2`)
///   run in the engine in the raw value's order;
/// - `<`, `>` and sort descriptors on the enum itself use the type's own `Comparable` order and
///   run in memory, because that order need not be the raw values' order.
///
/// A stored raw value that is not one of the cases (written by another model version, or by
/// hand) makes the fetch or lookup that loads the row throw
/// ``StrataError/undecodableValue(entity:attribute:key:reason:)``; no object is made from it.
public protocol RawValueAttribute: AttributeValue, RawRepresentable where RawValue: AttributeValue {}

extension RawValueAttribute {
    /// The raw value's column type.
    public static var columnType: ColumnType { RawValue.columnType }

    /// The value whose raw value is stored, or nil when the raw value is not one of the type's
    /// values.
    @inlinable
    public init?(storedValue: StoredValue) {
        guard let rawValue = RawValue(storedValue: storedValue) else { return nil }
        self.init(rawValue: rawValue)
    }

    /// The raw value, as stored.
    @inlinable
    public var storedValue: StoredValue { rawValue.storedValue }
}

extension RawValueAttribute {
    /// Whether `keyPath` is `\Self.rawValue` (the predicate compiler reads it as the column).
    static func isRawValueKeyPath(_ keyPath: AnyKeyPath) -> Bool {
        keyPath == \Self.rawValue as AnyKeyPath
    }
}
