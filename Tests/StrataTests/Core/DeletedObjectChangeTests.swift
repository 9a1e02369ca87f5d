import Foundation
import Strata
import Testing

/// A careless caller changes an object after its context saved the object's deletion. The row
/// is gone, so the change can never be written: the next save throws `.misuse` saying so and
/// writes nothing (it used to drop the change without a word, with `hasChanges` true), and
/// `rollback()` drops the change so the context can save again.
@Suite("changes to an object whose deletion was saved")
struct DeletedObjectChangeTests {
    @Test(
        "the next save is misuse naming the object, writes nothing, and rollback recovers",
        arguments: EngineKind.allCases)
    func changeAfterSavedDeletion(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let context = container.newBackgroundContext()
        let (message, names) = try await context.perform { () -> (String, [String]) in
            let doomed = Account(context: context)
            doomed.name = "Doomed"
            let kept = Account(context: context)
            kept.name = "Kept"
            try context.save()
            context.delete(doomed)
            try context.save()
            doomed.name = "Ghost"
            kept.balance = 5
            var message = ""
            do {
                try context.save()
            } catch StrataError.misuse(let detail, _) {
                message = detail
            }
            context.rollback()
            kept.balance = 7
            try context.save()
            return (message, try context.fetch(FetchRequest<Account>()).map(\.name))
        }
        #expect(message.contains("was changed after this context saved its deletion"), "\(message)")
        #expect(names == ["Kept"])
        let reader = container.newBackgroundContext()
        let balances = try await reader.perform { try reader.fetch(FetchRequest<Account>()).map(\.balance) }
        #expect(balances == [7], "the refused save wrote something, or the save after rollback did not")
    }
}
