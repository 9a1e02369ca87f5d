import Foundation
import Strata
import StrataStorage
import Synchronization
import Testing

/// What a custom stage's closures saw, kept for the test to check afterwards: the closures run
/// on the engine's thread inside the open, outside the test's task.
/// `@unchecked Sendable`: the escaped reader is stored and read on the test's thread only
/// around a synchronous open.
private final class StageLog: @unchecked Sendable {
    let lines = Mutex<[String]>([])
    let engine = Mutex<(any StorageEngine)?>(nil)
    var reader: (any StoreReader)?

    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

private struct StageAbandoned: Error {}

/// Custom stages run on the engine's transaction engine (`StoreMigrationSession.transactionEngine(for:)`):
/// `Note(title)` v1 → `Note(title, shelf = "unsorted")` v2, with closures that use the engine
/// they are given directly.
extension MigrationEntityStoreTests {
    private static let v1 = Result { try RecordedSchemaModels.note(version: 1) }
    private static let v2 = Result { try Schema(version: 2, [IMNoteWithShelf.self]) }

    /// A v1 store holding Dune (key 1) and Solaris (key 2).
    private func notesStore(_ kind: EngineKind) async throws -> TestStore {
        let store = try TestStore(kind)
        let container = try store.open(schema: try Self.v1.get())
        let context = container.newBackgroundContext()
        try await context.perform {
            for title in ["Dune", "Solaris"] { RSNote(context: context).title = title }
            try context.save()
        }
        container.close()
        return store
    }

    /// Opens the store with v2 and a plan whose only stage is custom.
    private func migrateCustom(
        _ store: TestStore, willMigrate: (@Sendable (any StorageEngine) throws -> Void)? = nil,
        didMigrate: (@Sendable (any StorageEngine) throws -> Void)?
    ) throws {
        var model = try Self.v2.get().storeSchema
        model.migrationPlan = try StoreMigrationPlan(
            versions: [try Self.v1.get().storeSchema, model],
            stages: [.custom(from: 1, to: 2, willMigrate: willMigrate, didMigrate: didMigrate)])
        try store.configuration.open(model).close()
    }

    /// Whether `body` throws `StrataError.misuse`.
    private static func isMisuse(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            if case .misuse? = error as? StrataError { return true }
            return false
        }
    }

    private static func describe(_ rows: [StoredRow]) -> String {
        rows.map { row in
            row.values.map { value in if case .text(let text) = value { text } else { "\(value)" } }
                .joined(separator: "|")
        }.joined(separator: ", ")
    }

