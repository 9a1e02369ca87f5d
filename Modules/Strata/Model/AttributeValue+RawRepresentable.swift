import StrataStorage

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
///   run in the engine in the raw value's order when the type is `CaseIterable` (which is how
///   Strata tells that the key path reads the raw value), in memory otherwise;
/// - `<`, `>` and sort descriptors on the enum itself use the type's own `Comparable` order and
///   run in memory, because that order need not be the raw values' order.
///
/// A stored raw value that is not one of the cases (written by another model version, or by
/// hand) makes the fetch or lookup that loads the row throw
/// ``StrataStorage/StrataError/undecodableValue(entity:attribute:key:reason:)``; no object is made from it.
public protocol RawValueAttribute: AttributeValue, RawRepresentable where RawValue: AttributeValue {}

extension RawValueAttribute {
    /// The raw value's column type.
    public static var attributeColumnType: AttributeColumnType {
        AttributeColumnType(RawValue.attributeColumnType.type)
    }

    /// The value whose raw value is stored, or nil when the raw value is not one of the type's
    /// values.
    @inlinable
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard let rawValue = RawValue(storedValue: storedValue) else { return nil }
        self.init(rawValue: rawValue)
    }

    /// The raw value, as stored.
    @inlinable
    public var storedAttributeValue: StoredAttributeValue { StoredAttributeValue(rawValue.storedValue) }
}

extension RawValueAttribute {
    /// Whether `keyPath` reads the raw value (`\Status.rawValue`): the predicate compiler then
    /// reads it as the column itself.
    ///
    /// A key path formed in user code (the concrete property) never equals one formed here (the
    /// protocol requirement), and Linux builds keep no property names, so it is recognised by
    /// what it reads: for a `CaseIterable` type, the raw value of every case. For other types
    /// it is not recognised, which only leaves the comparison to be evaluated in memory.
    static func isRawValueKeyPath(_ keyPath: AnyKeyPath) -> Bool {
        guard Swift.type(of: keyPath).rootType == Self.self, Swift.type(of: keyPath).valueType == RawValue.self,
            let iterable = Self.self as? any CaseIterable.Type
        else { return false }
        let values = everyCase(of: iterable).compactMap { $0 as? Self }
        return !values.isEmpty
            && values.allSatisfy { value in
                (value[keyPath: keyPath] as? RawValue)?.storedValue == value.rawValue.storedValue
            }
    }
}

/// Every case of a `CaseIterable` type, as `Any`.
private func everyCase<T: CaseIterable>(of type: T.Type) -> [Any] {
    type.allCases.map { $0 }
}
