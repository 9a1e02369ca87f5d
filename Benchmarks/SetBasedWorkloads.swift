import Foundation
import Glibc
import Strata
import StrataPostgres

/// A Strata store of ``SetBasedSchema`` in its own scratch directory, on one engine.
final class SetStore: Sendable {
    let directory: URL
    let container: PersistentContainer

    /// Creates an empty store (or, with `schema`, opens the PostgreSQL store of that schema)
    /// whose saves record persistent history unless `recordsHistory` is false.
    init(_ engine: EngineChoice, in directory: URL, schema: String? = nil, recordsHistory: Bool = true) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        let configuration: EngineConfiguration =
            if let schema, engine == .postgres, let url = BenchmarkPostgres.url {
                .postgres(url: url, schema: schema, options: BenchmarkPostgres.options)
            } else {
                StrataStore.configuration(engine, in: directory)
            }
        container = try PersistentContainer(
            schema: try SetBasedSchema.make(), engine: configuration, recordsHistory: recordsHistory)
    }
}

/// The Strata side of workloads 15–20, each two ways: with the set-based API (the measured
/// figure) and as the same job through the object graph (fetch objects, change them, save), to
/// show what the set-based call gains. Every job runs whole inside one `perform` of a fresh
/// context, timed with its teardown, and returns a checksum of what it did.
enum SetBasedWorkloads {
    // MARK: 15. Insert

