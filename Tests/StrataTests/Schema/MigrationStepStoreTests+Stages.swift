import Foundation
import Strata
import StrataStorage
import Synchronization
import Testing

/// A custom stage's closures use the engine they are given directly: reads, key allocation and
/// commits inside the migration's one transaction.
extension MigrationStepStoreTests {
    /// A version-1 `Note` store holding Dune (key 1) and Solaris (key 2), both at version 1.
    private func makeNotes(_ kind: EngineKind) async throws -> TestStore {
        let store = try TestStore(kind)
        let container = try store.open(schema: RecordedSchemaModels.note(version: 1))
        let context = container.newBackgroundContext()
        try await context.perform {
            for title in ["Dune", "Solaris"] { RSNote(context: context).title = title }
            try context.save()
        }
        container.close()
        return store
    }

    /// Every row of entity 0 through `engine`, by key.
    private static func notes(_ engine: any StorageEngine) throws -> [StoredRow] {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: 0)).sorted { $0.key < $1.key }
    }

    /// The bytes of the store's main file (on PostgreSQL, every row of its schema).
    private static func storeBytes(_ store: TestStore) throws -> Data {
        switch store.kind {
        case .memory: throw EngineKind.noStoreFiles
        case .sqlite: try Data(contentsOf: store.directory.appendingPathComponent("store.sqlite"))
        case .lmdb: try Data(contentsOf: store.directory.appendingPathComponent("store.lmdb/data.mdb"))
        case .postgres: Data(try PostgresSQL().dump(schema: store.postgresSchema).joined(separator: "\n").utf8)
        }
    }

    /// Notes v1 (title) → v2 (title, shelf = "unsorted") as one custom stage.
    private static func customStage(
        willMigrate: (@Sendable (any StorageEngine) throws -> Void)?,
        didMigrate: (@Sendable (any StorageEngine) throws -> Void)?
    ) throws -> StoreSchema {
        let v1 = try RecordedSchemaModels.note(version: 1).storeSchema
        var v2 = try Schema(version: 2, [IMNoteWithShelf.self]).storeSchema
        v2.migrationPlan = try StoreMigrationPlan(
            versions: [v1, v2], stages: [.custom(from: 1, to: 2, willMigrate: willMigrate, didMigrate: didMigrate)])
        return v2
    }

    private struct StageFailure: Error {}

    /// What a stage's closure saw: its engine's schema version and every row's values.
    private struct Sight: Sendable, Equatable {
        var version: Int
        var values: [ContiguousArray<StoredValue>]
    }

    @Test(arguments: EngineKind.allCases)
    func aCustomStageWritesThroughItsEngineAndCommitsWithTheSchemaChange(kind: EngineKind) async throws {
        let store = try await makeNotes(kind)
        let seen = Mutex<[Sight]>([])
        let staleWentThrough = Mutex(false)
        let kept = Mutex<(any StorageEngine)?>(nil)
        let schema = try Self.customStage(
            willMigrate: { engine in
                // Laid out as version 1: one column.
                let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
                var changes = ChangeSet()
                changes.inserts = [RowWrite(entity: 0, key: key, expectedVersion: 0, values: [.text("Ubik")])]
                changes.updates = [RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Dune (1965)")])]
                try engine.commit(changes)
                let rows = try Self.notes(engine)
                seen.withLock { $0.append(Sight(version: engine.schemaVersion, values: rows.map(\.values))) }
            },
            didMigrate: { engine in
                // Laid out as version 2: the shelf column, filled with its default by the schema change.
                let rows = try Self.notes(engine)
                seen.withLock { $0.append(Sight(version: engine.schemaVersion, values: rows.map(\.values))) }
                // A commit that fails (a stale version) is undone alone, its insert too.
                var stale = ChangeSet()
                let spare = try engine.allocateKeys(entity: 0, count: 1).lowerBound
                stale.inserts = [RowWrite(entity: 0, key: spare, expectedVersion: 0, values: [.text("x"), .text("x")])]
                stale.updates = [RowWrite(entity: 0, key: 2, expectedVersion: 9, values: [.text("x"), .text("x")])]
                do {
                    try engine.commit(stale)
                    staleWentThrough.withLock { $0 = true }
                } catch let error as StrataError {
                    guard case .conflict = error else { throw error }
                }
                var shelve = ChangeSet()
                shelve.updates = rows.map {
                    RowWrite(entity: 0, key: $0.key, expectedVersion: $0.version, values: [$0.values[0], .text("sf")])
                }
                try engine.commit(shelve)
                kept.withLock { $0 = engine }
            })
        let engine = try store.configuration.open(schema)
        #expect(engine.schemaVersion == 2)
        let migrated = try Self.notes(engine)
        // The engine the store opened with writes with its own layout after the stage's.
        var more = ChangeSet()
        let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
        more.inserts = [RowWrite(entity: 0, key: key, expectedVersion: 0, values: [.text("Eon"), .text("new")])]
        try engine.commit(more)
        engine.close()
        #expect(
            seen.withLock { $0 } == [
                Sight(version: 1, values: [[.text("Dune (1965)")], [.text("Solaris")], [.text("Ubik")]]),
                Sight(
                    version: 2,
                    values: [
                        [.text("Dune (1965)"), .text("unsorted")], [.text("Solaris"), .text("unsorted")],
                        [.text("Ubik"), .text("unsorted")],
                    ]),
            ])
        #expect(!staleWentThrough.withLock { $0 })
        #expect(
            migrated.map(\.values) == [
                [.text("Dune (1965)"), .text("sf")], [.text("Solaris"), .text("sf")],
                [.text("Ubik"), .text("sf")],
            ])
        #expect(migrated.map(\.version) == [3, 2, 2])
        // The stage's engine is closed once the stage is over.
        let stageEngine = try #require(kept.withLock { $0 })
        #expect(throws: StrataError.self) { try stageEngine.makeReader() }
        let reopened = try Schema(version: 2, [IMNoteWithShelf.self])
        #expect(
            try Self.rows(store, reopened, entity: 0).map(\.values.first) == [
                .text("Dune (1965)"), .text("Solaris"), .text("Ubik"), .text("Eon"),
            ])
        if RawStoreEdits.isReadable(store) {
            #expect(try RawStoreEdits.recordedJSON(store) == (try reopened.recordedSchema.jsonText()))
        }
    }

    @Test(arguments: EngineKind.allCases)
    func theOpenedEngineWritesWithItsOwnLayoutAfterAStageOnTheOldOne(kind: EngineKind) async throws {
        let store = try await makeNotes(kind)
        let schema = try Self.customStage(
            willMigrate: { engine in
                var changes = ChangeSet()
                let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
                changes.inserts = [RowWrite(entity: 0, key: key, expectedVersion: 0, values: [.text("Ubik")])]
                changes.updates = [RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Dune (1965)")])]
                try engine.commit(changes)
            }, didMigrate: nil)
        let engine = try store.configuration.open(schema)
        defer { engine.close() }
        var changes = ChangeSet()
        let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
        changes.inserts = [RowWrite(entity: 0, key: key, expectedVersion: 0, values: [.text("Eon"), .text("new")])]
        changes.updates = [
            RowWrite(entity: 0, key: 2, expectedVersion: 1, values: [.text("Solaris"), .text("read")])
        ]
        try engine.commit(changes)
        #expect(
            try Self.notes(engine).map(\.values) == [
                [.text("Dune (1965)"), .text("unsorted")], [.text("Solaris"), .text("read")],
                [.text("Ubik"), .text("unsorted")], [.text("Eon"), .text("new")],
            ])
    }

    @Test(arguments: EngineKind.allCases)
    func aCustomStageThatThrowsLeavesTheStoreUnchanged(kind: EngineKind) async throws {
        let store = try await makeNotes(kind)
        let before = RawStoreEdits.isReadable(store) ? try Self.storeBytes(store) : nil
        let schema = try Self.customStage(
            willMigrate: { engine in
                var changes = ChangeSet()
                changes.updates = [RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("gone")])]
                try engine.commit(changes)
            },
            didMigrate: { engine in
                var changes = ChangeSet()
                let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
                changes.inserts = [RowWrite(entity: 0, key: key, expectedVersion: 0, values: [.text("x"), .text("y")])]
                try engine.commit(changes)
                throw StageFailure()
            })
        let error = #expect(throws: StrataError.self) { try store.configuration.open(schema).close() }
        guard case .migrationStageFailed(1, 2, _)? = error else {
            Issue.record("expected migrationStageFailed(1, 2, …), got \(String(describing: error))")
            return
        }
        #expect(try RawStoreEdits.isReadable(store) ? Self.storeBytes(store) == before : true)
        let v1 = try RecordedSchemaModels.note(version: 1)
        let rows = try Self.rows(store, v1, entity: 0)
        #expect(rows.map(\.values) == [[.text("Dune")], [.text("Solaris")]])
        #expect(rows.map(\.version) == [1, 1])
    }

    @Test(arguments: EngineKind.allCases)
    func eachStageIsAppliedWithItsOwnVersionsLayout(kind: EngineKind) async throws {
        let store = try await makeNotes(kind)
        // v1 title → v2 title, shelf (only v2 has it) → v3 optional title.
        let v1 = try RecordedSchemaModels.note(version: 1).storeSchema
        let v2 = try Schema(version: 2, [IMNoteWithShelf.self]).storeSchema
        let model = try RecordedSchemaModels.noteOptionalTitle(version: 3)
        var v3 = model.storeSchema
        let shelves = Mutex<[StoredValue]>([])
        let stages = Mutex<Set<Int>>([])
        v3.migrationPlan = try StoreMigrationPlan(
            versions: [v1, v2, v3],
            stages: [
                .lightweight(from: 1, to: 2),
                .custom(
                    from: 2, to: 3,
                    willMigrate: { engine in
                        let rows = try Self.notes(engine)
                        shelves.withLock { $0 = rows.map { $0.values[1] } }
                    }, didMigrate: nil),
            ],
            progress: { progress in stages.withLock { _ = $0.insert(progress.stage * 10 + progress.stageCount) } })
        try store.configuration.open(v3).close()
        #expect(shelves.withLock { $0 } == [.text("unsorted"), .text("unsorted")])
        #expect(stages.withLock { $0 } == [12, 22])
        try Self.expectFreshDefinitions(store, model)
        #expect(try Self.rows(store, model, entity: 0).map(\.values) == [[.text("Dune")], [.text("Solaris")]])
        if RawStoreEdits.isReadable(store) {
            #expect(try RawStoreEdits.recordedJSON(store) == (try model.recordedSchema.jsonText()))
        }
    }

    @Test(arguments: EngineKind.allCases)
    func aRebuildReportsItsRowsAsItCopiesThem(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let v1 = try RecordedSchemaModels.noteOptionalTitle(version: 1)
        let engine = try store.configuration.open(v1.storeSchema)
        let count = 12_001
        let keys = try engine.allocateKeys(entity: 0, count: count)
        var changes = ChangeSet()
        changes.inserts = keys.map {
            RowWrite(entity: 0, key: $0, expectedVersion: 0, values: [$0 % 2 == 0 ? .null : .text("n\($0)")])
        }
        try engine.commit(changes)
        engine.close()

        let reports = Mutex<[MigrationProgress]>([])
        let v2 = try Schema(version: 2, [MStNoteTitleDefault.self])
        var schema = v2.storeSchema
        schema.migrationPlan = try StoreMigrationPlan(
            versions: [v1.storeSchema, v2.storeSchema], stages: [.lightweight(from: 1, to: 2)],
            progress: { progress in reports.withLock { $0.append(progress) } })
        try store.configuration.open(schema).close()
        let rows = reports.withLock { $0 }.filter { $0.rowsToMigrate > 0 }
        #expect(rows.allSatisfy { $0.rowsToMigrate == count })
        #expect(rows.map(\.rowsMigrated) == rows.map(\.rowsMigrated).sorted())
        #expect(rows.last?.rowsMigrated == count)
        #expect(rows.contains { $0.rowsMigrated > 0 && $0.rowsMigrated < count })
        #expect(rows.allSatisfy { $0.fractionCompleted > 0 && $0.fractionCompleted <= 1 })
        let stored = try Self.rows(store, v2, entity: 0)
        #expect(stored.count == count)
        #expect(stored.filter { $0.values == [.text("untitled")] }.count == count / 2)
    }
}
