import Foundation
import Strata
import StrataStorage

/// The engine contract's commit, checked on the engine itself: change sets written straight to
/// ``StorageEngine/commit(_:)`` and read back through ``StoreReader``, with no context in
/// between (``EngineCommitSchema``). What the core relies on when it saves: versions, the full
/// list of conflicts, uniqueness, the shape of rows, serial commits and stable snapshots.
enum EngineCommitChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Engine commits", "updates and touches bump versions, and a filter sees the new values", versions),
        ConformanceCheck(
            "Engine commits", "every version mismatch is reported in one .conflict and nothing is written", conflicts),
        ConformanceCheck(
            "Engine commits",
            "a unique violation writes nothing, in the store or inside one change set; nulls never conflict",
            uniqueness),
        ConformanceCheck(
            "Engine commits", "deleting or renaming a unique value frees it for the same change set", uniqueSwap),
        ConformanceCheck("Engine commits", "rows of the wrong shape or an unknown entity are .misuse", shapes),
        ConformanceCheck("Engine commits", "commits from many threads are serialised, with distinct keys", serial),
        ConformanceCheck("Engine commits", "a reader's snapshot does not move while other commits land", snapshot),
    ]

    /// An engine with accounts 1 "Checking" (balance 100) and 2 "Savings" (5, memo "memo").
    static func seeded(_ kit: ConformanceHarness) throws -> any StorageEngine {
        let engine = try kit.configuration.open(EngineCommitSchema.schema)
        do {
            try engine.commit(
                EngineCommitSchema.inserts([
                    EngineCommitSchema.account(1, "Checking", balance: 100),
                    EngineCommitSchema.account(2, "Savings", balance: 5, memo: "memo"),
                ]))
        } catch {
            engine.close()
            throw error
        }
        return engine
    }

    static func versions(_ kit: ConformanceHarness) async throws {
        let engine = try seeded(kit)
        defer { engine.close() }
        var changes = ChangeSet()
        changes.updates = [EngineCommitSchema.account(1, "Checking 2", balance: 50, memo: "x", version: 1)]
        changes.touches = [RowVersionCheck(entity: EngineCommitSchema.account, key: 2, expectedVersion: 1)]
        try engine.commit(changes)
        let rows = try EngineCommitSchema.rows(engine, EngineCommitSchema.account)
        try kit.expectEqual(rows.map(\.version), [2, 2], "versions after an update and a touch")
        try kit.expectEqual(rows[0].values, [.text("Checking 2"), .integer(50), .text("x")], "the updated row")
        try kit.expectEqual(rows[1].values, [.text("Savings"), .integer(5), .text("memo")], "the touched row")
        let reader = try engine.makeReader()
        defer { reader.close() }
        let old = try reader.rows(for: FetchPlan(entity: 0, filter: .compare(column: 0, .equal, .text("Checking"))))
        try kit.expect(old.isEmpty, "a filter on the old name finds nothing, found \(old.map(\.key))")
        let new = try reader.rows(for: FetchPlan(entity: 0, filter: .compare(column: 0, .equal, .text("Checking 2"))))
        try kit.expectEqual(new.map(\.key), [1], "a filter on the new name")
    }

    static func conflicts(_ kit: ConformanceHarness) async throws {
        let engine = try seeded(kit)
        defer { engine.close() }
        var bump = ChangeSet()
        bump.touches = [RowVersionCheck(entity: EngineCommitSchema.account, key: 2, expectedVersion: 1)]
        try engine.commit(bump)
        let before = try EngineCommitSchema.rows(engine, EngineCommitSchema.account)

        var changes = ChangeSet()
        changes.updates = [
            EngineCommitSchema.account(1, "Checking 2", balance: 9, version: 1), // fine
            EngineCommitSchema.account(2, "Savings 2", version: 1), // stale: stored 2
        ]
        changes.deletes = [RowVersionCheck(entity: EngineCommitSchema.account, key: 77, expectedVersion: 1)] // missing
        changes.inserts = [EngineCommitSchema.account(3, "New")] // fine
        changes.links = [JoinLink(join: 0, leftKey: 1, rightKey: 1)]
        let error = try kit.expectStrataError("a commit with a stale update and a missing delete") {
            try engine.commit(changes)
        }
        guard case .conflict(let conflicts) = error else {
            throw kit.fail("expected .conflict, got \(error)")
        }
        let found = Set(
            conflicts.map { conflict in
                let stored = conflict.storedVersion.map(String.init) ?? "none"
                return
                    "\(conflict.objectID.entityName)/\(conflict.objectID.primaryKey ?? 0): "
                    + "\(conflict.expectedVersion) → \(stored)"
            })
        try kit.expectEqual(found, ["Account/2: 1 → 2", "Account/77: 1 → none"], "the conflicts")
        try kit.expect(
            conflicts.allSatisfy { $0.objectID.storeIdentifier == engine.storeIdentifier },
            "every conflict names this store")
        try kit.expectEqual(try EngineCommitSchema.rows(engine, EngineCommitSchema.account), before, "stored accounts")
        let reader = try engine.makeReader()
        defer { reader.close() }
        try kit.expectEqual(try reader.linkedKeys(join: 0, from: .left, key: 1), [], "links of account 1")

        // A stale touch alone is a conflict too, and an insert over a stored key is one.
        var touch = ChangeSet()
        touch.touches = [RowVersionCheck(entity: EngineCommitSchema.account, key: 1, expectedVersion: 5)]
        let stale = try kit.expectStrataError("a stale touch") { try engine.commit(touch) }
        guard case .conflict(let touched) = stale, touched.map(\.objectID.primaryKey) == [1] else {
            throw kit.fail("a stale touch: expected one .conflict naming account 1, got \(stale)")
        }
        let over = try kit.expectStrataError("an insert over a stored key") {
            try engine.commit(EngineCommitSchema.inserts([EngineCommitSchema.account(1, "Other")]))
        }
        guard case .conflict(let inserted) = over, inserted.map(\.objectID.primaryKey) == [1],
            inserted.first?.expectedVersion == 0
        else {
            throw kit.fail("an insert over a stored key: expected one .conflict naming account 1, got \(over)")
        }
        // Both in one change set: the one .conflict lists the stale update and the taken key.
        var both = ChangeSet()
        both.updates = [EngineCommitSchema.account(2, "Savings 3", version: 1)] // stale: stored 2
        both.inserts = [EngineCommitSchema.account(1, "Other"), EngineCommitSchema.account(4, "Fine")]
        let mixed = try kit.expectStrataError("a stale update and an insert over a stored key") {
            try engine.commit(both)
        }
        guard case .conflict(let listed) = mixed, Set(listed.compactMap(\.objectID.primaryKey)) == [1, 2],
            listed.count == 2
        else {
            throw kit.fail(
                "a stale update and an insert over a stored key: expected a .conflict naming accounts 1 and 2, "
                    + "got \(mixed)")
        }
        // A taken key is a conflict even when a unique value clashes first in the same commit.
        let clashing = try kit.expectStrataError("an insert of a taken name before an insert over a stored key") {
            try engine.commit(
                EngineCommitSchema.inserts([
                    EngineCommitSchema.account(5, "Savings"), EngineCommitSchema.account(1, "Other"),
                ]))
        }
        guard case .conflict(let taken) = clashing, taken.map(\.objectID.primaryKey) == [1] else {
            throw kit.fail("a unique clash and a taken key: expected a .conflict naming account 1, got \(clashing)")
        }
        try kit.expectEqual(try EngineCommitSchema.rows(engine, EngineCommitSchema.account), before, "stored accounts")
    }

    static func uniqueness(_ kit: ConformanceHarness) async throws {
        let engine = try seeded(kit)
        defer { engine.close() }
        let before = try EngineCommitSchema.rows(engine, EngineCommitSchema.account)
        var changes = EngineCommitSchema.inserts([
            EngineCommitSchema.account(3, "Fresh"), EngineCommitSchema.account(4, "Savings"),
        ])
        changes.updates = [EngineCommitSchema.account(1, "Checking", balance: 1, version: 1)]
        let error = try kit.expectStrataError("an insert taking a stored unique name") { try engine.commit(changes) }
        try kit.expectEqual(
            error.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "the error")
        try kit.expect(error.native != nil, "the error keeps the engine's own code and message: \(error)")
        try kit.expectEqual(try EngineCommitSchema.rows(engine, EngineCommitSchema.account), before, "stored accounts")

        let rename = try kit.expectStrataError("an update taking a stored unique name") {
            var changes = ChangeSet()
            changes.updates = [EngineCommitSchema.account(1, "Savings", version: 1)]
            try engine.commit(changes)
        }
        try kit.expectEqual(
            rename.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "the rename's error")
        let twice = try kit.expectStrataError("two inserts of one name in one change set") {
            try engine.commit(
                EngineCommitSchema.inserts([
                    EngineCommitSchema.account(5, "Same"), EngineCommitSchema.account(6, "Same"),
                ]))
        }
        try kit.expectEqual(
            twice.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "the error of two")
        try kit.expectEqual(try EngineCommitSchema.rows(engine, EngineCommitSchema.account), before, "stored accounts")

        let nulls = (Int64(1)...3).map {
            RowWrite(entity: EngineCommitSchema.sample, key: $0, expectedVersion: 0, values: [.null])
        }
        try engine.commit(EngineCommitSchema.inserts(nulls))
        try kit.expectEqual(
            try EngineCommitSchema.rows(engine, EngineCommitSchema.sample).count, 3, "rows with a null unique code")
    }

    static func uniqueSwap(_ kit: ConformanceHarness) async throws {
        let engine = try seeded(kit)
        defer { engine.close() }
        var reinsert = EngineCommitSchema.inserts([EngineCommitSchema.account(3, "Checking")])
        reinsert.deletes = [RowVersionCheck(entity: EngineCommitSchema.account, key: 1, expectedVersion: 1)]
        try engine.commit(reinsert)
        var swap = ChangeSet()
        swap.deletes = [RowVersionCheck(entity: EngineCommitSchema.account, key: 2, expectedVersion: 1)]
        swap.updates = [EngineCommitSchema.account(3, "Savings", version: 1)]
        try engine.commit(swap)
        let rows = try EngineCommitSchema.rows(engine, EngineCommitSchema.account)
        try kit.expectEqual(rows.map(\.key), [3], "keys left")
        try kit.expectEqual(rows.first?.values.first, .text("Savings"), "the name account 3 took")
        try kit.expectEqual(rows.first?.version, 2, "account 3's version")
    }

    static func shapes(_ kit: ConformanceHarness) async throws {
        let engine = try seeded(kit)
        defer { engine.close() }
        let before = try EngineCommitSchema.rows(engine, EngineCommitSchema.account)
        let wrong: [(String, RowWrite)] = [
            (
                "an integer in a text column",
                RowWrite(
                    entity: EngineCommitSchema.account, key: 9, expectedVersion: 0,
                    values: [.integer(1), .integer(0), .null])
            ),
            (
                "a row with too few values",
                RowWrite(entity: EngineCommitSchema.account, key: 9, expectedVersion: 0, values: [.text("x")])
            ),
            (
                "a null in a column that is not optional",
                RowWrite(
                    entity: EngineCommitSchema.account, key: 9, expectedVersion: 0, values: [.null, .integer(0), .null])
            ),
            ("an unknown entity", RowWrite(entity: 9, key: 1, expectedVersion: 0, values: [])),
        ]
        for (what, row) in wrong {
            let error = try kit.expectStrataError(what) { try engine.commit(EngineCommitSchema.inserts([row])) }
            guard case .misuse = error else { throw kit.fail("\(what): expected .misuse, got \(error)") }
        }
        try kit.expectEqual(try EngineCommitSchema.rows(engine, EngineCommitSchema.account), before, "stored accounts")
    }

    static func serial(_ kit: ConformanceHarness) async throws {
        let engine = try kit.configuration.open(EngineCommitSchema.schema)
        defer { engine.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<20 {
                        let keys = try engine.allocateKeys(entity: EngineCommitSchema.txn, count: 3)
                        let rows = keys.map {
                            EngineCommitSchema.txn($0, amount: Int64(worker * 100 + step), account: nil)
                        }
                        try engine.commit(EngineCommitSchema.inserts(rows))
                    }
                }
            }
            try await group.waitForAll()
        }
        let rows = try EngineCommitSchema.rows(engine, EngineCommitSchema.txn)
        try kit.expectEqual(rows.count, 8 * 20 * 3, "rows committed by 8 tasks")
        try kit.expectEqual(Set(rows.map(\.key)).count, rows.count, "distinct keys")
        try kit.expect(rows.allSatisfy { $0.version == 1 }, "every inserted row at version 1")
    }

    static func snapshot(_ kit: ConformanceHarness) async throws {
        let engine = try seeded(kit)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let before = try reader.rows(for: FetchPlan(entity: EngineCommitSchema.account))
        var changes = EngineCommitSchema.inserts([EngineCommitSchema.account(3, "Third", balance: 3)])
        changes.updates = [EngineCommitSchema.account(1, "Changed", version: 1)]
        try engine.commit(changes)
        try kit.expectEqual(
            try reader.rows(for: FetchPlan(entity: EngineCommitSchema.account)), before, "the reader's rows")
        try kit.expectEqual(try reader.count(entity: EngineCommitSchema.account, filter: nil), 2, "the reader's count")
        try kit.expect(try reader.row(entity: EngineCommitSchema.account, key: 3) == nil, "the reader sees no row 3")
        try kit.expectEqual(
            try EngineCommitSchema.rows(engine, EngineCommitSchema.account).count, 3, "rows a new reader sees")
    }
}
