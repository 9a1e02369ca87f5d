import Foundation
import Strata
import Synchronization

/// Query observation: a fresh result after each commit that can change it, nothing for
/// unrelated commits, equal consecutive results delivered once.
enum HistoryQueryChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "query observation skips unrelated commits and equal results, "
                + "and re-delivers after a related entity changes",
            duplicates),
        ConformanceCheck(
            HistoryChecks.group, "observing a fetch request maps each fresh result inside perform", fetchRequest),
    ]

    /// How many times a query ran.
    final class Counter: Sendable {
        private let count = Mutex(0)
        func increment() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    static func duplicates(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let account = try await container.makeAccount("A")
        let entry = try await container.performUnitOfWork { context in
            let entry = KitEntry(context: context)
            entry.account = try context.existingObject(with: account, as: KitAccount.self)
            try context.save()
            return entry.objectID
        }
        let evaluations = Counter()
        var values = Received(
            container.observe { context in
                evaluations.increment()
                return try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map { account in
                    "\(account.name)=\(account.entries.reduce(Int64(0)) { $0 + $1.amount })"
                }
            })
        defer { values.stop() }
        try kit.expectEqual(try await values.next(kit), ["A=0"], "the first result")
        try kit.expectEqual(evaluations.value, 1, "evaluations for the first result")

        // 20 commits to an entity the query does not read, then one to an entry it reads through
        // a relationship: one more evaluation, one delivery.
        for index in 0..<20 {
            try await container.performUnitOfWork { context in
                KitTag(context: context).label = "unrelated-\(index)"
                try context.save()
            }
        }
        try await container.performUnitOfWork { context in
            try context.existingObject(with: entry, as: KitEntry.self).amount = 5
            try context.save()
        }
        try kit.expectEqual(try await values.next(kit), ["A=5"], "the result after an entry it reads changed")
        try kit.expectEqual(evaluations.value, 2, "evaluations (commits to tags, which it never reads, must not count)")

        // Commits to entities it reads that leave the result equal deliver nothing: the next
        // delivery is the next different result.
        try await container.performUnitOfWork { context in
            try context.existingObject(with: account, as: KitAccount.self).note = "same result"
            try context.save()
        }
        try await container.performUnitOfWork { context in
            try context.existingObject(with: entry, as: KitEntry.self).memo = "same sum"
            try context.save()
        }
        _ = try await container.makeAccount("B")
        try kit.expectEqual(try await values.next(kit), ["A=5", "B=0"], "the next result delivered")
        try kit.expect(evaluations.value >= 3, "the query ran again for the commits to what it reads")
    }

    static func fetchRequest(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("A", balance: 1)
        var values = Received(
            container.observe(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])) { accounts in
                accounts.map { "\($0.name)=\($0.balance)" }
            })
        defer { values.stop() }
        try kit.expectEqual(try await values.next(kit), ["A=1"], "the first result")
        _ = try await container.makeAccount("B", balance: 2)
        try kit.expectEqual(try await values.next(kit), ["A=1", "B=2"], "the result after an insert")
        try await container.performUnitOfWork { context in
            let accounts = try context.fetch(FetchRequest<KitAccount>())
            for account in accounts { context.delete(account) }
            try context.save()
        }
        try kit.expectEqual(try await values.next(kit), [], "the result after deleting every account")
    }
}

/// The values of an observation, one at a time. Everything ends after 120 s, so a stuck
/// observation fails the check instead of stalling the run.
struct Received<Value: Sendable> {
    private var iterator: AsyncStream<Result<Value, any Error>>.Iterator
    let stop: @Sendable () -> Void

    init<Sequence: AsyncSequence & Sendable>(_ sequence: Sequence) where Sequence.Element == Value {
        let (stream, sink) = AsyncStream.makeStream(of: Result<Value, any Error>.self)
        let observer = Task {
            do {
                for try await value in sequence { sink.yield(.success(value)) }
            } catch {
                sink.yield(.failure(error))
            }
            sink.finish()
        }
        let watchdog = Task {
            try await Task.sleep(for: .seconds(120))
            observer.cancel()
            sink.finish()
        }
        stop = {
            observer.cancel()
            watchdog.cancel()
            sink.finish()
        }
        iterator = stream.makeAsyncIterator()
    }

    /// The next value; a failure when the observation threw, ended or is stuck.
    mutating func next(_ kit: ConformanceHarness, file: String = #fileID, line: Int = #line) async throws -> Value {
        switch await iterator.next() {
        case .success(let value)?: return value
        case .failure(let error)?: throw kit.fail("the observation threw \(error)", file: file, line: line)
        case nil: throw kit.fail("the observation ended, or delivered nothing for 120 s", file: file, line: line)
        }
    }
}
