import Foundation
import Strata

/// `mergeChanges(from:)` brings a long-lived context up to date: objects updated elsewhere are
/// reloaded, objects deleted elsewhere are let go with typed errors, unsaved changes are kept.
enum HistoryMergeChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "merging history refreshes updated objects, lets deleted ones go with typed errors "
                + "and keeps unsaved changes",
            merge)
    ]

    static func merge(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let updated = try await container.makeAccount("Updated", balance: 1)
        let deleted = try await container.makeAccount("Deleted", balance: 2)
        let edited = try await container.makeAccount("Edited", balance: 3)
        let longLived = container.newBackgroundContext(named: "long-lived")
        try await longLived.perform {
            for id in [updated, deleted] { _ = try longLived.existingObject(with: id, as: KitAccount.self).balance }
            try longLived.existingObject(with: edited, as: KitAccount.self).note = "local"
        }
        let start = try await container.currentHistoryToken()
        try await container.performUnitOfWork { context in
            try context.existingObject(with: updated, as: KitAccount.self).balance = 10
            try context.existingObject(with: edited, as: KitAccount.self).balance = 30
            context.delete(try context.existingObject(with: deleted, as: KitAccount.self))
            try context.save()
        }
        let transactions = try await container.history(after: start)

        let outcome = try await longLived.perform {
            let gone = try longLived.existingObject(with: deleted, as: KitAccount.self)
            let result = try longLived.mergeChanges(from: transactions)
            let balance = try longLived.existingObject(with: updated, as: KitAccount.self).balance
            let note = try longLived.existingObject(with: edited, as: KitAccount.self).note
            let lookup = try ConformanceHarness.strataErrors(of: [
                { _ = try longLived.existingObject(with: deleted) }
            ])
            let fetched = try longLived.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.name)
            longLived.rollback()
            gone.balance = 99
            let save = try ConformanceHarness.strataErrors(of: [{ try longLived.save() }])
            return (result, balance, note, lookup[0], fetched, save[0])
        }
        let (result, balance, note, lookup, fetched, save) = outcome
        try kit.expectEqual(result.refreshed, [updated], "objects refreshed")
        try kit.expectEqual(result.deleted, [deleted], "objects let go")
        try kit.expectEqual(result.keptUnsaved, [edited], "objects that kept unsaved changes")
        try kit.expectEqual(balance, 10, "the refreshed object's balance")
        try kit.expectEqual(note, "local", "the unsaved change kept")
        try kit.expectEqual(lookup, .objectNotFound(deleted), "existingObject(with:) of the object deleted elsewhere")
        try kit.expectEqual(fetched, ["Edited", "Updated"], "a fetch after merging")
        try kit.expect(save != nil, "saving a change to the object deleted elsewhere must throw a typed error")
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitAccount>()) }, 2,
            "accounts stored after the refused save")
    }
}
