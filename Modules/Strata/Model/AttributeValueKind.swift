import StrataStorage

/// How the core treats an attribute's values beyond their storage class: scalars compare and
/// sort by stored value; raw-value types compare for equality by stored value, but their order
/// is the type's own; Codable values are opaque bytes to every engine (only nil is known).
enum AttributeValueKind: Sendable {
    case scalar
    case rawValue
    case codable

    /// The kind of an attribute type, looking through optionals.
    init(_ type: any AttributeValue.Type) {
        if type is any CodableAttribute.Type {
            self = .codable
        } else if type is any RawValueAttribute.Type {
            self = .rawValue
        } else if let optional = type as? any OptionalAttributeValue.Type {
            self = AttributeValueKind(optional.wrappedAttributeType)
        } else {
            self = .scalar
        }
    }
}

extension AttributeValueKind {
    /// The Codable type an attribute type is, or wraps in optionals.
    static func codableType(_ type: any AttributeValue.Type) -> (any CodableAttribute.Type)? {
        if let codable = type as? any CodableAttribute.Type { return codable }
        return (type as? any OptionalAttributeValue.Type).flatMap { codableType($0.wrappedAttributeType) }
    }
}

/// Lets ``AttributeValueKind`` look through `Optional`.
protocol OptionalAttributeValue {
    static var wrappedAttributeType: any AttributeValue.Type { get }
}

extension Optional: OptionalAttributeValue where Wrapped: AttributeValue {
    static var wrappedAttributeType: any AttributeValue.Type { Wrapped.self }
}

/// A column whose stored values may not decode into its attribute's type (a raw-value or
/// Codable attribute): rows are checked as they load, and values as they are saved.
struct CheckedColumn: Sendable {
    let column: Int
    let kind: AttributeValueKind
    /// Why a stored value does not decode, or nil when it does.
    let decodingFailure: @Sendable (StoredValue) -> String?
}

/// What the schema builder reads from an `@Attribute` to find checked columns.
protocol CheckedAttributeWrapper {
    func checkedColumn(_ column: Int) -> CheckedColumn?
}

extension Attribute: CheckedAttributeWrapper {
    func checkedColumn(_ column: Int) -> CheckedColumn? {
        let kind = AttributeValueKind(Value.self)
        if case .scalar = kind { return nil }
        return CheckedColumn(column: column, kind: kind) { stored in
            if Value(storedValue: stored) != nil { return nil }
            return Self.decodingFailure(of: stored)
        }
    }

    /// Why `stored` does not decode into `Value` (only asked after it failed to).
    private static func decodingFailure(of stored: StoredValue) -> String {
        if case .blob = stored, let codable = AttributeValueKind.codableType(Value.self) {
            do {
                _ = try codable.decoded(from: stored)
            } catch {
                return "the JSON \(Self.excerpt(stored)) does not decode into \(Value.self): \(error)"
            }
        }
        return "the stored value \(Self.excerpt(stored)) is not a value of \(Value.self)"
    }

    /// A stored value for a message: JSON as text, cut short.
    private static func excerpt(_ stored: StoredValue) -> String {
        guard case .blob(let data) = stored else { return stored.description }
        let text = String(decoding: data.prefix(200), as: UTF8.self)
        return String(reflecting: data.count > 200 ? text + "…" : text)
    }
}
