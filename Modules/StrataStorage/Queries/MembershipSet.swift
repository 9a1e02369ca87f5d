import Foundation

/// The constants of a ``Filter/isIn(column:values:)`` leaf in hashed sets, answering exactly as
/// the reference does: a value is a member when it is not null and
/// `StoredValue.order(value, constant) == .orderedSame` for some constant.
///
/// That rule, spelled out per storage class, is what the sets reproduce:
/// - an integer equals an integer constant of the same value, and a real constant `r` when
///   `Double(integer) == r` (the conversion rounds above 2^53, as `order` does);
/// - a real equals a real constant by `==` (so `-0.0` equals `0.0`), and an integer constant
///   `i` when `real == Double(i)`; a NaN equals nothing, and a NaN constant matches nothing;
/// - a text equals a text constant with the same UTF-8 bytes (not Swift's `==`, which treats
///   canonically equivalent strings as equal); a blob equals a blob with the same bytes;
/// - null, and values of different storage classes, are never equal.
///
/// ```swift
/// let members = MembershipSet([.integer(3), .real(0.5), .text("é")])
/// members.contains(.real(3))      // true: 3.0 == Double(3)
/// members.contains(.text("e\u{301}")) // false: other bytes
/// ```
package struct MembershipSet: Sendable {
    private var integers: Set<Int64> = []
    /// The real constants (no NaN, `-0.0` stored as `0.0`).
    private var reals: Set<Double> = []
    /// The real constants and every integer constant converted to `Double`.
    private var numbers: Set<Double> = []
    private var texts: Set<UTF8Bytes> = []
    private var blobs: Set<Data> = []

    /// The sets for `constants`; null and NaN constants match nothing and are left out.
    package init(_ constants: [StoredValue]) {
        for constant in constants {
            switch constant {
            case .null:
                continue
            case .integer(let integer):
                integers.insert(integer)
                numbers.insert(Double(integer))
            case .real(let real):
                guard !real.isNaN else { continue }
                reals.insert(Self.normalized(real))
                numbers.insert(Self.normalized(real))
            case .text(let text):
                texts.insert(UTF8Bytes(text))
            case .blob(let blob):
                blobs.insert(blob)
            }
        }
    }

    /// Whether `value` equals one of the constants, by the reference rule above.
    package func contains(_ value: StoredValue) -> Bool {
        switch value {
        case .null:
            return false
        case .integer(let integer):
            return integers.contains(integer) || reals.contains(Double(integer))
        case .real(let real):
            return !real.isNaN && numbers.contains(Self.normalized(real))
        case .text(let text):
            return texts.contains(UTF8Bytes(text))
        case .blob(let blob):
            return blobs.contains(blob)
        }
    }

    /// `0.0` for either zero, so that `-0.0` and `0.0` (equal by `==`) share one entry.
    private static func normalized(_ real: Double) -> Double {
        real == 0 ? 0 : real
    }
}

/// A string hashed and compared by its UTF-8 bytes, the order ``StoredValue/order(_:_:)`` uses.
private struct UTF8Bytes: Hashable, Sendable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: UTF8Bytes, rhs: UTF8Bytes) -> Bool {
        ByteOrder.equal(lhs.text, rhs.text)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        ByteOrder.hashUTF8(of: text, into: &hasher)
    }
}
