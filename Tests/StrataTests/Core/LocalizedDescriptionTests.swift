import Foundation
import Ledger
import Strata
import StrataTestSupport
import Testing

/// Apps often log `error.localizedDescription`: for Strata's errors it is the message that says
/// what happened and what to do, not Foundation's "The operation could not be completed".
@Suite("localizedDescription of Strata's errors")
struct LocalizedDescriptionTests {
    @Test("a save's unique clash: localizedDescription is the error's description", arguments: EngineKind.allCases)
    func strataError(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        for attempt in 1...2 {
            let context = container.newBackgroundContext()
            do {
                try await context.perform {
                    Account(context: context).name = "Twice"
                    try context.save()
                }
                #expect(attempt == 1, "the second save of the same unique name succeeded")
            } catch {
                #expect(attempt == 2)
                #expect(error is StrataError)
                #expect(error.localizedDescription == String(describing: error))
                #expect(error.localizedDescription.hasPrefix("Uniqueness constraint on Account(name) violated"))
            }
        }
    }

    @Test("a ledger error: localizedDescription is the message the ledger prints")
    func ledgerError() {
        let error: any Error = LedgerError.sameAccount("Checking")
        #expect(error.localizedDescription == String(describing: error))
        #expect(!error.localizedDescription.contains("could not be completed"))
    }
}
