public import Foundation

/// A stable, `Sendable` reference to one object in one store: the value that crosses
/// `perform` boundaries in place of the object itself.
///
/// An ID is temporary while its object is unsaved and permanent after the first save (or
/// ``Strata/ObjectContext/obtainPermanentIDs(for:)``). Its URI string names the store, the entity and
/// the primary key, and parses back with ``Strata/ObjectContext/managedObjectID(forURIRepresentation:)``.
///
/// ```swift
/// let id: ObjectID = try await context.perform { account.objectID }
/// let uri = id.uriString                 // "strata://8C1F…/Account/p42"
/// ```
public struct ObjectID: Sendable, Hashable {
    /// The UUID of the store the object belongs to.
    public let storeIdentifier: UUID
    /// The entity (model class) name.
    public let entityName: String
    package let kind: Kind

    package enum Kind: Sendable, Hashable {
        case permanent(Int64)
        case temporary(UInt64)
    }

    package init(storeIdentifier: UUID, entityName: String, kind: Kind) {
        self.storeIdentifier = storeIdentifier
        self.entityName = entityName
        self.kind = kind
    }

    /// A permanent ID. Engines use this to name rows in ``VersionConflict``s.
    /// - Precondition: `primaryKey > 0`.
    public init(storeIdentifier: UUID, entityName: String, primaryKey: Int64) {
        precondition(primaryKey > 0, "primary keys are positive")
        self.init(storeIdentifier: storeIdentifier, entityName: entityName, kind: .permanent(primaryKey))
    }

    /// Whether the object has not been saved yet.
    public var isTemporary: Bool {
        if case .temporary = kind { return true }
        return false
    }

    /// The primary key, for permanent IDs.
    public var primaryKey: Int64? {
        if case .permanent(let key) = kind { return key }
        return nil
    }

    /// The URI form: `strata://<store-uuid>/<Entity>/p<key>` (or `t<n>` while temporary).
    public var uriString: String {
        let store = Self.uuidText(storeIdentifier)
        switch kind {
        case .permanent(let key): return "strata://\(store)/\(entityName)/p\(key)"
        case .temporary(let serial): return "strata://\(store)/\(entityName)/t\(serial)"
        }
    }

    /// `uuid.uuidString` (upper-case hex, 8-4-4-4-12), formatted directly: services return URIs
    /// for every object they hand out, and Foundation formats UUIDs through `snprintf`.
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    package static func uuidText(_ uuid: UUID) -> String {
        let hex = hexDigits
        let u = uuid.uuid
        let bytes = [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The URI as a `URL`.
    public var uriRepresentation: URL {
        // Only ASCII letters, digits, '-', '/', ':' and '_' occur, so this always parses.
        URL(string: uriString)!
    }
}

extension ObjectID: Codable {
    /// Encodes as the URI string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriString)
    }

    /// Decodes from a URI string.
    ///
    /// ```swift
    /// let id = try JSONDecoder().decode(ObjectID.self, from: Data(#""strata://…/Account/p42""#.utf8))
    /// ```
    /// - Throws: `DecodingError.dataCorrupted` whose context's `underlyingError` is the
    ///   ``StrataError/invalidURI(_:reason:)`` (its description is the context's `debugDescription`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        do {
            try self.init(parsing: string)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: container.codingPath, debugDescription: error.description, underlyingError: error))
        }
    }
}

extension ObjectID: CustomStringConvertible {
    public var description: String { uriString }
}

/// Rules for entity and property names (they become table and column names).
package enum EntityName {
    /// 1 to 128 bytes: an ASCII letter or `_`, then ASCII letters, digits and `_`.
    package static func isValid(_ name: String) -> Bool {
        isValid(name.utf8.span)
    }

    /// ``isValid(_:)`` over a name's UTF-8 bytes (any byte of a non-ASCII character fails).
    package static func isValid(_ bytes: Span<UInt8>) -> Bool {
        guard bytes.count >= 1, bytes.count <= 128, isLetterOrUnderscore(bytes[0]) else { return false }
        for index in 1..<bytes.count {
            let byte = bytes[index]
            guard isLetterOrUnderscore(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) else {
                return false
            }
        }
        return true
    }

    private static func isLetterOrUnderscore(_ byte: UInt8) -> Bool {
        let folded = byte | 0x20
        return byte == UInt8(ascii: "_") || (folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "z"))
    }
}
