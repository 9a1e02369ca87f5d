import Foundation
import Strata
import StrataTestSupport
import Testing

/// The URI lookups an earlier version removed without notice are back, deprecated, and behave as
/// the methods that replace them: code written against them builds (with a warning naming the
/// replacement) and finds the same objects, with the same errors.
@Suite("deprecated URI lookups")
struct DeprecatedURILookupTests {
    @available(*, deprecated, message: "exercises the deprecated URI lookups on purpose")
    @Test(
        "objectID(forURIString:), object(forURIString:as:) and ObjectID(uriString:) forward",
        arguments: EngineKind.allCases)
    func forwarders(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let uri = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "old API"
            try context.save()
            return account.objectID.uriString
        }
        // Another store's URI in lower case: the error names it as given, not as Strata writes it.
        let foreign = "strata://\(UUID().uuidString.lowercased())/Account/p1"
        let outcome = try await container.performUnitOfWork { context in
            let id = try context.objectID(forURIString: uri)
            let account = try context.object(forURIString: uri, as: Account.self)
            let parsed = try ObjectID(uriString: uri)
            var errors: [StrataError] = []
            for attempt in [
                { _ = try context.objectID(forURIString: "not a uri") },
                {
                    _ = try context.object(
                        forURIString: uri.replacingOccurrences(of: "/p", with: "/p9"), as: Account.self)
                },
                { _ = try context.object(forURIString: uri, as: Entry.self) },
                { _ = try ObjectID(uriString: "strata://nothing") },
                { _ = try context.objectID(forURIString: foreign) },
            ] as [() throws -> Void] {
                do {
                    try attempt()
                } catch let error as StrataError {
                    errors.append(error)
                }
            }
            return (id, account.name, account.objectID, parsed, errors)
        }
        #expect(outcome.0.uriString == uri)
        #expect(outcome.1 == "old API")
        #expect(outcome.2 == outcome.0 && outcome.3 == outcome.0)
        #expect(outcome.4.count == 5, "every bad lookup threw a StrataError: \(outcome.4)")
        guard outcome.4.count == 5 else { return }
        #expect(outcome.4[0] == .invalidURI("not a uri", reason: .malformed))
        if case .objectNotFound = outcome.4[1] {} else { Issue.record("a missing key: \(outcome.4[1])") }
        if case .wrongEntity = outcome.4[2] {} else { Issue.record("the wrong class: \(outcome.4[2])") }
        if case .invalidURI(_, .malformed) = outcome.4[3] {} else { Issue.record("a bad URI: \(outcome.4[3])") }
        #expect(outcome.4[4] == .invalidURI(foreign, reason: .otherStore))
    }
}
