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

    /// A temporary ID kept past its object's save no longer names it: the message says why and
    /// how to get the permanent ID, not "deleted or never saved".
    @Test(
        "a temporary ID looked up after its object's save: objectNotFound says what a temporary ID names",
        arguments: EngineKind.allCases)
    func temporaryIDAfterSave(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let context = container.newBackgroundContext()
        let (temporary, permanent, message) = try await context.perform {
            let account = Account(context: context)
            account.name = "Saved"
            let temporary = account.objectID
            try context.save()
            do {
                _ = try context.existingObject(with: temporary)
                return (temporary, account.objectID, "found")
            } catch StrataError.objectNotFound(let id) {
                #expect(id == temporary)
                return (temporary, account.objectID, StrataError.objectNotFound(id).localizedDescription)
            }
        }
        #expect(temporary.isTemporary && !permanent.isTemporary)
        #expect(message.contains("a temporary ID names an object only in the context that inserted it"), "\(message)")
        #expect(message.contains("read the object's objectID again"), "\(message)")
    }

    @Test("a ledger error: localizedDescription is the message the ledger prints")
    func ledgerError() {
        let error: any Error = LedgerError.sameAccount("Checking")
        #expect(error.localizedDescription == String(describing: error))
        #expect(!error.localizedDescription.contains("could not be completed"))
    }
}
