import Foundation
import Strata
import StrataTestSupport
import Testing

/// An engine that breaks the contract by returning rows of the wrong length gets a typed error
/// from every path that turns rows into objects, never an object that reads past its values.
@Suite("misshapen rows")
struct MisshapenRowTests {
    @Test("rows one value short or long give storeCorrupt from streamed and in-memory fetches and from lookups", arguments: EngineKind.allCases)
    func misshapenRows(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let ids = try await Self.seed(store.open())
        let faults = FaultController()
        let container = try PersistentContainer(schema: TestModels.schema, engine: .faultInjecting(store.configuration, faults: faults))
        for change in [-1, 1] {
            faults.misshapeRows(by: change)
            let context = container.newBackgroundContext()
            let errors = try await context.perform {
                var errors: [String] = []
                func expectCorrupt(_ what: String, _ body: () throws -> Void) {
                    do {
                        try body()
                        errors.append("\(what): no error")
                    } catch StrataError.storeCorrupt {
                    } catch {
                        errors.append("\(what): \(error)")
                    }
                }
                expectCorrupt("lookup") { _ = try context.existingObject(with: ids.entry, as: Entry.self) }
                expectCorrupt("fetch") { _ = try context.fetch(FetchRequest<Account>()) }
                // With an unsaved entry, a fetch of entries merges the store's rows with it in memory.
                Entry(context: context).memo = "unsaved"
                expectCorrupt("fetch merged with unsaved objects") { _ = try context.fetch(FetchRequest<Entry>()) }
                return errors
            }
            #expect(errors.isEmpty, "\(kind), rows \(change > 0 ? "one value long" : "one value short"): \(errors)")
        }
    }

    static func seed(_ container: PersistentContainer) async throws -> (account: ObjectID, entry: ObjectID) {
        let context = container.newBackgroundContext()
        return try await context.perform {
            let account = Account(context: context)
            account.name = "Checking"
            let entry = Entry(context: context)
            entry.memo = "a memo long enough for the heap"
            entry.account = account
            try context.save()
            return (account.objectID, entry.objectID)
        }
    }
}