    static func batchInsert(_ store: SetStore, _ data: SetDataset) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            try context.batchInsert(BenchEntry.self, from: 0..<data.rowCount) { i, row in
                row[\.externalID] = data.externalID(i)
                row[\.category] = data.category(i)
                row[\.amount] = data.amounts[i]
                row[\.note] = data.notes[i]
            }
            try context.save()
            return Checksum(count: context.savedBatches.reduce(0) { $0 + $1.insertedCount })
        }
    }

    static func objectInsert(_ store: SetStore, _ data: SetDataset) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            for i in 0..<data.rowCount {
                let entry = BenchEntry(context: context)
                entry.externalID = data.externalID(i)
                entry.category = data.category(i)
                entry.amount = data.amounts[i]
                entry.note = data.notes[i]
            }
            try context.save()
            return Checksum(count: data.rowCount)
        }
    }

    /// The lines (not timed): one per ``SetDataset/lineEvery`` entries, to the entries in key
    /// order (the insert's order).
    static func insertLines(_ store: SetStore, _ data: SetDataset) async throws {
        let context = store.container.newBackgroundContext()
        try await context.perform {
            let entries = try context.fetchObjectIDs(FetchRequest<BenchEntry>())
            guard entries.count == data.rowCount else {
                throw BenchmarkError.mismatch("expected \(data.rowCount) entries, found \(entries.count)")
            }
            try context.batchInsert(BenchEntryLine.self, from: 0..<data.lineCount) { j, row in
                row[\.label] = data.lineLabel(j)
                row[\.entry] = entries[data.lineEntry(j)]
            }
            try context.save()
        }
    }

    // MARK: 16. Upsert

    static func batchUpsert(_ store: SetStore, _ rows: UpsertRows) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            try context.batchInsert(
                BenchEntry.self, from: 0..<rows.count,
                onConflict: .update(matching: [\.externalID], setting: [\.amount, \.note])
            ) { k, row in
                row[\.externalID] = rows.externalIDs[k]
                row[\.category] = rows.categories[k]
                row[\.amount] = rows.amounts[k]
                row[\.note] = rows.notes[k]
            }
            try context.save()
            let result = context.savedBatches.reduce(0) { $0 + $1.insertedCount + $1.updatedCount }
            return Checksum(count: result)
        }
    }

    /// The upsert through objects: fetch the entries with these external IDs, change those
    /// found, insert the others.
    static func objectUpsert(_ store: SetStore, _ rows: UpsertRows) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            let ids = rows.externalIDs
            let found = try context.fetch(
                FetchRequest<BenchEntry>(predicate: #Predicate { ids.contains($0.externalID) }))
            var byID: [Int64: BenchEntry] = [:]
            byID.reserveCapacity(found.count)
            for entry in found { byID[entry.externalID] = entry }
            for k in 0..<rows.count {
                if let entry = byID[rows.externalIDs[k]] {
                    entry.amount = rows.amounts[k]
                    entry.note = rows.notes[k]
                } else {
                    let entry = BenchEntry(context: context)
                    entry.externalID = rows.externalIDs[k]
                    entry.category = rows.categories[k]
                    entry.amount = rows.amounts[k]
                    entry.note = rows.notes[k]
                }
            }
            try context.save()
            return Checksum(count: rows.count)
        }
    }

    // MARK: 17. Update

    static func batchUpdate(_ store: SetStore, category: String) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            try context.batchUpdate(
                BenchEntry.self, where: #Predicate { $0.category == category }, set: [.add(\.amount, 1)])
            try context.save()
            return Checksum(count: context.savedBatches.reduce(0) { $0 + $1.updatedCount })
        }
    }

    static func objectUpdate(_ store: SetStore, category: String) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            let entries = try context.fetch(FetchRequest<BenchEntry>(predicate: #Predicate { $0.category == category }))
            for entry in entries { entry.amount += 1 }
            try context.save()
            return Checksum(count: entries.count)
        }
    }

    // MARK: 18. Delete

    static func batchDelete(_ store: SetStore, category: String) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            try context.batchDelete(BenchEntry.self, where: #Predicate { $0.category == category })
            try context.save()
            return Checksum(count: context.savedBatches.reduce(0) { $0 + $1.deletedCount })
        }
    }

    /// The delete through objects: fetch the entries, delete each; the save cascades to their
    /// lines through the object graph.
    static func objectDelete(_ store: SetStore, category: String) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            let entries = try context.fetch(FetchRequest<BenchEntry>(predicate: #Predicate { $0.category == category }))
            var deleted = entries.count
            for entry in entries {
                deleted += entry.lines.count
                context.delete(entry)
            }
            try context.save()
            return Checksum(count: deleted)
        }
    }

    // MARK: 19. Grouped sum

    static func groupedSum(_ store: SetStore) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in try groupedSum(in: context) }
    }

    static func groupedSum(in context: ObjectContext) throws -> Checksum {
        let rows = try context.aggregate(FetchRequest<BenchEntry>(), groupedBy: [\.category], [.sum(\.amount)])
        return Checksum(groups: rows.map { ($0.group[0].string ?? "", $0.values[0].integer ?? 0) })
    }

    static func objectGroupedSum(_ store: SetStore) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in try objectGroupedSum(in: context) }
    }

    /// Fetches every entry and sums in a dictionary.
    static func objectGroupedSum(in context: ObjectContext) throws -> Checksum {
        var sums: [String: Int64] = [:]
        for entry in try context.fetch(FetchRequest<BenchEntry>()) { sums[entry.category, default: 0] &+= entry.amount }
        return Checksum(groups: sums.map { ($0.key, $0.value) })
    }

    // MARK: 20. Streaming

    static func stream(_ store: SetStore) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in try stream(in: context, sample: {}) }
    }

    /// Reads every attribute of every entry, 1,000 objects a batch; `sample` runs every 10 batches.
    static func stream(in context: ObjectContext, sample: () -> Void) throws -> Checksum {
        var sum = Checksum()
        var batches = 0
        try context.forEachBatch(of: FetchRequest<BenchEntry>(), size: 1_000) { entries in
            for entry in entries {
                sum.addEntry(
                    externalID: entry.externalID, category: entry.category.utf8.count, amount: entry.amount,
                    note: entry.note)
            }
            batches += 1
            if batches % 10 == 0 { sample() }
        }
        return sum
    }

    /// The same read as one fetch of every entry, held until the end.
    static func objectStream(_ store: SetStore) async throws -> (UInt64, Checksum?) {
        try await timed(store) { context in
            var sum = Checksum()
            for entry in try context.fetch(FetchRequest<BenchEntry>()) {
                sum.addEntry(
                    externalID: entry.externalID, category: entry.category.utf8.count, amount: entry.amount,
                    note: entry.note)
            }
            return sum
        }
    }

    // MARK: Timing

    /// Times `body` in a fresh context with the context's teardown, as
    /// ``StrataWorkloads/timedInFreshContext(_:_:)`` does.
    static func timed(
        _ store: SetStore, _ body: @escaping @Sendable (ObjectContext) throws -> Checksum
    ) async throws -> (UInt64, Checksum?) {
        let (nanoseconds, sum) = try await Clock.time {
            var context: ObjectContext? = store.container.newBackgroundContext()
            let sum = try await perform(body, in: context!)
            while !isKnownUniquelyReferenced(&context) { sched_yield() }
            context = nil
            return sum
        }
        return (nanoseconds, sum)
    }

    private static func perform(
        _ body: @escaping @Sendable (ObjectContext) throws -> Checksum, in context: ObjectContext
    ) async throws -> Checksum {
        try await context.perform { try body(context) }
    }
}
