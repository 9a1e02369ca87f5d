import Foundation

/// An attribute default as a store records it: a ``StoredValue`` that encodes as readable JSON.
///
/// It encodes as an object with one key naming the storage class: `{"integer":0}`,
/// `{"real":1.5}`, `{"text":"USD"}`, `{"blob":"AAE="}` (base64), `{"null":true}`. Infinite
/// reals encode as the strings `"inf"` and `"-inf"`.
///
/// ```swift
/// let value = RecordedValue(.text("USD"))   // {"text":"USD"}
/// ```
public struct RecordedValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The stored value.
    public var value: StoredValue

    /// A recorded value.
    public init(_ value: StoredValue) { self.value = value }

    private enum Key: String, CodingKey { case null, integer, real, text, blob }

    /// Decodes the one-key form.
    /// - Throws: `DecodingError` when the object has no known key or a wrong payload.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        if container.contains(.integer) {
            value = .integer(try container.decode(Int64.self, forKey: .integer))
        } else if container.contains(.real) {
            if let text = try? container.decode(String.self, forKey: .real) {
                switch text {
                case "inf": value = .real(.infinity)
                case "-inf": value = .real(-.infinity)
                default:
                    throw DecodingError.dataCorruptedError(
                        forKey: .real, in: container, debugDescription: "\(text) is not a real")
                }
            } else {
                value = .real(try container.decode(Double.self, forKey: .real))
            }
        } else if container.contains(.text) {
            value = .text(try container.decode(String.self, forKey: .text))
        } else if container.contains(.blob) {
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: .blob)) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .blob, in: container, debugDescription: "the blob is not base64")
            }
            value = .blob(data)
        } else if container.contains(.null) {
            value = .null
        } else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "no storage class key"))
        }
    }

    /// Encodes the one-key form.
    /// - Throws: `EncodingError` from the encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch value {
        case .null: try container.encode(true, forKey: .null)
        case .integer(let v): try container.encode(v, forKey: .integer)
        case .real(let v) where v.isInfinite: try container.encode(v > 0 ? "inf" : "-inf", forKey: .real)
        case .real(let v): try container.encode(v, forKey: .real)
        case .text(let v): try container.encode(v, forKey: .text)
        case .blob(let v): try container.encode(v.base64EncodedString(), forKey: .blob)
        }
    }

    /// The value as a reader would write it: `nil`, `0`, `1.5`, `"USD"`, `4 bytes`.
    public var description: String {
        switch value {
        case .null: "nil"
        case .integer(let v): "\(v)"
        case .real(let v): "\(v)"
        case .text(let v): String(reflecting: v)
        case .blob(let v): "\(v.count) bytes"
        }
    }

    /// Equal when the stored values are the same value and class (`0` and `0.0` differ here).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs.value, rhs.value) {
        case (.null, .null): true
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }

    /// Hashes the class and value.
    public func hash(into hasher: inout Hasher) {
        switch value {
        case .null: hasher.combine(0)
        case .integer(let v):
            hasher.combine(1)
            hasher.combine(v)
        case .real(let v):
            hasher.combine(2)
            hasher.combine(v)
        case .text(let v):
            hasher.combine(3)
            hasher.combine(v)
        case .blob(let v):
            hasher.combine(4)
            hasher.combine(v)
        }
    }
}
