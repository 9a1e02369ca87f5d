import Foundation
import StrataStorage

/// An attribute type stored as JSON: declare a `Codable` struct (or enum, or class) as a
/// `CodableAttribute` and it gets everything from default implementations. Arrays of `Codable`
/// attribute values (`[String]`, `[Address]`) are attributes as they are.
///
/// ```swift
/// struct Address: CodableAttribute, Equatable {
///     var street: String
///     var city: String
/// }
///
/// final class Customer: ManagedObject {
///     @Attribute var address: Address?
///     @Attribute var tags: [String] = []
/// }
/// ```
///
/// The encoding: `JSONEncoder` with `.sortedKeys` and its default strategies (dates as seconds
/// since 2001, data as Base64), in a `.data` (blob) column, so that encoding a value twice
/// gives the same bytes. Dictionaries keyed by strings or integers encode with sorted keys;
/// the order of a `Set` is not fixed, so two equal sets may store different bytes.
///
/// What runs where in predicates: nil checks (`$0.address == nil`) run in the engine; everything
/// else (`$0.address == home`, `$0.address?.city == "Oslo"`, `$0.tags.contains("x")`) is
/// evaluated in memory by Foundation, with the type's own `==`. Sort descriptors on the value
/// sort in memory too. Such attributes cannot be `.unique`: equal values need not store equal
/// bytes.
///
/// A value that does not encode (a `Double` field holding NaN or infinity) makes `save()` throw
/// ``StrataStorage/StrataError/validation(_:)``. Stored JSON that does not decode into the type (written by
/// another model version, or by hand) makes the fetch or lookup that loads the row throw
/// ``StrataStorage/StrataError/undecodableValue(entity:attribute:key:reason:)``; no object is made from it.
public protocol CodableAttribute: AttributeValue, Codable {}

extension CodableAttribute {
    /// Codable values are stored in a blob column.
    public static var attributeColumnType: AttributeColumnType { AttributeColumnType(.data) }

    /// The value decoded from stored JSON, or nil when the stored value does not decode.
    public init?(storedAttributeValue: StoredAttributeValue) {
        let storedValue = storedAttributeValue.value
        guard let value = try? Self.decoded(from: storedValue) else { return nil }
        self = value
    }

    /// The value's JSON (see ``CodableAttribute``); no bytes when it cannot be encoded, which
    /// `save()` refuses.
    public var storedAttributeValue: StoredAttributeValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return StoredAttributeValue(.blob((try? encoder.encode(self)) ?? Data()))
    }

    /// Decodes a stored value, throwing why it does not decode.
    static func decoded(from storedValue: StoredValue) throws -> Self {
        guard case .blob(let data) = storedValue else {
            throw DecodingError.typeMismatch(
                Self.self, .init(codingPath: [], debugDescription: "the stored value is \(storedValue), not JSON bytes")
            )
        }
        return try JSONDecoder().decode(Self.self, from: data)
    }
}

/// An array of attribute values that are `Codable` (`[String]`, `[Address]`, `[Int64?]`) is
/// stored as a JSON array.
extension Array: AttributeValue, CodableAttribute where Element: AttributeValue & Codable {}
