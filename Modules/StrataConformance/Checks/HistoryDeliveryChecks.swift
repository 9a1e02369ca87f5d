import Foundation
import Strata
import Synchronization

/// `changes()` delivers every commit exactly once and in order, resumes from a saved token,
/// and ends when its task is cancelled.
enum HistoryDeliveryChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "an observer receives every commit of 8 concurrent writers exactly once, in token order",
            concurrentWriters),
        ConformanceCheck(
            HistoryChecks.group, "an observer resuming from a saved token receives what it missed, then live commits",
            resume),
        ConformanceCheck(
            HistoryChecks.group, "cancelling the observing task ends changes() and observe() promptly, without error",
            cancellation),
    ]

    static let writers = 8
    static let savesPerWriter = 25

    static func concurrentWriters(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let expected = writers * savesPerWriter
        let receiving = kit.receive(expected + 1, from: container.changes())
        let saved = try await withThrowingTaskGroup(of: [ObjectID].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var ids: [ObjectID] = []
                    for step in 0..<savesPerWriter {
                        let context = container.newBackgroundContext(named: "writer-\(writer)")
                        ids.append(
                            try await context.perform {
                                let entry = KitEntry(context: context)
                                entry.amount = Int64(writer * 1000 + step)
                                try context.save()
                                return entry.objectID
                            })
                    }
                    return ids
                }
            }
            return try await group.reduce(into: [ObjectID]()) { $0 += $1 }
        }
        // A last save after every writer finished: it must be the next delivery, so nothing came twice.
        let marker = try await container.makeAccount("marker")
        let received = try await kit.value(of: receiving, "receiving \(expected + 1) transactions")
        try kit.expectEqual(received.count, expected + 1, "transactions received")
        try kit.expectIncreasing(received, "transactions received")
        try kit.expectEqual(received.last?.changes.map(\.objectID), [marker], "the last transaction's objects")
        let delivered = received.dropLast().flatMap { $0.changes.map(\.objectID) }
        try kit.expectEqual(delivered.count, expected, "objects delivered (one per save)")
        try kit.expectEqual(Set(delivered), Set(saved), "the objects delivered")
        for writer in 0..<writers {
            let ids = received.filter { $0.author == "writer-\(writer)" }.flatMap { $0.changes.map(\.objectID) }
            let amounts = try await container.read { context in
                try ids.map { try context.existingObject(with: $0, as: KitEntry.self).amount }
            }
            try kit.expectEqual(
                amounts, (0..<savesPerWriter).map { Int64(writer * 1000 + $0) },
                "writer \(writer)'s entries, in delivery order")
        }
    }

    static func resume(_ kit: ConformanceHarness) async throws {
        var container = try kit.open()
        _ = try await container.makeAccount("seen")
        let saved = try JSONEncoder().encode(try await container.currentHistoryToken())
        var missed: [ObjectID] = []
        for index in 0..<3 { missed.append(try await container.makeAccount("missed-\(index)")) }
        container.close()

        container = try kit.open()
        let token = try JSONDecoder().decode(HistoryToken.self, from: saved)
        let receiving = kit.receive(5, from: container.changes(after: token))
        var live: [ObjectID] = []
        for index in 0..<2 { live.append(try await container.makeAccount("live-\(index)")) }
        let received = try await kit.value(of: receiving, "receiving 5 transactions")
        try kit.expectEqual(
            received.map { $0.changes.map(\.objectID) }, (missed + live).map { [$0] },
            "the objects of the transactions received after the saved token")
        try kit.expectIncreasing(received, "transactions received")
        try kit.expect(received[0].token > token, "the first transaction received comes after the saved token")
        let read = try await container.history(after: token)
        try kit.expectEqual(read.map(\.token), received.map(\.token), "history(after:) from the same token")
    }

    static func cancellation(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        // Cancelled while waiting, before anything committed.
        let idle = Task {
            var count = 0
            for try await _ in container.changes() { count += 1 }
            return count
        }
        idle.cancel()
        try kit.expectEqual(try await kit.value(of: idle, "an idle cancelled observer"), 0, "transactions received")

        // Cancelled while waiting for the next commit, after receiving one.
        for observesQuery in [false, true] {
            let (events, event) = AsyncStream.makeStream(of: Int.self)
            let changes = container.changes()
            let query = container.observe { try $0.count(for: FetchRequest<KitAccount>()) }
            let observer = Task {
                var count = 0
                if observesQuery {
                    for try await value in query {
                        count += 1
                        event.yield(value)
                    }
                } else {
                    for try await _ in changes {
                        count += 1
                        event.yield(count)
                    }
                }
                event.finish()
                return count
            }
            // A stuck observer fails the check instead of stalling the run.
            let watchdog = Task {
                try await Task.sleep(for: .seconds(120))
                event.finish()
            }
            if !observesQuery { _ = try await container.makeAccount("first") }
            var iterator = events.makeAsyncIterator()
            let first = await iterator.next()
            watchdog.cancel()
            observer.cancel()
            try kit.expect(first != nil, "the observer (query: \(observesQuery)) received nothing within 120 s")
            let count = try await kit.value(of: observer, "a cancelled observer (query: \(observesQuery))")
            try kit.expectEqual(count, 1, "values received before cancelling (query: \(observesQuery))")
        }

        // A new observer afterwards works.
        let receiving = kit.receive(1, from: container.changes())
        let after = try await container.makeAccount("after")
        let received = try await kit.value(of: receiving, "an observer started after the cancelled ones")
        try kit.expectEqual(received.map { $0.changes.map(\.objectID) }, [[after]], "what the new observer received")
    }
}
