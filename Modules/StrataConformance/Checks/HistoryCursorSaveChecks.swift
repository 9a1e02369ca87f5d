import Foundation
import Strata

/// A consumer's save moves its history cursor in the same atomic commit as its own writes
/// (`ObjectContext.moveHistoryCursor`): a failed save moves neither, a successful one both; the
/// move is a compare-and-set, so a stale or competing consumer's save throws `.conflict` and
/// writes nothing; `changes(forCursor:)` resumes after the last saved delivery.
enum HistoryCursorSaveChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "a save moves a history cursor with its data: a failed save moves neither, a successful one both",
            atomicMove),
        ConformanceCheck(
            HistoryChecks.group,
            "a cursor moved in a save is compared and set: a stale or competing consumer's save writes nothing",
            compareAndSet),
        ConformanceCheck(
            HistoryChecks.group,
            "changes(forCursor:) delivers each commit once to a consumer that saves its cursor, across restarts",
            cursorSequence),
        ConformanceCheck(
            HistoryChecks.group,
            "a cursor is never set or moved past the store's last commit, which would skip the commits up to it",
            futureCursor),
    ]

    static let cursor = "consumer"

    static func atomicMove(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("Taken")
        let start = try await container.currentHistoryToken()
        try await container.setHistoryCursor(cursor, to: start)
        _ = try await container.makeAccount("Produced")
        let token = try await container.currentHistoryToken()
        let entries = { try await container.read { try $0.count(for: FetchRequest<KitEntry>()) } }

        // A save that fails in the engine (a unique clash with a stored row) moves nothing.
        let error = try await kit.expectStrataError("a save with a unique clash and a cursor move") {
            try await container.performUnitOfWork(retries: .none) { context in
                KitEntry(context: context).memo = "processed \(token.rawValue)"
                KitAccount(context: context).name = "Taken"
                try context.moveHistoryCursor(cursor, from: start, to: token)
                try context.save()
            }
        }
        guard case .constraintViolation = error else { throw kit.fail("expected .constraintViolation, got \(error)") }
        try kit.expectEqual(try await container.historyCursors()[cursor], start, "the cursor after a failed save")
        try kit.expectEqual(try await entries(), 0, "entries after a failed save")
        try kit.expectEqual(try await container.currentHistoryToken(), token, "the history token after a failed save")

        // A successful save moves both, and appends the history of its data.
        try await container.performUnitOfWork { context in
            KitEntry(context: context).memo = "processed \(token.rawValue)"
            try context.moveHistoryCursor(cursor, from: start, to: token)
            try context.save()
        }
        try kit.expectEqual(try await container.historyCursors()[cursor], token, "the cursor after the save")
        try kit.expectEqual(try await entries(), 1, "entries after the save")
        let appended = try await container.history(after: token)
        try kit.expectEqual(appended.count, 1, "history transactions appended by the save")

        // A save of the cursor move alone commits it and appends no history.
        let last = try await container.currentHistoryToken()
        try await container.performUnitOfWork { context in
            try context.moveHistoryCursor(cursor, from: token, to: last)
            try context.save()
        }
        try kit.expectEqual(try await container.historyCursors()[cursor], last, "the cursor after a move alone")
        try kit.expectEqual(try await container.currentHistoryToken(), last, "the history token after a move alone")

        // Rolled back: the staged move goes with the changes.
        _ = try await container.makeAccount("Later")
        let later = try await container.currentHistoryToken()
        let context = container.newBackgroundContext()
        try await context.perform {
            try context.moveHistoryCursor(cursor, from: last, to: later)
            context.rollback()
            try context.save()
        }
        try kit.expectEqual(try await container.historyCursors()[cursor], last, "the cursor after a rollback")
    }

    static func compareAndSet(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let start = try await container.currentHistoryToken()
        try await container.setHistoryCursor(cursor, to: start)
        _ = try await container.makeAccount("One")
        let one = try await container.currentHistoryToken()
        _ = try await container.makeAccount("Two")
        let two = try await container.currentHistoryToken()

        // Two consumers read the cursor at `start` and process the same commit: one save wins.
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        for context in [first, second] {
            try await context.perform {
                KitEntry(context: context).memo = "processed \(one.rawValue)"
                try context.moveHistoryCursor(cursor, from: start, to: one)
            }
        }
        try await first.perform { try first.save() }
        let lost = try await kit.expectStrataError("the competing consumer's save") {
            try await second.perform { try second.save() }
        }
        try expectCursorConflict(lost, expected: start, stored: one, kit: kit)
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitEntry>()) }, 1, "entries saved")

        // A unit of work does not retry a cursor conflict: the same delivery cannot succeed later.
        let stale = try await kit.expectStrataError("a stale consumer's unit of work") {
            try await container.performUnitOfWork { context in
                KitEntry(context: context).memo = "stale"
                try context.moveHistoryCursor(cursor, from: start, to: two)
                try context.save()
            }
        }
        try expectCursorConflict(stale, expected: start, stored: one, kit: kit)

        // A missing cursor: expected nil registers it once.
        try await container.performUnitOfWork { context in
            try context.moveHistoryCursor("fresh", from: nil, to: two)
            try context.save()
        }
        let again = try await kit.expectStrataError("registering an existing cursor") {
            try await container.performUnitOfWork { context in
                try context.moveHistoryCursor("fresh", from: nil, to: two)
                try context.save()
            }
        }
        try expectCursorConflict(again, expected: nil, stored: two, kit: kit)

        // Moved away by hand (rewound): the consumer that read the old position is refused.
        try await container.setHistoryCursor(cursor, to: start)
        let rewound = try await kit.expectStrataError("a save after the cursor was rewound") {
            try await container.performUnitOfWork { context in
                try context.moveHistoryCursor(cursor, from: one, to: two)
                try context.save()
            }
        }
        try expectCursorConflict(rewound, expected: one, stored: start, kit: kit)

        // Backwards, and a bad name: refused when staged.
        for (from, to, name) in [(two, one, cursor), (start, one, "")] {
            let refused = try await kit.expectStrataError("moving \(name) from \(from) to \(to)") {
                try await container.performUnitOfWork { context in
                    try context.moveHistoryCursor(name, from: from, to: to)
                    try context.save()
                }
            }
            guard case .misuse = refused else { throw kit.fail("expected .misuse, got \(refused)") }
        }
        try kit.expectEqual(
            try await container.historyCursors(), [cursor: start, "fresh": two], "the cursors at the end")
    }

    static func futureCursor(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("first")
        let current = try await container.currentHistoryToken()
        try await container.setHistoryCursor(cursor, to: current)
        let ahead = HistoryToken(rawValue: current.rawValue + 5)
        let set = try await kit.expectStrataError("setHistoryCursor past the last commit") {
            try await container.setHistoryCursor(cursor, to: ahead)
        }
        let moved = try await kit.expectStrataError("moveHistoryCursor past the last commit") {
            try await container.performUnitOfWork(retries: .none) { context in
                try context.moveHistoryCursor(cursor, from: current, to: ahead)
                try context.save()
            }
        }
        for error in [set, moved] {
            guard case .misuse(let message, _) = error, message.contains("past this store's last commit") else {
                throw kit.fail("a cursor past the last commit gives .misuse saying so, not \(error)")
            }
        }
        try kit.expectEqual(try await container.historyCursors()[cursor], current, "the cursor, unmoved")
        // The commits after it are all delivered: none was skipped.
        for name in ["second", "third"] { _ = try await container.makeAccount(name) }
        var delivered: [HistoryToken] = []
        for try await delivery in container.changes(forCursor: cursor) {
            delivered.append(delivery.transaction.token)
            if delivered.count == 2 { break }
        }
        try kit.expectEqual(
            delivered, [current.rawValue + 1, current.rawValue + 2].map(HistoryToken.init(rawValue:)),
            "the commits after the cursor")
    }

    static func cursorSequence(_ kit: ConformanceHarness) async throws {
        var container = try kit.open()
        let consumed = try await consume(0, from: container, kit: kit) // registers the cursor
        try kit.expectEqual(consumed, [], "deliveries before any commit")
        var produced: [Int64] = []
        for index in 0..<5 {
            _ = try await container.makeAccount("noise-\(index)")
            let context = container.newBackgroundContext()
            try await context.perform {
                KitEntry(context: context).memo = "source-\(index)"
                try context.save()
            }
            produced.append(try await container.currentHistoryToken().rawValue)
        }
        var processed = try await consume(2, from: container, kit: kit)
        container.close()
        container = try kit.open()
        processed += try await consume(3, from: container, kit: kit)
        try kit.expectEqual(processed, produced, "the entries' commits processed over two runs")
        let rows = try await container.read { context in
            try context.fetch(FetchRequest<KitTag>()).map(\.label).sorted()
        }
        try kit.expectEqual(rows, produced.map { "processed \($0)" }.sorted(), "the consumer's rows")
        try kit.expectEqual(
            try await container.historyCursors()[cursor]?.rawValue, produced.last, "the cursor at the end")
    }

    /// Runs a consumer of ``cursor`` over the entries' commits until it processed `count`
    /// deliveries, writing a tag per delivery; with a `count` of 0, until the cursor is registered.
    private static func consume(
        _ count: Int, from container: PersistentContainer, kit: ConformanceHarness
    ) async throws -> [Int64] {
        let consumer = Task {
            var processed: [Int64] = []
            for try await delivery in container.changes(forCursor: cursor, entities: [KitEntry.self]) {
                let token = delivery.transaction.token.rawValue
                try await container.performUnitOfWork { context in
                    KitTag(context: context).label = "processed \(token)"
                    try context.moveHistoryCursor(past: delivery)
                    try context.save()
                }
                processed.append(token)
                if processed.count == count { break }
            }
            return processed
        }
        if count == 0 {
            // Registering: wait until the cursor exists (a hang guard of 2,000 polls), then stop.
            var polls = 0
            while try await container.historyCursors()[cursor] == nil {
                polls += 1
                if polls > 2_000 {
                    consumer.cancel()
                    throw kit.fail("changes(forCursor:) did not register its cursor")
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            consumer.cancel()
        }
        return try await kit.value(of: consumer, "a consumer of \(count) deliveries")
    }

    private static func expectCursorConflict(
        _ error: StrataError, expected: HistoryToken?, stored: HistoryToken?, kit: ConformanceHarness,
        file: String = #fileID, line: Int = #line
    ) throws {
        guard case .conflict(let conflicts) = error, conflicts.count == 1, let conflict = conflicts.first,
            conflict.historyCursor != nil
        else { throw kit.fail("expected a .conflict on one history cursor, got \(error)", file: file, line: line) }
        try kit.expectEqual(
            conflict.expectedVersion, expected?.rawValue ?? -1, "the token the consumer read", file: file, line: line)
        try kit.expectEqual(conflict.storedVersion, stored?.rawValue, "the token stored", file: file, line: line)
    }
}
