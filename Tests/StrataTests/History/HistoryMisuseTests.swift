import Foundation
import Strata
import Testing

/// The history API driven the way a careless or hostile caller drives it: odd limits, tokens
/// that never were, a container closed under a waiting observer, a query that throws. Each must
/// end with a typed error or the documented result, never a hang, a trap or a silent skip.
@Suite("history misuse", .timeLimit(.minutes(1)))
struct HistoryMisuseTests {
    /// Saves `count` accounts, one commit each.
    static func commit(_ container: PersistentContainer, count: Int, from first: Int = 0) async throws {
        let context = container.newBackgroundContext()
        try await context.perform {
            for index in first..<(first + count) {
                Account(context: context).name = "a\(index)"
                try context.save()
            }
        }
    }

    static func isMisuse(_ error: any Error) -> Bool {
        if case .misuse = error as? StrataError { return true }
        return false
    }

    @Test("history(after:limit:) takes 0 and .max, refuses a negative limit", arguments: EngineKind.allCases)
    func limits(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        try await Self.commit(container, count: 3)
        #expect(try await container.history(limit: 0).isEmpty)
        #expect(try await container.history(limit: .max).count == 3)
        #expect(try await container.history(limit: 2).count == 2)
        do {
            _ = try await container.history(limit: -1)
            Issue.record("\(kind): history(limit: -1) returned")
        } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
    }

