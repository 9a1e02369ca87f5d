import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

@Suite("SQLiteEngine store files")
struct SQLiteEngineFileTests {
    private func expectNotAStore(
        _ store: TemporarySQLiteStore, _ schema: StoreSchema = Fixtures.schema,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = strataError { _ = try store.open(schema) }
        guard case .notAStore(let path, _, _) = error else {
            Issue.record("expected notAStore, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(path == store.path, sourceLocation: sourceLocation)
    }

    /// A schema version that is not an integer of 1 or more (edited by hand, damaged) is
    /// `.storeCorrupt`: SQLite reads text as 0, and the store would otherwise be "migrated"
    /// silently from version 0 and the value rewritten.
    @Test(arguments: ["'abc'", "0", "-5", "1.5", "'1'"])
    func aDamagedSchemaVersionIsStoreCorrupt(value: String) throws {
        let store = try TemporarySQLiteStore()
        try store.open().close()
        try RawSQLite(path: store.path).execute(
            "UPDATE strata_metadata SET value = \(value) WHERE key = 'schema_version'")
        let error = strataError { _ = try store.open() }
        guard case .storeCorrupt(let message, _) = error else {
            Issue.record("schema_version \(value): expected storeCorrupt, got \(String(describing: error))")
            return
        }
        #expect(message.contains("schema_version"), "\(message)")
        // Nothing was rewritten.
        let kept = try RawSQLite(path: store.path).strings(
            "SELECT quote(value) FROM strata_metadata WHERE key = 'schema_version'")
        #expect(kept == [value], "\(kept)")
    }

    @Test func garbageFileIsNotAStore() throws {
        let store = try TemporarySQLiteStore()
        try Data(repeating: 0xAB, count: 8192).write(to: store.url)
        expectNotAStore(store)
        // Nothing was overwritten.
        #expect(try Data(contentsOf: store.url) == Data(repeating: 0xAB, count: 8192))
    }

    @Test func textFileIsNotAStore() throws {
        let store = try TemporarySQLiteStore()
        try Data("hello, I am not a database\n".utf8).write(to: store.url)
        expectNotAStore(store)
    }

    @Test func emptyFileIsNotAStore() throws {
        let store = try TemporarySQLiteStore()
        try Data().write(to: store.url)
        expectNotAStore(store)
        #expect(try Data(contentsOf: store.url).isEmpty)
    }

    @Test func directoryIsNotAStore() throws {
        let store = try TemporarySQLiteStore()
        try FileManager.default.createDirectory(at: store.url, withIntermediateDirectories: true)
        try Data(repeating: 1, count: 4096).write(to: store.url.appending(path: "data.mdb"))
        expectNotAStore(store)
    }

    @Test func foreignSQLiteDatabaseIsNotAStore() throws {
        let store = try TemporarySQLiteStore()
        do {
            let raw = try RawSQLite(path: store.path)
            try raw.execute(
                "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x')")
        }
        expectNotAStore(store)
    }

    @Test func schemaVersionMismatchIsTyped() throws {
        let store = try TemporarySQLiteStore()
        try store.open(Fixtures.makeSchema(version: 1)).close()
        #expect(
            strataError { _ = try store.open(Fixtures.makeSchema(version: 2)) }
                == .schemaMismatch(storeVersion: 1, modelVersion: 2))
    }

    @Test func missingParentDirectoryIsAnIOError() throws {
        let store = try TemporarySQLiteStore()
        let url = store.directory.appending(path: "no/such/dir/store.sqlite")
        guard case .io = strataError({ _ = try EngineConfiguration.sqlite(at: url).open(Fixtures.schema) }) else {
            Issue.record("expected an I/O error")
            return
        }
    }

    @Test func invalidSchemasAreRejected() throws {
        let store = try TemporarySQLiteStore()
        var schema = Fixtures.makeSchema()
        schema.entities[0].columns.append(ColumnSchema(name: "version", type: .int, isOptional: true))
        guard case .invalidSchema = strataError({ _ = try store.open(schema) }) else {
            Issue.record("a column named version was accepted")
            return
        }
        // The engine's own tables are reserved, in any case.
        for name in ["strata_history", "STRATA_HISTORY_CURSORS"] {
            var clashing = Fixtures.makeSchema()
            clashing.entities[0].name = name
            guard case .invalidSchema = strataError({ _ = try store.open(clashing) }) else {
                Issue.record("an entity named \(name) was accepted")
                continue
            }
        }
    }

    @Test func theStoreIsAnOrdinarySQLiteFile() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Checking", balance: 12)]))
        engine.close()

        let raw = try RawSQLite(path: store.path)
        let tables = try raw.strings("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        #expect(
            tables == [
                "Account", "Account_txns_Txn_accounts", "Sample", "Txn", "strata_history", "strata_history_cursors",
                "strata_key_counters", "strata_metadata",
            ])
        let indexes = try raw.strings(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        #expect(indexes == ["Account_name_unique", "Account_txns_Txn_accounts_right", "Sample_t", "Txn_account"])
        #expect(
            try raw.strings("SELECT name || ':' || type || ':' || \"notnull\" FROM pragma_table_info('Account')")
                == [
                    "id:INTEGER:0", "version:INTEGER:1", "name:TEXT:1", "balance:INTEGER:1", "memo:TEXT:0",
                    "active:INTEGER:1",
                ])
        #expect(try raw.strings("SELECT name || '=' || balance FROM Account") == ["Checking=12"])
        #expect(try raw.strings("PRAGMA journal_mode") == ["wal"])
        #expect(try raw.strings("SELECT value FROM strata_metadata WHERE key = 'schema_version'") == ["1"])
    }

    @Test func damagedValuesAreStoreCorruptNotWrongData() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(
            Fixtures.inserts([Fixtures.account(1, "A"), Fixtures.account(2, "B"), Fixtures.account(3, "C")]))
        let raw = try RawSQLite(path: store.path)
        try raw.execute("UPDATE Account SET balance = 'lots' WHERE id = 2")
        try raw.execute("UPDATE Account SET active = 2 WHERE id = 3")
        try raw.execute(
            "INSERT INTO Account (id, version, name, balance, active) VALUES (4, 1, CAST(x'61FF62' AS TEXT), 0, 1)")
        try raw.execute("INSERT INTO Account (id, version, name, balance, active) VALUES (5, 'x', 'E', 0, 1)")

        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.row(entity: Fixtures.account, key: 1) != nil)
        let text = strataError { _ = try reader.row(entity: Fixtures.account, key: 2) }
        guard case .storeCorrupt(let detail, _) = text else {
            Issue.record("got \(String(describing: text))")
            return
        }
        #expect(detail.contains("Account.balance") && detail.contains("2"))
        guard case .storeCorrupt = strataError({ _ = try reader.row(entity: Fixtures.account, key: 3) }) else {
            Issue.record("a Bool column holding 2 was accepted")
            return
        }
        guard case .storeCorrupt = strataError({ _ = try reader.row(entity: Fixtures.account, key: 4) }) else {
            Issue.record("invalid UTF-8 was accepted as text")
            return
        }
        let noVersion = strataError { _ = try reader.row(entity: Fixtures.account, key: 5) }
        guard case .storeCorrupt(let versionDetail, _) = noVersion, versionDetail.contains("no valid version") else {
            Issue.record("a row without a version was accepted: \(String(describing: noVersion))")
            return
        }
        guard case .storeCorrupt = strataError({ _ = try reader.rows(for: FetchPlan(entity: Fixtures.account)) }) else {
            Issue.record("a fetch returned damaged rows")
            return
        }
    }
}
