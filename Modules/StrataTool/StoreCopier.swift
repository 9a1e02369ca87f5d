import Foundation
import StrataStorage

/// Runs `strata copy FROM TO`: every row and link of one snapshot of the source, with its keys,
/// into a new store of any engine that takes the source's identifier and key counters; then both
/// sides' counts and checksums compared. See `Docs/StrataTool.md`.
struct StoreCopier {
    let source: String
    let target: String
    /// Rows (or links) read and written per batch.
    var batchRows = 2000
    /// Called with a progress line, when there is a terminal to show it on.
    var progress: ((String) -> Void)?

    /// Copies, verifies, and returns what was copied.
    /// - Throws: ``ToolError/destinationTaken(_:)`` for a target that holds anything,
    ///   ``ToolError/unfinishedCopy(_:)`` for the leftover of an interrupted copy,
    ///   ``ToolError/copyMismatch(_:)`` when the target does not hold what was read, and the errors
    ///   of opening the source.
    func run() throws(ToolError) -> CopyOutcome {
        let sourceInspection = try StoreArgument.inspection(for: source)
        try OpenedStore.requireSoundStructure(sourceInspection, "copied")
        let targetInspection = try StoreArgument.inspection(for: target)
        guard try StoreArgument.location(for: source) != StoreArgument.location(for: target) else {
            throw .usage("FROM and TO name the same store")
        }
        try Self.requireEmpty(targetInspection)
        let sourceMaintenance = try StoreArgument.maintenance(for: source)
        let targetMaintenance = try StoreArgument.maintenance(for: target)
        let store = try OpenedStore(sourceInspection)
        do {
            let reader = try store.engine.makeReader()
            defer { reader.close() }
            // Read after the snapshot began: counters only grow, so these cover every key it holds.
            let counters = try sourceMaintenance.readKeyCounters()
            let notCopied = try NotCopied(store)
            let written = try writeTarget(store, reader: reader, creation: StoreArgument.creation(for: target))
            try targetMaintenance.adoptIdentifier(store.record.identifier)
            let targetDigest = try Self.check(
                targetInspection, targetMaintenance, identifier: store.record.identifier, counters: counters,
                against: written)
            return CopyOutcome(
                source: sourceInspection.location, target: targetInspection.location,
                storeIdentifier: store.record.identifier.uuidString, digest: targetDigest,
                historyTransactionsNotCopied: notCopied.transactions, cursorsNotCopied: notCopied.cursors)
        } catch {
            throw ToolError.from(error)
        }
    }

    /// Refuses a target that holds a store (or anything an engine cannot take for an empty place).
    private static func requireEmpty(_ inspection: StoreInspection) throws(ToolError) {
        let record: StoreRecord?
        do {
            record = try inspection.readRecord()
        } catch {
            // Anything an engine cannot take for an empty place is taken; a missing PostgreSQL
            // database stays what `ToolError.from` makes of it everywhere.
            let mapped = ToolError.from(error)
            if case .notAStrataStore = mapped { throw .destinationTaken(inspection.location) }
            throw mapped
        }
        guard record != nil else { return }
        // The store is kept in a local: releasing it closes its engine.
        let store = try? OpenedStore(inspection)
        let unfinished = withExtendedLifetime(store) {
            store.map { (try? UnfinishedCopy.isMarked($0.engine)) == true } ?? false
        }
        throw unfinished ? .unfinishedCopy(inspection.location) : .destinationTaken(inspection.location)
    }

    /// Creates the target, marks it unfinished, copies every row and link in batches, and moves its
    /// key counters to the source's. Returns the source's digest, taken as it was read.
    private func writeTarget(
        _ store: OpenedStore, reader: any StoreReader, creation: EngineConfiguration
    ) throws -> StoreDigest {
        let engine = try creation.open(store.schema)
        defer { engine.close() }
        guard let history = engine as? any HistoryStore else {
            throw ToolError.storeFailed("the \(creation.name) engine keeps no history, which the copy needs")
        }
        do {
            try history.setHistoryCursor(UnfinishedCopy.marker, to: 0)
        } catch {
            // The new target is empty and unmarked: left, it would pass for a store copied whole.
            engine.close()
            throw Self.unmarkedTarget(target, error)
        }
        var entities: [StoreDigest.Part] = []
        for entity in store.schema.entities {
            entities.append(try copyRows(of: entity, reader: reader, into: engine))
        }
        var joins: [StoreDigest.Part] = []
        for join in store.schema.joins {
            joins.append(try copyLinks(of: join, schema: store.schema, reader: reader, into: engine))
        }
        return StoreDigest(entities: entities, joins: joins)
    }