    @Test(
        "a negative token is refused by history(), changes() and deleteHistory(); .beginning reads what is kept",
        arguments: EngineKind.allCases)
    func negativeToken(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        try await Self.commit(container, count: 5)
        for raw in [-1, Int64.min] {
            do {
                _ = try await container.history(after: HistoryToken(rawValue: raw))
                Issue.record("\(kind): history(after: \(raw)) returned")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            do {
                var iterator = container.changes(after: HistoryToken(rawValue: raw)).makeAsyncIterator()
                _ = try await iterator.next()
                Issue.record("\(kind): changes(after: \(raw)) delivered")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            do {
                try await container.deleteHistory(before: HistoryToken(rawValue: raw))
                Issue.record("\(kind): deleteHistory(before: \(raw)) returned")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
        }
        // Trimmed, the history after .beginning starts at the oldest kept transaction (documented);
        // after a token whose successors were trimmed it is historyTrimmed.
        let kept = try await container.deleteHistory(before: HistoryToken(rawValue: 5), force: true)
        #expect(try await container.history(after: .beginning).map(\.token) == [kept])
        await #expect(throws: StrataError.historyTrimmed(after: 1, oldestKept: kept.rawValue)) {
            _ = try await container.history(after: HistoryToken(rawValue: 1))
        }
    }

    @Test("a token past the store's last commit is refused, by history() and changes(), not waited on")
    func futureToken() async throws {
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            try await Self.commit(container, count: 2)
            let current = try await container.currentHistoryToken()
            let future = HistoryToken(rawValue: 1 << 60)
            do {
                _ = try await container.history(after: future)
                Issue.record("\(kind): history(after: 1 << 60) returned instead of throwing")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            do {
                _ = try await container.history(after: HistoryToken(rawValue: current.rawValue + 1))
                Issue.record("\(kind): history(after: current + 1) returned instead of throwing")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            do {
                _ = try await container.history(after: HistoryToken(rawValue: .max))
                Issue.record("\(kind): history(after: .max) returned instead of throwing")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            // The current token itself is fine: nothing after it yet.
            #expect(try await container.history(after: current).isEmpty)
            var iterator = container.changes(after: future).makeAsyncIterator()
            do {
                _ = try await iterator.next()
                Issue.record("\(kind): changes(after: 1 << 60) returned instead of throwing")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
        }
    }

    @Test("close() ends a waiting changes() observer and a waiting query observation with .misuse")
    func closeWhileObserving() async throws {
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            let changes = container.changes()
            let observation = container.observe { try $0.count(for: FetchRequest<Account>()) }
            var queryIterator = observation.makeAsyncIterator()
            #expect(try await queryIterator.next() == 0)
            let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
            let reader = Task {
                var iterator = changes.makeAsyncIterator()
                startedContinuation.yield()
                return try await iterator.next()
            }
            for await _ in started { break }
            try await Self.commit(container, count: 1)
            #expect(try await queryIterator.next() == 1)
            let queryReader = Task { [queryIterator] in
                var iterator = queryIterator
                return try await iterator.next()
            }
            container.close()
            // The first may have delivered the commit before close(); then the next one throws.
            do {
                if try await reader.value != nil {
                    var iterator = changes.makeAsyncIterator()
                    _ = try await iterator.next()
                }
                Issue.record("\(kind): changes() ended without an error after close()")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            do {
                _ = try await queryReader.value
                Issue.record("\(kind): observe() ended without an error after close()")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
        }
    }

    @Test("two iterators of one changes() value, in two tasks, each get every commit", arguments: EngineKind.allCases)
    func twoIteratorsOfOneSequence(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let changes = container.changes()
        @Sendable func read() async throws -> [HistoryToken] {
            var tokens: [HistoryToken] = []
            for try await transaction in changes {
                tokens.append(transaction.token)
                if tokens.count == 50 { break }
            }
            return tokens
        }
        let first = Task { try await read() }
        let second = Task { try await read() }
        try await Self.commit(container, count: 50)
        let expected = try await container.history().map(\.token)
        #expect(try await first.value == expected)
        #expect(try await second.value == expected)
    }

    @Test("a query that throws on a later evaluation ends the observation with its own error")
    func queryThrowsLater() async throws {
        struct Refused: Error, Equatable {}
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            let observation = container.observe { context in
                let count = try context.count(for: FetchRequest<Account>())
                if count == 2 { throw Refused() }
                return count
            }
            var iterator = observation.makeAsyncIterator()
            #expect(try await iterator.next() == 0)
            try await Self.commit(container, count: 1)
            #expect(try await iterator.next() == 1)
            try await Self.commit(container, count: 1, from: 1)
            await #expect(throws: Refused.self) { try await iterator.next() }
        }
    }

    @Test("mergeChanges(from:) outside perform is .misuse; another store's transactions are ignored")
    func mergeMisuse() async throws {
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            let otherStore = try TestStore(kind)
            let other = try otherStore.open()
            try await Self.commit(container, count: 2)
            try await Self.commit(other, count: 2)
            // The other store deletes its objects: keys this store's objects have too.
            let otherContext = other.newBackgroundContext()
            try await otherContext.perform {
                for account in try otherContext.fetch(FetchRequest<Account>()) { otherContext.delete(account) }
                try otherContext.save()
            }
            let foreign = try await other.history()
            let own = try await container.history()
            let context = container.newBackgroundContext()
            do {
                _ = try context.mergeChanges(from: own)
                Issue.record("\(kind): mergeChanges(from:) outside perform returned")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            let merged = try await context.perform {
                let accounts = try context.fetch(FetchRequest<Account>())
                #expect(accounts.count == 2)
                // Foreign, duplicated and reversed transactions: nothing of this store changed.
                return try context.mergeChanges(from: foreign + foreign.reversed() + own.reversed() + own)
            }
            #expect(merged.deleted.isEmpty, "\(kind)")
            #expect(merged.keptUnsaved.isEmpty, "\(kind)")
            let still = try await context.perform { try context.fetch(FetchRequest<Account>()).count }
            #expect(still == 2, "\(kind)")
        }
    }

    @Test("deleting all history, even past the last commit, keeps the token: observers continue without a gap")
    func trimPastTheEnd() async throws {
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            try await Self.commit(container, count: 3)
            let current = try await container.currentHistoryToken()
            var iterator = container.changes(after: current).makeAsyncIterator()
            let bound = try await container.deleteHistory(before: HistoryToken(rawValue: 1 << 60), force: true)
            // The history now starts at the next commit's token, not at a token no commit will have for ages.
            #expect(bound.rawValue == current.rawValue + 1, "\(kind)")
            #expect(try await container.currentHistoryToken() == current)
            #expect(try await container.history().isEmpty)
            try await Self.commit(container, count: 1, from: 3)
            let next = try await iterator.next()
            #expect(next?.token.rawValue == current.rawValue + 1)
        }
    }
}

extension HistoryMisuseTests {
    @Test("cursor names with NUL, emoji and exactly 256 bytes round-trip; 257 bytes is .misuse")
    func oddCursorNames() async throws {
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            try await Self.commit(container, count: 3)
            let names = ["a\u{0}b", "\u{0}", "🦆 indexer", "a\u{0}", String(repeating: "é", count: 128)]
            for (index, name) in names.enumerated() {
                try await container.setHistoryCursor(name, to: HistoryToken(rawValue: Int64(index % 3 + 1)))
            }
            let expected = Dictionary(
                uniqueKeysWithValues: names.enumerated().map { ($1, HistoryToken(rawValue: Int64($0 % 3 + 1))) })
            #expect(try await container.historyCursors() == expected, "\(kind)")
            do {
                try await container.setHistoryCursor(String(repeating: "é", count: 128) + "x", to: .beginning)
                Issue.record("\(kind): a 257-byte cursor name was accepted")
            } catch { #expect(Self.isMisuse(error), "\(kind): \(error)") }
            // The slowest cursor ("a\0b" at 1) holds the history after token 1.
            let kept = try await container.deleteHistory(before: HistoryToken(rawValue: 3))
            #expect(kept == HistoryToken(rawValue: 2), "\(kind)")
            try await container.setHistoryCursor("a\u{0}b", to: nil)
            try await container.setHistoryCursor("\u{0}", to: nil)
            #expect(try await container.historyCursors().count == names.count - 2, "\(kind)")
        }
    }
}

extension HistoryMisuseTests {
    @Test("a query reading through relationships is re-evaluated when only the related objects change")
    func queryThroughRelationships() async throws {
        for kind in EngineKind.allCases {
            let store = try TestStore(kind)
            let container = try store.open()
            let context = container.newBackgroundContext()
            try await context.perform {
                let account = Account(context: context)
                account.name = "a"
                let tag = Tag(context: context)
                tag.label = "old"
                account.tags.insert(tag)
                for amount in [1, 2] as [Int64] {
                    let entry = Entry(context: context)
                    entry.amount = amount
                    entry.account = account
                }
                try context.save()
            }
            struct Summary: Equatable, Sendable {
                var total: Int64
                var labels: [String]
            }
            let observation = container.observe { context in
                let account = try context.fetch(FetchRequest<Account>())[0]
                return Summary(
                    total: account.entries.reduce(0) { $0 + $1.amount }, labels: account.tags.map(\.label).sorted())
            }
            var iterator = observation.makeAsyncIterator()
            #expect(try await iterator.next() == Summary(total: 3, labels: ["old"]), "\(kind)")
            try await context.perform {
                for entry in try context.fetch(FetchRequest<Entry>()) { entry.amount *= 10 }
                try context.save()
            }
            #expect(try await iterator.next() == Summary(total: 30, labels: ["old"]), "\(kind)")
            try await context.perform {
                try context.fetch(FetchRequest<Tag>())[0].label = "new"
                try context.save()
            }
            #expect(try await iterator.next() == Summary(total: 30, labels: ["new"]), "\(kind)")
        }
    }
}
