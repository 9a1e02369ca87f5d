import Strata
import StrataStorage

/// The hand-built store schema of the engine-level checks (``EngineCommitChecks``): the engine
/// gets it as it is, with no model and no container in between.
///
/// Entities: 0 Account (name text unique, balance integer, memo text or null), 1 Txn (amount
/// integer, account → Account or null, indexed), 2 Sample (code text or null, unique). Join 0
/// links Account (left) and Txn (right).
///
/// ```swift
/// let engine = try kit.configuration.open(EngineCommitSchema.schema)
/// try engine.commit(EngineCommitSchema.inserts([EngineCommitSchema.account(1, "Checking")]))
/// ```
enum EngineCommitSchema {
    static let account = 0
    static let txn = 1
    static let sample = 2

    static let schema = StoreSchema(
        version: 1,
        entities: [
            EntitySchema(
                name: "Account", number: 0,
                columns: [
                    ColumnSchema(name: "name", type: .string, isOptional: false),
                    ColumnSchema(name: "balance", type: .int64, isOptional: false),
                    ColumnSchema(name: "memo", type: .string, isOptional: true),
                ], indexes: [IndexSchema(name: "Account_name_unique", columns: [0], isUnique: true)]),
            EntitySchema(
                name: "Txn", number: 1,
                columns: [
                    ColumnSchema(name: "amount", type: .int64, isOptional: false),
                    ColumnSchema(name: "account", type: .reference, isOptional: true, referencedEntity: 0),
                ], indexes: [IndexSchema(name: "Txn_account", columns: [1], isUnique: false)]),
            EntitySchema(
                name: "Sample", number: 2,
                columns: [ColumnSchema(name: "code", type: .string, isOptional: true)],
                indexes: [IndexSchema(name: "Sample_code_unique", columns: [0], isUnique: true)]),
        ], joins: [JoinSchema(name: "Account_txns_Txn_accounts", number: 0, leftEntity: 0, rightEntity: 1)])

    /// An account row to write: an insert at `version` 0, else an update of that version.
    static func account(
        _ key: Int64, _ name: String, balance: Int64 = 0, memo: String? = nil, version: Int64 = 0
    ) -> RowWrite {
        RowWrite(
            entity: account, key: key, expectedVersion: version,
            values: [.text(name), .integer(balance), memo.map { .text($0) } ?? .null])
    }

    /// A transaction row to insert.
    static func txn(_ key: Int64, amount: Int64, account: Int64?) -> RowWrite {
        RowWrite(
            entity: txn, key: key, expectedVersion: 0,
            values: [.integer(amount), account.map { .integer($0) } ?? .null])
    }

    /// A change set of inserts only.
    static func inserts(_ rows: [RowWrite]) -> ChangeSet {
        var changes = ChangeSet()
        changes.inserts = rows
        return changes
    }

    /// Every stored row of `entity`, in key order, read through a reader of its own.
    static func rows(_ engine: any StorageEngine, _ entity: Int) throws -> [StoredRow] {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: entity)).sorted { $0.key < $1.key }
    }
}
