import Foundation
import Strata

/// Object IDs: temporary, then permanent; URIs round-trip and bad ones give typed errors.
enum IdentityChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("IDs and URIs", "IDs turn permanent at save and URIs round-trip, also as JSON", roundTrip),
        ConformanceCheck("IDs and URIs", "malformed, foreign and unknown URIs give typed errors", badURIs),
        ConformanceCheck("IDs and URIs", "IDs and URIs stay valid across close and reopen", stableAcrossReopen),
    ]

    static func roundTrip(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let context = container.newBackgroundContext()
        let (temporary, permanent) = try await context.perform {
            let account = KitAccount(context: context)
            account.name = "Checking"
            let temporary = account.objectID
            try context.save()
            return (temporary, account.objectID)
        }
        try kit.expect(
            temporary.isTemporary && !permanent.isTemporary && permanent.primaryKey != nil,
            "temporary before save, permanent after")
        try kit.expect(
            permanent.uriString.hasPrefix("strata://\(container.storeIdentifier.uuidString)/Account/p"),
            "URI \(permanent.uriString)")
        try kit.expectEqual(
            try await container.read { try $0.managedObjectID(forURIRepresentation: permanent.uriRepresentation) },
            permanent, "the parsed URI")
        let decoded = try JSONDecoder().decode([ObjectID].self, from: try JSONEncoder().encode([permanent]))
        try kit.expectEqual(decoded, [permanent], "the JSON round trip")
        let name = try await container.read { try lookUp(permanent.uriString, as: KitAccount.self, in: $0).name }
        try kit.expectEqual(name, "Checking", "the account found by URI")
    }

    static func badURIs(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let other = try PersistentContainer(schema: KitModels.schema, engine: try kit.otherConfiguration("other"))
        let store = container.storeIdentifier.uuidString
        let cases: [(String, InvalidURIReason)] = [
            ("", .malformed), ("not a uri", .malformed), ("strata://\(store)/Account", .malformed),
            ("strata://\(store)/Account/p", .malformed), ("strata://\(store)/Account/p0", .malformed),
            ("strata://\(store)/Account/p-3", .malformed), ("strata://\(store)/Account/p01", .malformed),
            ("strata://\(store)/Account/p99999999999999999999", .malformed),
            ("strata://\(store)/Account/x1", .malformed),
            ("strata://\(store)/Acc ount/p1", .malformed), ("strata://not-a-uuid/Account/p1", .malformed),
            ("https://\(store)/Account/p1", .malformed), ("strata://\(store)/Account/p1/extra", .malformed),
            ("strata://\(store)/Nope/p1", .unknownEntity),
            ("strata://\(other.storeIdentifier.uuidString)/Account/p1", .otherStore),
        ]
        for (uri, expected) in cases {
            let error = try await kit.expectStrataError("looking up \(String(reflecting: uri))") {
                _ = try await container.read { try lookUp(uri, as: KitAccount.self, in: $0).objectID }
            }
            guard case .invalidURI(_, let reason) = error else {
                throw kit.fail("\(uri): expected .invalidURI, got \(error)")
            }
            try kit.expectEqual(reason, expected, "the reason for \(String(reflecting: uri))")
        }
        let missing = "strata://\(store)/Account/p12345"
        let error = try await kit.expectStrataError("a well-formed URI of a missing row") {
            _ = try await container.read { try lookUp(missing, as: KitAccount.self, in: $0).objectID }
        }
        let missingID = try await container.read { try $0.managedObjectID(forURIRepresentation: URL(string: missing)!) }
        try kit.expectEqual(error, .objectNotFound(missingID), "the error")
        let accountID = try await container.makeAccount("A")
        let wrong = try await kit.expectStrataError("asking for an account as an entry") {
            _ = try await container.read { try lookUp(accountID.uriString, as: KitEntry.self, in: $0).objectID }
        }
        try kit.expectEqual(
            wrong, .wrongEntity(accountID, expected: KitEntry.entityName),
            "the error for an account asked for as an entry")
        try kit.expect(
            wrong.description.contains("names an Account, not an Entry")
                && wrong.description.contains("Look it up as Account"),
            "the message says what happened and what to do: \(wrong)")
    }

    static func stableAcrossReopen(_ kit: ConformanceHarness) async throws {
        var uri = ""
        var storeID = UUID()
        do {
            let container = try kit.open()
            uri = try await container.makeAccount("Stable", balance: 42).uriString
            storeID = container.storeIdentifier
        }
        let reopened = try kit.open()
        try kit.expectEqual(reopened.storeIdentifier, storeID, "the store identifier after reopening")
        let link = uri
        let balance = try await reopened.read { try lookUp(link, as: KitAccount.self, in: $0).balance }
        try kit.expectEqual(balance, 42, "the balance found by the old URI")
    }

    /// A URI string to an object the way a user goes: `URL(string:)`,
    /// `managedObjectID(forURIRepresentation:)`, then `existingObject(with:as:)`.
    private static func lookUp<Object: ManagedObject>(
        _ uri: String, as type: Object.Type, in context: ObjectContext
    ) throws -> Object {
        guard let url = URL(string: uri) else { throw StrataError.invalidURI(uri, reason: .malformed) }
        return try context.existingObject(with: context.managedObjectID(forURIRepresentation: url), as: type)
    }
}
