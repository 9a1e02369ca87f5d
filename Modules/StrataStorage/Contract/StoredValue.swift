public import Foundation

/// One column value as the storage engines see it.
///
/// Every attribute type maps to one of five storage classes. The core converts between
/// Swift values and `StoredValue`; engines persist `StoredValue`s and never see Swift model types.
///
/// Semantics every engine must keep (the conformance kit checks them):
/// - `.text` compares by UTF-8 bytes, which is the order of Unicode scalar values (binary).
///   `"e\u{301}"` and `"é"` are different values.
/// - `.blob` compares bytewise, then by length.
/// - `.null` sorts before every other value.
/// - `.real` never holds NaN (the core rejects NaN at save); `-0.0` and `0.0` compare equal.
///
/// ```swift
/// let value = StoredValue.text("Checking")
/// value < .text("Savings")   // true
/// ```
public enum StoredValue: Sendable {
    /// No value (an optional attribute or to-one relationship that is nil); sorts first.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A double-precision float, never NaN.
    case real(Double)
    /// A text, compared by UTF-8 bytes.
    case text(String)
    /// Bytes, compared bytewise, then by length.
    case blob(Data)
}

extension StoredValue {
    /// Whether this is `.null`.
    @inlinable public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Orders two values by the documented binary semantics. Values of different storage
    /// classes order as null < integer/real < text < blob; integers and reals compare numerically.
    public static func order(_ lhs: StoredValue, _ rhs: StoredValue) -> ComparisonResult {
        switch (lhs, rhs) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.integer(let a), .integer(let b)):
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.real(let a), .real(let b)):
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.integer(let a), .real(let b)): return compareNumeric(Double(a), b)
        case (.real(let a), .integer(let b)): return compareNumeric(a, Double(b))
        case (.text(let a), .text(let b)): return compareBytes(a, b)
        case (.blob(let a), .blob(let b)): return compareBytes(a, b)
        default: return rank(lhs) < rank(rhs) ? .orderedAscending : .orderedDescending
        }
    }

    private static func compareNumeric(_ a: Double, _ b: Double) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    private static func rank(_ value: StoredValue) -> Int {
        switch value {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        }
    }

    /// Binary (UTF-8 byte) order of two strings, which is Unicode scalar order.
    public static func compareBytes(_ a: String, _ b: String) -> ComparisonResult {
        ByteOrder.compare(a, b)
    }

    /// Bytewise order of two byte strings, shorter first on a common prefix.
    public static func compareBytes(_ a: Data, _ b: Data) -> ComparisonResult {
        ByteOrder.compare(a, b)
    }
}

extension StoredValue: Equatable {
    /// Binary equality: texts are equal only when their UTF-8 bytes are.
    public static func == (lhs: StoredValue, rhs: StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)): a == b
        case (.text(let a), .text(let b)): ByteOrder.equal(a, b)
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }
}

extension StoredValue: Hashable {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .integer(let v):
            hasher.combine(1 as UInt8)
            hasher.combine(v)
        case .real(let v):
            hasher.combine(2 as UInt8)
            hasher.combine(v == 0 ? 0 : v)
        case .text(let v):
            hasher.combine(3 as UInt8)
            ByteOrder.hashUTF8(of: v, into: &hasher)
        case .blob(let v):
            hasher.combine(4 as UInt8)
            hasher.combine(v)
        }
    }
}

extension StoredValue: Comparable {
    public static func < (lhs: StoredValue, rhs: StoredValue) -> Bool {
        order(lhs, rhs) == .orderedAscending
    }
}

extension StoredValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "null"
        case .integer(let v): String(v)
        case .real(let v): String(v)
        case .text(let v): String(reflecting: v)
        case .blob(let v): "<\(v.count) bytes>"
        }
    }
}