    /// What to throw when the new target could not be marked unfinished: the engine's error, with
    /// the target removed (files of an embedded engine), or else the advice to delete it.
    private static func unmarkedTarget(_ target: String, _ error: any Error) -> ToolError {
        let cause = ToolError.from(error)
        if StoreArgument.removeNewStore(for: target) { return cause }
        return .storeFailed(
            """
            \(cause.message.dropFirst("strata: ".count)) The new, empty target could not be marked as an unfinished \
            copy: delete it before you copy again or open it
            """)
    }

    private func copyRows(
        of entity: EntitySchema, reader: any StoreReader, into engine: any StorageEngine
    ) throws -> StoreDigest.Part {
        var digest = DigestAccumulator(name: entity.name)
        let total = try reader.count(entity: entity.number, filter: nil)
        try forEachPage(of: entity.number, reader) { rows in
            var changes = ChangeSet()
            changes.inserts = rows.map {
                RowWrite(entity: entity.number, key: $0.key, expectedVersion: 0, values: $0.values)
            }
            try engine.commit(changes)
            rows.forEach { digest.add($0) }
            progress?("copying \(entity.name): \(digest.count) of \(total) rows")
        }
        return digest.part
    }

    private func copyLinks(
        of join: JoinSchema, schema: StoreSchema, reader: any StoreReader, into engine: any StorageEngine
    ) throws -> StoreDigest.Part {
        var digest = DigestAccumulator(name: join.name)
        try forEachPage(of: join.leftEntity, reader) { rows in
            var changes = ChangeSet()
            try reader.forEachLink(join: join.number, from: .left, keys: rows.map(\.key)) { left, right in
                changes.links.append(JoinLink(join: join.number, leftKey: left, rightKey: right))
                digest.add(left: left, right: right)
            }
            if !changes.links.isEmpty { try engine.commit(changes) }
            progress?("copying \(join.name): \(digest.count) links")
        }
        return digest.part
    }

    private func forEachPage(of entity: Int, _ reader: any StoreReader, _ body: ([StoredRow]) throws -> Void) throws {
        try Self.forEachPage(of: entity, reader, rows: batchRows, body)
    }

    /// Calls `body` with each page of at most `rows` rows of `entity`, in key order, each page read
    /// after the last key of the one before (so memory holds one page).
    static func forEachPage(
        of entity: Int, _ reader: any StoreReader, rows: Int, _ body: ([StoredRow]) throws -> Void
    ) throws {
        var after: Int64?
        while true {
            let plan = FetchPlan(
                entity: entity, filter: after.map { .primaryKey(.greaterThan, $0) }, limit: max(rows, 1))
            let page = try reader.rows(for: plan)
            guard let last = page.last else { return }
            try body(page)
            after = last.key
        }
    }

    /// Opens the finished target from its recorded schema, moves its key counters up to the
    /// source's, compares its identifier, counters, counts and checksums with what was read, and
    /// removes the unfinished marker.
    private static func check(
        _ inspection: StoreInspection, _ maintenance: StoreMaintenance, identifier: UUID,
        counters: [String: Int64], against source: StoreDigest
    ) throws -> StoreDigest {
        let store = try OpenedStore(inspection)
        var problems: [String] = []
        if store.record.identifier != identifier {
            problems.append("the target's identifier is \(store.record.identifier), not \(identifier)")
        }
        let before = try maintenance.readKeyCounters()
        for entity in store.schema.entities {
            let wanted = counters[entity.name] ?? 1
            guard (before[entity.name] ?? 1) < wanted else { continue }
            // Hand out every key below the source's counter, so the target's passes it.
            let first = try store.engine.allocateKeys(entity: entity.number, count: 1).lowerBound
            if first + 1 < wanted {
                _ = try store.engine.allocateKeys(entity: entity.number, count: Int(wanted - first - 1))
            }
        }
        let after = try maintenance.readKeyCounters()
        for entity in store.schema.entities {
            let (reached, wanted) = (after[entity.name] ?? 1, counters[entity.name] ?? 1)
            if reached < wanted {
                problems.append("\(entity.name)'s next key is \(reached), below the source's \(wanted)")
            }
        }
        let digest = try store.read { try StoreDigest(reading: store.schema, $0) }
        problems += digest.differences(from: source)
        guard problems.isEmpty else { throw ToolError.copyMismatch(problems.joined(separator: "; ")) }
        try store.engine.setHistoryCursor(UnfinishedCopy.marker, to: nil)
        return digest
    }
}
