import Foundation
import Strata
import StrataTestSupport

/// The context contract the engines must support: `perform` off the main thread, unsaved
/// state that dies with its context, rollback, reset, early permanent IDs, retried units of work.
enum ContextChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Contexts", "perform never runs on the main thread, even when called from the main actor", offMain),
        ConformanceCheck(
            "Contexts", "a failed operation's unsaved changes do not reach a fresh context", failedOperation),
        ConformanceCheck("Contexts", "rollback discards changes and reset forgets every object", rollbackAndReset),
        ConformanceCheck(
            "Contexts", "an object inserted and deleted before a save is no change, and the save writes nothing",
            insertedThenDeleted),
        ConformanceCheck("Contexts", "obtainPermanentIDs gives unsaved objects their final IDs", permanentIDs),
        ConformanceCheck("Contexts", "performUnitOfWork re-runs conflicting work until every increment lands", retries),
    ]

    struct Boom: Error {}

    static func offMain(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let context = container.newBackgroundContext()
        let fromTask = try await context.perform { MainQueue.isCurrent }
        let fromMain = try await Task { @MainActor in
            precondition(MainQueue.isCurrent, "the caller must be on the main actor")
            return try await context.perform { MainQueue.isCurrent }
        }.value
        try kit.expect(
            !fromTask && !fromMain,
            "perform ran on the main thread (from a task: \(fromTask), from the main actor: \(fromMain))")
        try kit.expect(
            try await context.perform { context.isInsidePerform } && !context.isInsidePerform,
            "isInsidePerform is true only inside perform")
    }

    static func failedOperation(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Checking", balance: 100)
        let failing = container.newBackgroundContext()
        do {
            try await failing.perform {
                try failing.existingObject(with: id, as: KitAccount.self).balance = 999_999
                KitAccount(context: failing).name = "Ghost"
                throw Boom()
            }
        } catch is Boom {}
        let (balance, names, dirty) = try await container.read { context in
            (
                try context.existingObject(with: id, as: KitAccount.self).balance,
                try context.fetch(FetchRequest<KitAccount>()).map(\.name), context.hasChanges
            )
        }
        try kit.expectEqual(balance, 100, "balance seen by a fresh context")
        try kit.expectEqual(names, ["Checking"], "accounts seen by a fresh context")
        try kit.expect(!dirty, "a fresh context starts without changes")
    }

    static func rollbackAndReset(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Kept", balance: 5)
        let outcome = try await container.read { context in
            let account = try context.existingObject(with: id, as: KitAccount.self)
            account.balance = 99
            KitAccount(context: context).name = "Dropped"
            var log = [context.insertedObjects.count == 1, context.updatedObjects.count == 1]
            context.rollback()
            log += [account.balance == 5, !context.hasChanges, try context.count(for: FetchRequest<KitAccount>()) == 1]
            context.delete(account)
            log.append(context.deletedObjects.count == 1)
            context.rollback()
            log.append(!account.isDeleted && !context.hasChanges)
            context.reset()
            let reloaded = try context.existingObject(with: id, as: KitAccount.self)
            log += [reloaded !== account, reloaded.balance == 5]
            return log
        }
        try kit.expect(!outcome.contains(false), "rollback/reset steps: \(outcome)")
    }

    static func insertedThenDeleted(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let saved = try await container.makeAccount("Saved", balance: 1)
        let context = container.newBackgroundContext()
        let (afterDelete, afterSave) = try await context.perform {
            let account = KitAccount(context: context)
            account.name = "Never written"
            let inserted = [
                account.isInserted, account.hasChanges, context.insertedObjects.count == 1, context.hasChanges,
            ]
            context.delete(account)
            let afterDelete =
                inserted + [
                    !account.isInserted, !account.hasChanges, account.isDeleted, context.insertedObjects.isEmpty,
                    context.deletedObjects.isEmpty, !context.hasChanges,
                ]
            // Set-based work does not count it as a change to the entity: neither a read nor a batch is refused.
            let total = try context.sum(\.balance, of: FetchRequest<KitAccount>())
            try context.batchUpdate(KitAccount.self, where: nil, set: [.add(\.balance, total)])
            try context.save()
            let balance = try context.existingObject(with: saved, as: KitAccount.self).balance
            return (afterDelete, "\(try context.count(for: FetchRequest<KitAccount>())) \(balance)")
        }
        try kit.expectEqual(
            afterDelete, Array(repeating: true, count: 10),
            "the object's isInserted and hasChanges, the context's insertedObjects and hasChanges before the "
                + "delete, then the object's isInserted, hasChanges and isDeleted, the context's insertedObjects, "
                + "deletedObjects and hasChanges after it")
        try kit.expectEqual(afterSave, "1 2", "rows after the save, and the batch-updated balance")
    }

    static func permanentIDs(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (before, early, found, after) = try await container.read { context in
            let account = KitAccount(context: context)
            account.name = "Early"
            let before = account.objectID
            try context.obtainPermanentIDs(for: [account])
            let early = account.objectID
            let found = try context.existingObject(with: early) === account
            try context.save()
            return (before, early, found, account.objectID)
        }
        try kit.expect(
            before.isTemporary && !early.isTemporary && found && early == after,
            "temporary \(before), early \(early), found \(found), after save \(after)")
    }

    static func retries(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Counter")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<25 {
                        // Eight writers on one row is the worst case: give each unit of work a
                        // budget that makes running out practically impossible.
                        try await container.performUnitOfWork(retries: RetryPolicy(maxRetries: 200)) { context in
                            try context.existingObject(with: id, as: KitAccount.self).balance += 1
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try kit.expectEqual(
            try await container.read { try $0.existingObject(with: id, as: KitAccount.self).balance }, 200,
            "the counter")
    }
}
