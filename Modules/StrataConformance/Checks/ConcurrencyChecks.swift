import Foundation
import Strata

/// Eight concurrent contexts writing disjoint and overlapping objects, and readers running
/// during writes.
enum ConcurrencyChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Concurrency", "8 concurrent contexts writing disjoint objects lose nothing", disjoint),
        ConformanceCheck("Concurrency", "8 concurrent contexts updating shared objects lose no update", overlapping),
        ConformanceCheck("Concurrency", "readers running during writes always see a consistent total", readersDuringWrites),
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
        let balances = try await container.read { try $0.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.balance) }
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
                        sums.append(try await container.read { context in
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
}
