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

    /// Parses a URI string produced by ``uriString`` without checking it against a schema.
    ///
    /// Package-internal: users parse with ``Strata/ObjectContext/managedObjectID(forURIRepresentation:)``,
    /// which also checks the store and entity, or decode an `ObjectID` with `Codable`.
    /// - Throws: ``StrataError/invalidURI(_:reason:)`` with `.malformed` when the string is not
    ///   a Strata object URI.
    package init(parsing uriString: String) throws(StrataError) {
        let malformed = StrataError.invalidURI(uriString, reason: .malformed)
        let scheme = "strata://"
        guard uriString.utf8.count <= 512, uriString.hasPrefix(scheme) else { throw malformed }
        let parts = uriString.dropFirst(scheme.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let store = UUID(uuidString: String(parts[0])) else { throw malformed }
        let entity = String(parts[1])
        guard EntityName.isValid(entity) else { throw malformed }
        let keyPart = parts[2]
        guard let tag = keyPart.first, keyPart.count > 1 else { throw malformed }
        let digits = keyPart.dropFirst()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), !(digits.count > 1 && digits.first == "0") else {
            throw malformed
        }
        switch tag {
        case "p":
            guard let key = Int64(digits), key > 0 else { throw malformed }
            self.init(storeIdentifier: store, entityName: entity, kind: .permanent(key))
        case "t":
            guard let serial = UInt64(digits) else { throw malformed }
            self.init(storeIdentifier: store, entityName: entity, kind: .temporary(serial))
        default:
            throw malformed
        }
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
    package static func isValid(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 128 else { return false }
        guard first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }
}
