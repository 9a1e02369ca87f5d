import Foundation
import Strata
import Testing

@Suite("object IDs and URIs")
struct ObjectIDTests {
    @Test("IDs are temporary before save, permanent after, and URIs round-trip", arguments: EngineKind.allCases)
    func uriRoundTrip(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let (temporary, permanent) = try await context.perform {
            let account = Account(context: context)
            account.name = "Checking"
            let temporary = account.objectID
            try context.save()
            return (temporary, account.objectID)
        }
        #expect(temporary.isTemporary)
        #expect(!permanent.isTemporary)
        #expect(permanent.primaryKey != nil)
        #expect(permanent.uriString.hasPrefix("strata://\(container.storeIdentifier.uuidString)/Account/p"))
        let parsed = try ObjectID(uriString: permanent.uriString)
        #expect(parsed == permanent)
        let encoded = try JSONEncoder().encode([permanent])
        #expect(try JSONDecoder().decode([ObjectID].self, from: encoded) == [permanent])

        let fresh = container.newBackgroundContext()
        let name = try await fresh.perform {
            try fresh.object(forURIString: permanent.uriString, as: Account.self).name
        }
        #expect(name == "Checking")
    }

    @Test("bad URIs give typed errors", arguments: EngineKind.allCases)
    func badURIs(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let store2 = try TestStore(kind)
        let other = try store2.open()
        let context = container.newBackgroundContext()
        let storeID = container.storeIdentifier.uuidString
        let cases: [(String, InvalidURIReason)] = [
            ("", .malformed),
            ("not a uri", .malformed),
            ("strata://\(storeID)/Account", .malformed),
            ("strata://\(storeID)/Account/p", .malformed),
            ("strata://\(storeID)/Account/p0", .malformed),
            ("strata://\(storeID)/Account/p-3", .malformed),
            ("strata://\(storeID)/Account/p01", .malformed),
            ("strata://\(storeID)/Account/p99999999999999999999", .malformed),
            ("strata://\(storeID)/Account/x1", .malformed),
            ("strata://\(storeID)/Acc ount/p1", .malformed),
            ("strata://not-a-uuid/Account/p1", .malformed),
            ("https://\(storeID)/Account/p1", .malformed),
            ("strata://\(storeID)/Account/p1/extra", .malformed),
            ("strata://\(storeID)/Nope/p1", .unknownEntity),
            ("strata://\(other.storeIdentifier.uuidString)/Account/p1", .otherStore),
        ]
        for (uri, expected) in cases {
            let error = await #expect(throws: StrataError.self, "\(uri)") {
                try await context.perform { _ = try context.object(forURIString: uri, as: Account.self) }
            }
            guard case .invalidURI(_, let reason)? = error else {
                Issue.record("\(uri): expected invalidURI, got \(String(describing: error))")
                continue
            }
            #expect(reason == expected, "\(uri)")
        }
        // A well-formed URI for a row that does not exist.
        let missing = "strata://\(storeID)/Account/p12345"
        let error = await #expect(throws: StrataError.self) {
            try await context.perform { _ = try context.object(forURIString: missing, as: Account.self) }
        }
        guard case .objectNotFound(let id)? = error else {
            Issue.record("expected objectNotFound, got \(String(describing: error))")
            return
        }
        #expect(id.uriString == missing)
        // Asking for the wrong class is a typed error too.
        let accountURI = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "A"
            try context.save()
            return account.objectID.uriString
        }
        await #expect(throws: StrataError.self) {
            try await context.perform { _ = try context.object(forURIString: accountURI, as: Entry.self) }
        }
    }
}
