import Foundation
import Strata
import Synchronization

/// Eight concurrent contexts writing disjoint and overlapping objects, and readers running
/// during writes.
enum ConcurrencyChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Concurrency", "8 concurrent contexts writing disjoint objects lose nothing", disjoint),
        ConformanceCheck("Concurrency", "8 concurrent contexts updating shared objects lose no update", overlapping),
        ConformanceCheck(
            "Concurrency", "readers running during writes always see a consistent total", readersDuringWrites),
        ConformanceCheck(
            "Concurrency", "2,000 saves from 8 tasks hopping threads between awaits all finish (watchdog 120 s)",
            manySaves),
    ]

    static func disjoint(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<20 {
                        let id = try await container.makeAccount("t\(task)-\(index)", balance: Int64(index))
                        try await container.performUnitOfWork { context in
                            try context.existingObject(with: id, as: KitAccount.self).balance += 1000
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let (count, total) = try await container.read { context in
            let accounts = try context.fetch(FetchRequest<KitAccount>())
            return (accounts.count, accounts.reduce(Int64(0)) { $0 + $1.balance })
        }
        try kit.expectEqual(count, 160, "accounts stored")
        try kit.expectEqual(total, 8 * (190 + 20 * 1000), "sum of balances")
    }

    static func overlapping(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        var ids: [ObjectID] = []
        for index in 0..<4 { ids.append(try await container.makeAccount("shared\(index)")) }
        let shared = ids
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for step in 0..<25 {
                        let id = shared[(task + step) % shared.count]
                        try await container.performUnitOfWork { context in
                            try context.existingObject(with: id, as: KitAccount.self).balance += 1
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let balances = try await container.read {
            try $0.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.balance)
        }
        try kit.expectEqual(balances, [50, 50, 50, 50], "balances after 200 concurrent increments")
    }

    static func readersDuringWrites(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        var ids: [ObjectID] = []
        for index in 0..<4 { ids.append(try await container.makeAccount("pool\(index)", balance: 100)) }
        let pool = ids
        let sums = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for writer in 0..<2 {
                group.addTask {
                    for step in 0..<60 {
                        let from = pool[(writer + step) % 4]
                        let to = pool[(writer + step + 1) % 4]
                        try await container.performUnitOfWork { context in
                            try context.existingObject(with: from, as: KitAccount.self).balance -= 7
                            try context.existingObject(with: to, as: KitAccount.self).balance += 7
                            try context.save()
                        }
                    }
                    return []
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    var sums: [Int64] = []
                    for _ in 0..<60 {
                        sums.append(
                            try await container.read { context in
                                try context.fetch(FetchRequest<KitAccount>()).reduce(Int64(0)) { $0 + $1.balance }
                            })
                    }
                    return sums
                }
            }
            return try await group.reduce(into: [Int64]()) { $0 += $1 }
        }
        try kit.expectEqual(sums.count, 120, "snapshots read")
        try kit.expect(sums.allSatisfy { $0 == 400 }, "every snapshot must total 400; saw \(Set(sums).sorted())")
    }

    /// Saves through `perform` from tasks that suspend and resume on other threads between
    /// saves; an engine that ties a write transaction to a thread would hang here. The check
    /// races the work against a watchdog so a hang fails instead of stalling the run.
    static func manySaves(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let work = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        for step in 0..<250 {
                            let context = container.newBackgroundContext()
                            try await context.perform {
                                let entry = KitEntry(context: context)
                                entry.amount = Int64(task * 1000 + step)
                                try context.save()
                            }
                            await Task.yield()
                        }
                    }
                }
                try await group.waitForAll()
            }
            return true
        }
        let finished = await finishes(work, within: .seconds(120))
        try kit.expect(finished, "2,000 saves did not finish within 120 s: a write is stuck")
        _ = try await work.value
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitEntry>()) }, 2000, "entries stored")
    }

    /// Whether `work` ends before `limit`. A hung task is left behind rather than awaited.
    static func finishes(_ work: Task<Bool, any Error>, within limit: Duration) async -> Bool {
        let outcome = Mutex<CheckedContinuation<Bool, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let resume: @Sendable (Bool) -> Void = { value in outcome.withLock { $0.take() }?.resume(returning: value) }
            let timer = Task {
                // A cancelled sleep means the work finished: only a full sleep is a timeout.
                do { try await Task.sleep(for: limit) } catch { return }
                resume(false)
            }
            Task {
                _ = try? await work.value
                resume(true)
                timer.cancel()
            }
        }
    }
}
