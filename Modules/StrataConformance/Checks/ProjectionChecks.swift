import Foundation
import Strata

/// Projections (chosen attributes as values, object IDs only) and streamed reads in batches.
enum ProjectionChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Projections", "values and object IDs equal what a fetch gives, with predicate, sort and window",
            projections),
        ConformanceCheck(
            "Streaming", "batches deliver every selected row once, in key order, from the perform's snapshot",
            batches),
        ConformanceCheck(
            "Streaming", "a batch size past the result (up to Int.max) gives one batch of every row",
            oversizedBatches),
        ConformanceCheck(
            "Streaming", "a batch's objects are let go after it unless changed; changes made in a batch save",
            lifetimes),
        ConformanceCheck(
            "Streaming", "save() or reset() inside a batch is refused with .misuse and writes nothing",
            saveInsideBatch),
    ]

    static func seed(_ container: PersistentContainer, count: Int) async throws {
        try await container.performUnitOfWork { context in
            try context.batchInsert(KitAccount.self, from: 0..<count) { index, values in
                values[\.name] = String(format: "p%04d", index)
                values[\.balance] = Int64((index * 37) % 101)
                values[\.note] = index % 4 == 0 ? nil : "n\(index % 3)"
            }
            try context.save()
        }
    }

    static func projections(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container, count: 300)
        let request = FetchRequest<KitAccount>(
            predicate: #Predicate { $0.balance > 20 && $0.note != nil },
            sortBy: [SortDescriptor(\.balance, order: .reverse), SortDescriptor(\.name)], fetchLimit: 40,
            fetchOffset: 5)
        let (objects, values, ids) = try await container.read { context in
            let objects = try context.fetch(request).map { "\($0.name) \($0.balance) \($0.note ?? "nil")" }
            let values = try context.fetchValues(request, \.name, \.balance, \.note).map {
                "\($0) \($1) \($2 ?? "nil")"
            }
            let ids = try context.fetchObjectIDs(request)
            return (objects, values, ids)
        }
        try kit.expectEqual(values, objects, "projected values equal the fetched objects' values")
        let named = try await container.read { context in
            try ids.map { id in
                let account = try context.existingObject(with: id, as: KitAccount.self)
                return "\(account.name) \(account.balance) \(account.note ?? "nil")"
            }
        }
        try kit.expectEqual(named, objects, "object IDs name the same rows, in the same order")
        let error = try await kit.expectStrataError("projecting over unsaved changes") {
            try await container.performUnitOfWork { context in
                KitAccount(context: context).name = "unsaved"
                _ = try context.fetchObjectIDs(FetchRequest<KitAccount>())
            }
        }
        guard case .misuse = error else { throw kit.fail("unsaved changes give .misuse, not \(error)") }
    }

    static func batches(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container, count: 1_000)
        let context = container.newBackgroundContext(named: "stream")
        let deleted = DispatchSemaphore(value: 0)
        let (streamed, sizes, windowed, expected) = try await context.perform {
            var streamed: [String] = []
            var sizes: [Int] = []
            let request = FetchRequest<KitAccount>(predicate: #Predicate { $0.balance >= 10 })
            try context.forEachBatch(of: request, size: 64) { accounts in
                if sizes.isEmpty {
                    // Another context deletes every row while the stream is under way.
                    Task.detached {
                        try? await container.performUnitOfWork { other in
                            try other.batchDelete(KitAccount.self, where: nil)
                            try other.save()
                        }
                        deleted.signal()
                    }
                    deleted.wait()
                }
                sizes.append(accounts.count)
                streamed += accounts.map(\.name)
            }
            var windowed: [String] = []
            try context.forEachBatch(
                of: FetchRequest<KitAccount>(fetchLimit: 150, fetchOffset: 900), size: 64
            ) { accounts in windowed += accounts.map(\.name) }
            let expected = try context.fetch(request).map(\.name)
            return (streamed, sizes, windowed, expected)
        }
        try kit.expectEqual(streamed, expected, "streamed names equal a fetch in the same perform (key order)")
        try kit.expect(expected.count > 800, "the snapshot still held the rows (\(expected.count))")
        try kit.expect(sizes.dropLast().allSatisfy { $0 == 64 } && (sizes.last ?? 0) <= 64, "batch sizes \(sizes)")
        try kit.expectEqual(windowed, (900..<1_000).map { String(format: "p%04d", $0) }, "limit and offset")
        let left = try await container.read { try $0.count(for: FetchRequest<KitAccount>()) }
        try kit.expectEqual(left, 0, "the other context's delete did commit")
    }

    static func oversizedBatches(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container, count: 55)
        let sizes = [Int.max, Int.max / 2, 1 << 32, 1 << 20, 56, 55]
        let context = container.newBackgroundContext(named: "stream")
        let batches = try await context.perform {
            var batches: [[String]] = []
            for size in sizes {
                var names: [String] = []
                var count = 0
                try context.forEachBatch(of: FetchRequest<KitAccount>(), size: size) { accounts in
                    count += 1
                    names += accounts.map(\.name)
                }
                batches.append(count == 1 ? names : ["\(count) batches"])
            }
            return batches
        }
        let all = (0..<55).map { String(format: "p%04d", $0) }
        for (size, names) in zip(sizes, batches) {
            try kit.expectEqual(names, all, "forEachBatch(size: \(size)) over 55 rows: one batch of them all")
        }
    }

    static func lifetimes(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container, count: 200)
        let context = container.newBackgroundContext(named: "stream")
        let (firstGone, changedKept, keptValues) = try await context.perform {
            weak var first: KitAccount?
            weak var changed: KitAccount?
            var batches = 0
            try context.forEachBatch(of: FetchRequest<KitAccount>(), size: 50) { accounts in
                batches += 1
                if batches == 1 {
                    first = accounts[0]
                    changed = accounts[1]
                    accounts[1].note = "changed in a batch"
                }
            }
            let gone = first == nil
            let kept = changed != nil
            // Its batch's other objects are gone: its values must still read as they were.
            let values = changed.map { "\($0.name) \($0.balance) \($0.note ?? "nil")" }
            try context.save()
            return (gone, kept, values)
        }
        try kit.expect(firstGone, "an unchanged object of a finished batch was let go")
        try kit.expect(changedKept, "a changed object stays until it is saved")
        try kit.expectEqual(keptValues, "p0001 37 changed in a batch", "the kept object's values, after its batch went")
        let notes = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.note == "changed in a batch" })).count
        }
        try kit.expectEqual(notes, 1, "the change made inside a batch was saved")
    }

    static func saveInsideBatch(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container, count: 10)
        let saving = try await kit.expectStrataError("save() inside a forEachBatch body") {
            try await container.performUnitOfWork { context in
                try context.forEachBatch(of: FetchRequest<KitAccount>(), size: 4) { accounts in
                    for account in accounts { account.balance += 1_000 }
                    try context.save()
                }
            }
        }
        guard case .misuse(let message, _) = saving, message.contains("inside forEachBatch") else {
            throw kit.fail("save() inside a batch gives .misuse naming forEachBatch, not \(saving)")
        }
        let resetting = try await kit.expectStrataError("reset() inside a forEachBatch body") {
            try await container.performUnitOfWork { context in
                try context.forEachBatch(of: FetchRequest<KitAccount>(), size: 4) { accounts in
                    for account in accounts { account.balance += 1_000 }
                    context.reset()
                }
                try context.save()
            }
        }
        guard case .misuse(let message, _) = resetting, message.contains("ended the snapshot") else {
            throw kit.fail("reset() inside a batch gives .misuse saying the snapshot ended, not \(resetting)")
        }
        func raised() async throws -> Int {
            try await container.read { context in
                try context.count(for: FetchRequest<KitAccount>(predicate: #Predicate { $0.balance >= 1_000 }))
            }
        }
        try kit.expectEqual(try await raised(), 0, "no batch's change was written")
        try await container.performUnitOfWork { context in
            try context.forEachBatch(of: FetchRequest<KitAccount>(), size: 4) { accounts in
                for account in accounts { account.balance += 1_000 }
            }
            try context.save()
        }
        try kit.expectEqual(try await raised(), 10, "the save after the loop wrote every batch's changes")
    }
}
