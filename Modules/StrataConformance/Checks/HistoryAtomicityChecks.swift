import Foundation
import Strata

/// History is written in the commit's own transaction: a save that fails, wherever it fails,
/// appends nothing; a container that records no history appends nothing either.
enum HistoryAtomicityChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "saves refused by a unique clash, a version conflict, a deny rule or a closed container append no history",
            failedSaves),
        ConformanceCheck(
            HistoryChecks.group, "a 400-row save that fails on its last stale row appends no history", failsLate),
        ConformanceCheck(
            HistoryChecks.group,
            "a container with recordsHistory: false appends nothing; one with it on still sees the others' commits",
            historyOff),
    ]

    /// The history after `start`, as author + summary lines.
    static func recorded(_ container: PersistentContainer, after start: HistoryToken) async throws -> [String] {
        try await container.history(after: start).map { "\($0.author ?? "nil"): \($0.summary)" }
    }

    static func failedSaves(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let taken = try await container.makeAccount("Taken")
        let start = try await container.currentHistoryToken()

        let clash = try await kit.expectStrataError("a save whose name clashes with a stored account") {
            try await container.performUnitOfWork { context in
                KitAccount(context: context).name = "Taken"
                try context.save()
            }
        }
        try kit.expectEqual(
            clash.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "the clash's error")
        try kit.expectEqual(try await recorded(container, after: start), [], "history after the unique clash")

        let stale = container.newBackgroundContext(named: "stale")
        try await stale.perform { _ = try stale.existingObject(with: taken, as: KitAccount.self).balance }
        try await container.performUnitOfWork { context in
            try context.existingObject(with: taken, as: KitAccount.self).balance = 1
            try context.save()
        }
        let afterWinner = try await container.currentHistoryToken()
        try kit.expectEqual(try await recorded(container, after: start).count, 1, "transactions after the winner")
        let conflict = try await kit.expectStrataError("a save of a row another context changed first") {
            try await stale.perform {
                try stale.existingObject(with: taken, as: KitAccount.self).balance = 2
                try stale.save()
            }
        }
        guard case .conflict = conflict else { throw kit.fail("the stale save: expected .conflict, got \(conflict)") }
        try kit.expectEqual(try await recorded(container, after: afterWinner), [], "history after the conflict")

        try await container.performUnitOfWork { context in
            let entry = KitEntry(context: context)
            entry.account = try context.existingObject(with: taken, as: KitAccount.self)
            try context.save()
        }
        let afterEntry = try await container.currentHistoryToken()
        let denied = try await kit.expectStrataError("deleting an account that still has entries (deny rule)") {
            try await container.performUnitOfWork { context in
                context.delete(try context.existingObject(with: taken, as: KitAccount.self))
                try context.save()
            }
        }
        guard case .validation = denied else {
            throw kit.fail("the denied delete: expected .validation, got \(denied)")
        }
        try kit.expectEqual(try await recorded(container, after: afterEntry), [], "history after the denied delete")

        let late = container.newBackgroundContext(named: "late")
        try await late.perform {
            KitAccount(context: late).name = "Unsaved"
        }
        container.close()
        let closed = try await kit.expectStrataError("a save after the container was closed") {
            try await late.perform { try late.save() }
        }
        guard case .misuse = closed else { throw kit.fail("the save after close: expected .misuse, got \(closed)") }
        let reopened = try kit.open()
        try kit.expectEqual(
            try await reopened.currentHistoryToken(), afterEntry, "the history token after every failed save")
        try kit.expectEqual(
            try await reopened.read { try $0.count(for: FetchRequest<KitAccount>()) }, 1, "accounts stored")
    }

    static func failsLate(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        var start = HistoryToken.beginning
        try await AtomicityChecks.failLargeStaleSave(kit, in: container) {
            start = try await container.currentHistoryToken()
        }
        try kit.expectEqual(try await container.currentHistoryToken(), start, "the history token after the failure")
        try kit.expectEqual(try await recorded(container, after: start), [], "history after the failed save")
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitEntry>()) }, 0, "entries stored")
    }

    static func historyOff(_ kit: ConformanceHarness) async throws {
        let recording = try kit.open()
        let silent = try PersistentContainer(schema: KitModels.schema, engine: kit.configuration, recordsHistory: false)
        try kit.expect(!silent.recordsHistory, "a container opened with recordsHistory: false says it records none")
        let start = try await recording.currentHistoryToken()
        let receiving = kit.receive(2, from: recording.changes(after: start))
        let silentID = try await silent.makeAccount("Silent")
        try await silent.performUnitOfWork { context in
            try context.existingObject(with: silentID, as: KitAccount.self).balance = 5
            try context.save()
        }
        try kit.expectEqual(try await silent.currentHistoryToken(), start, "the token after the silent saves")
        let loudID = try await recording.makeAccount("Loud")
        let otherRecording = try kit.open()
        let otherID = try await otherRecording.makeAccount("Other")
        let received = try await kit.value(of: receiving, "receiving the recorded saves")
        try kit.expectEqual(
            received.map { $0.changes.map(\.objectID) }, [[loudID], [otherID]],
            "the objects of the transactions observed (the silent container's saves must not appear)")
        let stored = try await silent.history(after: start)
        try kit.expectEqual(
            stored.map(\.token), received.map(\.token), "the history the silent container reads (it still reads)")
        try kit.expectEqual(
            try await silent.read { try $0.count(for: FetchRequest<KitAccount>()) }, 3,
            "accounts stored (the silent saves did commit)")
    }
}
