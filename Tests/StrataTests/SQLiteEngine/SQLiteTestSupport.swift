import CSQLite
import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

/// A store file in a fresh temporary directory, removed when the value is released.
final class TemporarySQLiteStore {
    let directory: URL
    let url: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appending(path: "strata-sqlite-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        url = directory.appending(path: "store.sqlite")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var path: String { url.path(percentEncoded: false) }

    func open(_ schema: StoreSchema = Fixtures.schema, options: SQLiteOptions = .init()) throws -> any StorageEngine {
        try EngineConfiguration.sqlite(at: url, options: options).open(schema)
    }
}

/// The hand-built schema every SQLite test uses.
enum Fixtures {
    static let account = 0, txn = 1, sample = 2
    static let accountTxns = 0

    /// Account(name unique, balance, memo?, active), Txn(amount, account?, note?),
    /// Sample(i?, r?, t?, b?, flag?, when?), and an Account–Txn many-to-many join.
    static func makeSchema(version: Int = 1) -> StoreSchema {
        StoreSchema(
            version: version,
            entities: [
                EntitySchema(
                    name: "Account", number: 0,
                    columns: [
                        ColumnSchema(name: "name", type: .string, isOptional: false),
                        ColumnSchema(name: "balance", type: .int64, isOptional: false),
                        ColumnSchema(name: "memo", type: .string, isOptional: true),
                        ColumnSchema(name: "active", type: .bool, isOptional: false),
                    ],
                    indexes: [IndexSchema(name: "Account_name_unique", columns: [0], isUnique: true)]
                ),
                EntitySchema(
                    name: "Txn", number: 1,
                    columns: [
                        ColumnSchema(name: "amount", type: .int64, isOptional: false),
                        ColumnSchema(name: "account", type: .reference, isOptional: true, referencedEntity: 0),
                        ColumnSchema(name: "note", type: .string, isOptional: true),
                    ],
                    indexes: [IndexSchema(name: "Txn_account", columns: [1], isUnique: false)]
                ),
                EntitySchema(
                    name: "Sample", number: 2,
                    columns: [
                        ColumnSchema(name: "i", type: .int64, isOptional: true),
                        ColumnSchema(name: "r", type: .double, isOptional: true),
                        ColumnSchema(name: "t", type: .string, isOptional: true),
                        ColumnSchema(name: "b", type: .data, isOptional: true),
                        ColumnSchema(name: "flag", type: .bool, isOptional: true),
                    ],
                    indexes: [IndexSchema(name: "Sample_t", columns: [2], isUnique: false)]
                ),
            ],
            joins: [JoinSchema(name: "Account_txns_Txn_accounts", number: 0, leftEntity: 0, rightEntity: 1)]
        )
    }

    static let schema = makeSchema()

    static func account(
        _ key: Int64, _ name: String, balance: Int64 = 0, memo: String? = nil, active: Bool = true, version: Int64 = 0
    ) -> RowWrite {
        RowWrite(
            entity: account, key: key, expectedVersion: version,
            values: [.text(name), .integer(balance), memo.map(StoredValue.text) ?? .null, .integer(active ? 1 : 0)])
    }

    static func txn(_ key: Int64, amount: Int64, account: Int64?, note: String? = nil, version: Int64 = 0) -> RowWrite {
        RowWrite(
            entity: txn, key: key, expectedVersion: version,
            values: [.integer(amount), account.map(StoredValue.integer) ?? .null, note.map(StoredValue.text) ?? .null])
    }

    static func inserts(_ rows: [RowWrite]) -> ChangeSet {
        var changes = ChangeSet()
        changes.inserts = rows
        return changes
    }
}

/// Runs `body` and returns the `StrataError` it throws, or nil when it throws nothing. Any
/// other error fails the test (and gives nil).
func strataError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> StrataError? {
    do {
        try body()
        return nil
    } catch let error as StrataError {
        return error
    } catch {
        Issue.record("expected a StrataError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Reads every row of an entity through a fresh reader.
func allRows(_ engine: any StorageEngine, _ entity: Int) throws -> [StoredRow] {
    let reader = try engine.makeReader()
    defer { reader.close() }
    return try reader.rows(for: FetchPlan(entity: entity))
}

/// Raw sqlite3 access for inspecting or damaging a store the way the sqlite3 tool would.
final class RawSQLite {
    private var db: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw StrataError.io("raw open of \(path) failed")
        }
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { sqlite3_close_v2(db) }

    /// Runs SQL, failing on error.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw StrataError.io("raw SQL failed: \(text)")
        }
    }

    /// The first column of every row a query returns, as text.
    func strings(_ sql: String) throws -> [String] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw StrataError.io("raw prepare failed: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        var result: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "NULL")
        }
        return result
    }
}
