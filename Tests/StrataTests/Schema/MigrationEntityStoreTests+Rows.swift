import Foundation
import Strata
import StrataLMDB
import StrataStorage
import Synchronization
import Testing

/// Migrations over many rows: every row rewritten (across many pages, each row growing), the
/// progress an engine reports while it rewrites, and the room a migration needs (an LMDB map
/// that must grow mid-migration, databases for a plan's widest version).
extension MigrationEntityStoreTests {
    /// Writes `count` notes (`Note 1` …) straight through an engine opened with `Note(title)` v1.
    private func writeNotes(_ configuration: EngineConfiguration, count: Int, padding: Int = 0) throws {
        let schema = try RecordedSchemaModels.note(version: 1).storeSchema
        let engine = try configuration.open(schema)
        defer { engine.close() }
        let keys = try engine.allocateKeys(entity: 0, count: count)
        var changes = ChangeSet()
        let pad = String(repeating: "~", count: padding)
        changes.inserts = keys.map { key in
            RowWrite(entity: 0, key: key, expectedVersion: 0, values: [.text("Note \(key)\(pad)")])
        }
        try engine.commit(changes)
    }

    /// Every row of the v2 store (`Note(title, shelf)`), checked to hold its own title and `shelf`.
    private func checkNotes(
        _ configuration: EngineConfiguration, count: Int, padding: Int = 0, shelf: String
    )
        throws -> Bool
    {
        let engine = try configuration.open(try Schema(version: 2, [IMNoteWithShelf.self]).storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let rows = try reader.rows(for: FetchPlan(entity: 0))
        let pad = String(repeating: "~", count: padding)
        return rows.count == count
            && rows.allSatisfy { $0.values == [.text("Note \($0.key)\(pad)"), .text(shelf)] && $0.version == 1 }
    }

    @Test(arguments: EngineKind.allCases)
    func manyRowsAreAllRewrittenAndLMDBReportsItsProgress(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try writeNotes(store.configuration, count: 12_000)
        let reports = Mutex<[MigrationProgress]>([])
        let v2 = try Schema(version: 2, [IMNoteWithShelf.self])
        var model = v2.storeSchema
        model.infersMigrations = true
        model.migrationPlan = try StoreMigrationPlan(
            versions: [try RecordedSchemaModels.note(version: 1).storeSchema, v2.storeSchema],
            stages: [.lightweight(from: 1, to: 2)]
        ) { progress in reports.withLock { $0.append(progress) } }
        try store.configuration.open(model).close()
        #expect(try checkNotes(store.configuration, count: 12_000, shelf: "unsorted"))
        // SQLite adds the column without rewriting a row, so it reports none.
        if kind == .lmdb {
            let rows = reports.withLock { $0 }.filter { $0.rowsToMigrate > 0 }
            #expect(rows.map(\.rowsMigrated) == [5_000, 10_000, 12_000])
            #expect(rows.allSatisfy { $0.rowsToMigrate == 12_000 })
        }
    }

    /// Rows larger than a page (LMDB keeps them on overflow pages) are rewritten in place too.
    @Test(arguments: EngineKind.allCases)
    func rowsLargerThanAPageAreRewrittenToo(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try writeNotes(store.configuration, count: 300, padding: 5_000)
        try migrate(store, to: try Schema(version: 2, [IMNoteWithShelf.self]))
        #expect(try checkNotes(store.configuration, count: 300, padding: 5_000, shelf: "unsorted"))
    }

    /// A plan whose middle version uses more databases than the model: the LMDB environment is
    /// sized for the largest version, so the middle stage can create its index databases.
    @Test(arguments: EngineKind.allCases)
    func aPlanThroughAWiderVersionHasRoomForItsDatabases(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try writeNotes(store.configuration, count: 10)
        let v1 = try RecordedSchemaModels.note(version: 1).storeSchema
        let wide = try Schema(version: 2, [MEWideNote.self]).storeSchema
        var model = try RecordedSchemaModels.note(version: 3).storeSchema
        model.migrationPlan = try StoreMigrationPlan(
            versions: [v1, wide, model], stages: [.lightweight(from: 1, to: 2), .lightweight(from: 2, to: 3)])
        model.infersMigrations = true
        try store.configuration.open(model).close()
        let engine = try store.configuration.open(try RecordedSchemaModels.note(version: 3).storeSchema)
        #expect(engine.schemaVersion == 3)
        engine.close()
    }

    /// A migration that does not fit the map: the open grows the map and runs again.
    @Test func anLMDBMigrationThatFillsTheMapGrowsItAndRunsAgain() throws {
        let store = try TestStore(.lmdb)
        let directory = store.directory.appendingPathComponent("store.lmdb")
        let configuration = EngineConfiguration.lmdb(at: directory, options: LMDBOptions(initialMapSize: 1 << 20))
        try writeNotes(configuration, count: 2_000, padding: 200)
        let shelf = String(repeating: "s", count: 400)
        let model = try Schema(version: 2, [IMNoteWithShelf.self])
        var schema = model.storeSchema
        schema.infersMigrations = true
        // Rewriting the 2,000 rows (copy-on-write pages) and the stage's updates, which give every
        // row a long shelf, do not fit the 1 MiB map.
        let v1 = try RecordedSchemaModels.note(version: 1).storeSchema
        schema.migrationPlan = try StoreMigrationPlan(
            versions: [v1, model.storeSchema],
            stages: [
                .custom(
                    from: 1, to: 2, willMigrate: nil,
                    didMigrate: { engine in
                        let reader = try engine.makeReader()
                        var changes = ChangeSet()
                        changes.updates = try reader.rows(for: FetchPlan(entity: 0)).map { row in
                            RowWrite(
                                entity: 0, key: row.key, expectedVersion: row.version,
                                values: [row.values[0], .text(shelf)])
                        }
                        reader.close()
                        try engine.commit(changes)
                    })
            ])
        try configuration.open(schema).close()
        let engine = try configuration.open(model.storeSchema)
        let reader = try engine.makeReader()
        let rows = try reader.rows(for: FetchPlan(entity: 0))
        reader.close()
        engine.close()
        #expect(rows.count == 2_000 && rows.allSatisfy { $0.values[1] == .text(shelf) && $0.version == 2 })
    }
}