    @Test(arguments: EngineKind.allCases)
    func aCustomStageReadsAndWritesInsideTheMigration(kind: EngineKind) async throws {
        let store = try await notesStore(kind)
        let log = StageLog()
        try migrateCustom(
            store,
            willMigrate: { engine in
                let reader = try engine.makeReader()
                defer { reader.close() }
                log.add("will v\(engine.schemaVersion): \(Self.describe(try reader.rows(for: FetchPlan(entity: 0))))")
            },
            didMigrate: { engine in
                let before = try engine.makeReader()
                let rows = try before.rows(for: FetchPlan(entity: 0))
                log.add("did v\(engine.schemaVersion): \(Self.describe(rows))")
                var changes = ChangeSet()
                for row in rows {
                    guard case .text(let title) = row.values[0] else { continue }
                    changes.updates.append(
                        RowWrite(
                            entity: 0, key: row.key, expectedVersion: row.version,
                            values: [.text(title), .text("shelf-\(title)")]))
                }
                let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
                changes.inserts.append(
                    RowWrite(entity: 0, key: key, expectedVersion: 0, values: [.text("Ubik"), .text("new")]))
                try engine.commit(changes)
                // The reader made before the commit reads the transaction as it is now.
                log.add("after commit: \(Self.describe(try before.rows(for: FetchPlan(entity: 0))))")
                before.close()
            })
        #expect(
            log.all == [
                "will v1: Dune, Solaris", "did v2: Dune|unsorted, Solaris|unsorted",
                "after commit: Dune|shelf-Dune, Solaris|shelf-Solaris, Ubik|new",
            ])
        let contents = try MigrationStoreProbe.contents(store, try Self.v2.get().storeSchema)
        #expect(contents.version == 2)
        #expect(contents.rows[0].map(\.version) == [2, 2, 1])
        #expect(contents.rows[0].last.map { $0.key > 2 } == true)
        #expect(Self.describe(contents.rows[0]) == "Dune|shelf-Dune, Solaris|shelf-Solaris, Ubik|new")
        if RawStoreEdits.isReadable(store) {
            #expect(try RawStoreEdits.recordedJSON(store) == (try Self.v2.get().recordedSchema.jsonText()))
        }
    }

    @Test(arguments: EngineKind.allCases)
    func aCustomStageThatThrowsLeavesTheStoreUnchanged(kind: EngineKind) async throws {
        let store = try await notesStore(kind)
        let before = try MigrationStoreProbe.contents(store, try Self.v1.get().storeSchema)
        let json = RawStoreEdits.isReadable(store) ? try RawStoreEdits.recordedJSON(store) : nil
        let dataFile = store.directory.appendingPathComponent("store.lmdb/data.mdb")
        let bytes = kind == .lmdb ? try Data(contentsOf: dataFile) : nil
        let error = #expect(throws: StrataError.self) {
            try migrateCustom(store) { engine in
                try engine.commit(
                    {
                        var changes = ChangeSet()
                        changes.updates = [
                            RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Dune"), .text("gone")])
                        ]
                        return changes
                    }())
                throw StageAbandoned()
            }
        }
        guard case .migrationStageFailed(1, 2, _)? = error else {
            Issue.record("expected migrationStageFailed, got \(String(describing: error))")
            return
        }
        #expect(try MigrationStoreProbe.contents(store, try Self.v1.get().storeSchema) == before)
        #expect(try RawStoreEdits.isReadable(store) ? RawStoreEdits.recordedJSON(store) == json : true)
        if let bytes { #expect(try Data(contentsOf: dataFile) == bytes) }
    }

    @Test(arguments: EngineKind.allCases)
    func aFailedCommitInAStageUndoesOnlyItsOwnWrites(kind: EngineKind) async throws {
        let store = try await notesStore(kind)
        let log = StageLog()
        try migrateCustom(store) { engine in
            var first = ChangeSet()
            first.updates = [RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Dune"), .text("kept")])]
            try engine.commit(first)
            // Solaris's update is fine, Dune's expects the version it had before the first commit.
            var second = ChangeSet()
            second.updates = [
                RowWrite(entity: 0, key: 2, expectedVersion: 1, values: [.text("Solaris"), .text("undone")]),
                RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Dune"), .text("stale")]),
            ]
            do {
                try engine.commit(second)
                log.add("second commit passed")
            } catch let error as StrataError {
                if case .conflict = error { log.add("conflict") } else { log.add("\(error)") }
            }
        }
        #expect(log.all == ["conflict"])
        let contents = try MigrationStoreProbe.contents(store, try Self.v2.get().storeSchema)
        #expect(Self.describe(contents.rows[0]) == "Dune|kept, Solaris|unsorted")
        #expect(contents.rows[0].map(\.version) == [2, 1])
    }

    @Test(arguments: EngineKind.allCases)
    func aStageEngineIsClosedWhenItsStageEnds(kind: EngineKind) async throws {
        let store = try await notesStore(kind)
        let log = StageLog()
        try migrateCustom(store) { engine in
            let reader = try engine.makeReader()
            log.engine.withLock { $0 = engine }
            log.reader = reader
            // Closed inside the stage, on the stage's own thread.
            let inner = try engine.makeReader()
            engine.close()
            let newReader = Self.isMisuse { _ = try engine.makeReader() }
            let oldReader = Self.isMisuse { _ = try inner.count(entity: 0, filter: nil) }
            log.add("after close: \(newReader), \(oldReader)")
        }
        #expect(log.all == ["after close: true, true"])
        let engine = try #require(log.engine.withLock { $0 })
        let reader = try #require(log.reader)
        let isMisuse = Self.isMisuse
        #expect(isMisuse { _ = try engine.makeReader() })
        #expect(isMisuse { _ = try engine.allocateKeys(entity: 0, count: 1) })
        #expect(
            isMisuse {
                var changes = ChangeSet()
                changes.deletes = [RowVersionCheck(entity: 0, key: 1, expectedVersion: 1)]
                try engine.commit(changes)
            })
        #expect(isMisuse { _ = try reader.row(entity: 0, key: 1) })
        reader.close()
        log.reader = nil
        log.engine.withLock { $0 = nil }
        // The store itself was migrated and is usable.
        #expect(try MigrationStoreProbe.contents(store, try Self.v2.get().storeSchema).rows[0].count == 2)
    }

    /// LMDB's stage engine belongs to the thread running the open (its write transaction's): a
    /// call from another thread is refused with `.misuse` instead of touching the transaction.
    @Test func anLMDBStageEngineRefusesOtherThreads() async throws {
        let store = try await notesStore(.lmdb)
        let log = StageLog()
        try migrateCustom(store) { engine in
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                log.add("other thread: \(Self.isMisuse { _ = try engine.makeReader() })")
                done.signal()
            }
            thread.start()
            done.wait()
            log.add("own thread: \(Self.isMisuse { _ = try engine.makeReader() })")
        }
        #expect(log.all == ["other thread: true", "own thread: false"])
    }
}
