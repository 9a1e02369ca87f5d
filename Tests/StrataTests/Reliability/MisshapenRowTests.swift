import Foundation
import Strata
import StrataTestSupport
import Testing

/// An engine that breaks the contract by returning rows of the wrong length gets a typed error
/// from every path that turns rows into objects — lookups, streamed and in-memory fetches, and
/// the merge after a conflict — never an object that reads past its values.
@Suite("misshapen rows")
struct MisshapenRowTests {
    @Test(
        "rows one value short or long give storeCorrupt from streamed and in-memory fetches and from lookups",
        arguments: EngineKind.allCases)
    func misshapenRows(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let ids = try await Self.seed(store.open())
        let faults = FaultController()
        let container = try PersistentContainer(
            schema: TestModels.schema, engine: .faultInjecting(store.configuration, faults: faults))
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

    /// The merge path: a save under a merging policy that hits a conflict reads the stored row
    /// again (`ObjectContext.merge`) and must refuse a misshapen one, never merge it into the object.
    @Test(
        "rows one value short or long give storeCorrupt from the merge after a conflict, under both merging policies",
        arguments: EngineKind.allCases)
    func misshapenRowsInMerge(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let ids = try await Self.seed(store.open())
        let faults = FaultController()
        let container = try PersistentContainer(
            schema: TestModels.schema, engine: .faultInjecting(store.configuration, faults: faults))
        var balance: Int64 = 0
        for change in [-1, 1] {
            for policy in [MergePolicy.storeWins, .objectWins] {
                let label = "\(kind), \(policy), rows \(change > 0 ? "one value long" : "one value short")"
                faults.clear()
                // This context reads the account whole and changes its note...
                let context = container.newBackgroundContext()
                try await context.perform {
                    context.mergePolicy = policy
                    try context.existingObject(with: ids.account, as: Account.self).note = "mine"
                }
                // ...another one saves the account first, so this context's save conflicts...
                balance += 1
                try await container.performUnitOfWork { [balance] other in
                    try other.existingObject(with: ids.account, as: Account.self).balance = balance
                    try other.save()
                }
                // ...and the engine now returns misshapen rows, so the merge reads one.
                faults.misshapeRows(by: change)
                let commitsBefore = faults.commits
                let outcome: Result<Void, any Error> = try await context.perform {
                    Result { try context.save() }
                }
                faults.clear()
                #expect(
                    faults.commits == commitsBefore + 1,
                    "\(label): the save must reach the engine once and conflict there, so that the merge runs")
                switch outcome {
                case .failure(StrataError.storeCorrupt(let detail, _)):
                    #expect(detail.contains("values; the entity has"), "\(label): \(detail)")
                case .failure(let error):
                    Issue.record("\(label): expected storeCorrupt from the merge, got \(error)")
                case .success:
                    Issue.record("\(label): the save merged a misshapen row and succeeded")
                }
                // Nothing of the refused save reached the store.
                let stored = try await container.performUnitOfWork { [ids] fresh in
                    let account = try fresh.existingObject(with: ids.account, as: Account.self)
                    return "\(account.balance) \(account.note ?? "nil")"
                }
                #expect(stored == "\(balance) nil", "\(label)")
            }
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
