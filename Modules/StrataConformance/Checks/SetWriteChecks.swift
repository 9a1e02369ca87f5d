import Foundation
import Strata
import StrataStorage

/// The engine's set writes (`ChangeSet.setWrites`, `SetWritingEngine`): updates computed from the
/// rows' own values, deletes by filter and by the keys an earlier delete removed, deny steps and
/// upserts, run inside the commit's transaction after its row writes, all or nothing, with their
/// history, versions and unique indexes.
enum SetWriteChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Set writes",
            """
            an update adds, multiplies and sets from each row's own values, after the change set's row writes, \
            bumps versions, skips rows it would not change, and records history with the assigned columns
            """,
            update),
        ConformanceCheck(
            "Set writes",
            "an integer overflow, a unique clash or a bad set write fails the whole commit and writes nothing",
            failures),
        ConformanceCheck(
            "Set writes",
            """
            a delete by filter returns tombstones, drops join links, and later steps cascade to and clear the \
            links of the rows it removed; a deny step that finds rows fails the commit naming the holders
            """,
            deletes),
        ConformanceCheck(
            "Set writes",
            """
            an upsert inserts new rows with their keys, updates or ignores rows whose unique values are taken, \
            keeps other unique indexes, and records inserts and updates in history
            """,
            upserts),
    ]

    /// The engine of the check's store, which must run set writes.
    static func engine(_ kit: ConformanceHarness) throws -> any SetWritingEngine {
        let engine = try kit.configuration.open(KitModels.schema.storeSchema)
        guard let setWriting = engine as? any SetWritingEngine, setWriting.acceptsSetWrites else {
            engine.close()
            throw kit.fail("the engine does not run set writes (SetWritingEngine with acceptsSetWrites)")
        }
        return setWriting
    }

    static func row(_ engine: any StorageEngine, _ entity: Int, _ key: Int64) throws -> StoredRow? {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.row(entity: entity, key: key)
    }

    static func lastHistory(_ engine: any StorageEngine, after token: Int64) throws -> [HistoryChange] {
        guard let history = engine as? any HistoryStore else { return [] }
        return try history.history(after: token, limit: nil).flatMap(\.changes)
    }

    static func token(_ engine: any StorageEngine) throws -> Int64 {
        try (engine as? any HistoryStore)?.currentHistoryToken() ?? 0
    }

    // MARK: Update

    static func update(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let names = AggregateEngineChecks.Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let entry = try names.entity("Entry")
        let amount = try names.column(entry, "amount")
        let memo = try names.column(entry, "memo")
        let ids = try await container.performUnitOfWork { context in
            let items = (0..<6).map { index in
                let item = KitEntry(context: context)
                item.amount = Int64(index * 10)
                item.memo = index == 4 ? "same" : "m\(index)"
                return item
            }
            try context.save()
            return items.map(\.objectID)
        }
        let keys = ids.compactMap(\.primaryKey)
        let engine = try engine(kit)
        defer { engine.close() }
        let start = try token(engine)

        // A row insert in the same change set (amount 40) is seen by the set write, which runs after it.
        let insertedKey = try engine.allocateKeys(entity: entry.number, count: 1).lowerBound
        var values = ContiguousArray<StoredValue>(repeating: .null, count: entry.columns.count)
        values[amount] = .integer(40)
        values[memo] = .text("new")
        var changes = ChangeSet()
        changes.history = HistoryRecord(
            author: "kit",
            changes: [HistoryChange(entity: "Entry", key: insertedKey, kind: .insert, changedProperties: [])])
        changes.inserts = [RowWrite(entity: entry.number, key: insertedKey, expectedVersion: 0, values: values)]
        changes.setWrites = [
            SetWrite(
                entity: entry.number, selection: .matching(.compare(column: amount, .greaterThanOrEqual, .integer(30))),
                action: .update([SetWrite.ColumnAssignment(column: amount, .add(.integer(5)))])),
            SetWrite(
                entity: entry.number, selection: .matching(.compare(column: amount, .lessThan, .integer(20))),
                action: .update([
                    SetWrite.ColumnAssignment(column: amount, .multiply(.integer(3))),
                    SetWrite.ColumnAssignment(column: memo, .value(.text("small"))),
                ])),
            // Sets the memo the row already has: nothing changes, nothing is listed.
            SetWrite(
                entity: entry.number, selection: .matching(.compare(column: memo, .equal, .text("same"))),
                action: .update([SetWrite.ColumnAssignment(column: memo, .value(.text("same")))])),
        ]
        let results = try engine.commitReturningResults(changes)
        try kit.expectEqual(results.count, 3, "one result per set write")
        try kit.expectEqual(
            Set(results[0].keys), Set([keys[3], keys[4], keys[5], insertedKey]),
            "rows with amount >= 30, the new one too")
        try kit.expectEqual(Set(results[1].keys), Set([keys[0], keys[1]]), "rows with amount < 20")
        try kit.expectEqual(results[2].keys, [], "rows the update would not change")

        let expected: [(key: Int64, amount: Int64, memo: String, version: Int64)] = [
            (keys[0], 0, "small", 2), (keys[1], 30, "small", 2), (keys[2], 20, "m2", 1), (keys[3], 35, "m3", 2),
            (keys[4], 45, "same", 2), (keys[5], 55, "m5", 2), (insertedKey, 45, "new", 2),
        ]
        for item in expected {
            guard let stored = try row(engine, entry.number, item.key) else {
                throw kit.fail("row \(item.key) is gone")
            }
            try kit.expectEqual(stored.values[amount], .integer(item.amount), "amount of row \(item.key)")
            try kit.expectEqual(stored.values[memo], .text(item.memo), "memo of row \(item.key)")
            try kit.expectEqual(stored.version, item.version, "version of row \(item.key)")
        }

        // A context that read a row before the set write changed it gets a conflict.
        var stale = ChangeSet()
        stale.updates = [RowWrite(entity: entry.number, key: keys[3], expectedVersion: 1, values: values)]
        let conflict = try kit.expectStrataError("a row write at the version before the set write") {
            try engine.commit(stale)
        }
        guard case .conflict = conflict else { throw kit.fail("expected .conflict, got \(conflict)") }

        guard engine is any HistoryStore else { return }
        let changed = try lastHistory(engine, after: start)
        let updates = changed.filter { $0.kind == .update }
        try kit.expectEqual(updates.count, 6, "history lists each updated row once per set write")
        try kit.expect(
            updates.contains { $0.key == keys[1] && $0.changedProperties == ["amount", "memo"] },
            "history of the second update names its assigned attributes: \(updates)")
        try kit.expect(
            changed.contains { $0.kind == .insert && $0.key == insertedKey }, "the row insert is in the same history")
    }

    // MARK: Failures

    static func failures(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let names = AggregateEngineChecks.Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let account = try names.entity("Account")
        let name = try names.column(account, "name")
        let balance = try names.column(account, "balance")
        let north = try await container.makeAccount("north", balance: Int64.max - 1)
        let south = try await container.makeAccount("south", balance: 7)
        let engine = try engine(kit)
        defer { engine.close() }
        let start = try token(engine)
        let insertedKey = try engine.allocateKeys(entity: account.number, count: 1).lowerBound
        var values = ContiguousArray<StoredValue>(repeating: .null, count: account.columns.count)
        for (index, column) in account.columns.enumerated() where !column.isOptional {
            values[index] = column.type.storageClass == .text ? .text("x") : .integer(0)
        }
        values[name] = .text("east")
        func attempt(_ setWrites: [SetWrite]) throws -> StrataError {
            var changes = ChangeSet()
            changes.history = HistoryRecord(author: "kit", changes: [])
            changes.inserts = [RowWrite(entity: account.number, key: insertedKey, expectedVersion: 0, values: values)]
            changes.setWrites = setWrites
            return try kit.expectStrataError("a failing set write") { _ = try engine.commitReturningResults(changes) }
        }
        let all = SetWrite.Selection.matching(nil)

        let overflow = try attempt([
            SetWrite(
                entity: account.number, selection: all, action: .update([.init(column: balance, .add(.integer(2)))]))
        ])
        guard case .validation(let issues) = overflow, issues.first?.message.contains("64-bit") == true,
            issues.first?.message.contains(north.uriString) == true
        else { throw kit.fail("an integer overflow: expected .validation naming \(north.uriString), got \(overflow)") }

        let clash = try attempt([
            SetWrite(
                entity: account.number, selection: all, action: .update([.init(column: name, .value(.text("one")))]))
        ])
        guard case .constraintViolation(let entity, let attributes, _) = clash, entity == "Account",
            attributes == ["name"]
        else { throw kit.fail("two rows given one unique name: expected .constraintViolation, got \(clash)") }

        let misuse = try attempt([
            SetWrite(
                entity: account.number, selection: .referencing(column: 0, deletedBy: 0),
                action: .delete(tombstoneColumns: []))
        ])
        guard case .misuse = misuse else {
            throw kit.fail("a set write that selects by itself: expected .misuse, got \(misuse)")
        }

        for id in [north, south] {
            let stored = try row(engine, account.number, id.primaryKey ?? 0)
            try kit.expectEqual(stored?.version, 1, "\(id.uriString) untouched by the failed commits")
        }
        try kit.expect(
            try row(engine, account.number, insertedKey) == nil, "the failed commits' row insert is not written")
        try kit.expectEqual(try lastHistory(engine, after: start), [], "failed commits leave no history")
    }

    // MARK: Deletes
}
