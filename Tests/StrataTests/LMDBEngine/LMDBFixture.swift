import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// Temporary LMDB stores and the hand-built schema the LMDB tests use.
///
/// Entities: 0 Account(name text unique, balance int, memo text?), 1 Txn(amount int,
/// account → Account, indexed), 2 Sample(i int?, r double?, t text?, b data?, code text? unique,
/// indexes on t and r). Join 0: Account (left) ↔ Txn (right).
enum LMDBFixture {
    static let account = 0, txn = 1, sample = 2

    static func schema(version: Int = 1) -> StoreSchema {
        StoreSchema(
            version: version,
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
                    columns: [
                        ColumnSchema(name: "i", type: .int64, isOptional: true),
                        ColumnSchema(name: "r", type: .double, isOptional: true),
                        ColumnSchema(name: "t", type: .string, isOptional: true),
                        ColumnSchema(name: "b", type: .data, isOptional: true),
                        ColumnSchema(name: "code", type: .string, isOptional: true),
                    ],
                    indexes: [
                        IndexSchema(name: "Sample_t", columns: [2], isUnique: false),
                        IndexSchema(name: "Sample_r", columns: [1], isUnique: false),
                        IndexSchema(name: "Sample_code_unique", columns: [4], isUnique: true),
                    ]),
            ], joins: [JoinSchema(name: "Account_txns_Txn_accounts", number: 0, leftEntity: 0, rightEntity: 1)])
    }

    /// A fresh, empty directory path under the temporary directory (not created; its parent is,
    /// since an LMDB store's directory is created but not its parents).
    static func directory(_ function: String = #function) -> URL {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-lmdb-tests", isDirectory: true)
        try? FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        return parent.appendingPathComponent("\(function.prefix { $0 != "(" })-\(UUID().uuidString)", isDirectory: true)
    }

    static func open(_ directory: URL, options: LMDBOptions = .init(), version: Int = 1) throws -> any StorageEngine {
        try EngineConfiguration.lmdb(at: directory, options: options).open(schema(version: version))
    }

    static func insert(_ engine: any StorageEngine, _ entity: Int, _ key: Int64, _ values: [StoredValue]) throws {
        var changes = ChangeSet()
        changes.inserts = [RowWrite(entity: entity, key: key, expectedVersion: 0, values: ContiguousArray(values))]
        try engine.commit(changes)
    }

    static func allRows(_ engine: any StorageEngine, _ entity: Int) throws -> [StoredRow] {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: entity))
    }

    /// The error `body` throws as a `StrataError`, or nil when it throws nothing.
    static func strataError(_ body: () throws -> Void) -> StrataError? {
        do {
            try body()
            return nil
        } catch let error as StrataError {
            return error
        } catch {
            Issue.record("expected a StrataError, got \(error)")
            return nil
        }
    }
}

/// Runs jobs on a concurrent dispatch queue, so that tasks blocked in synchronous engine calls
/// never starve the test's own cooperative threads (the watchdog keeps running).
final class BlockingWorkExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "strata.lmdb.tests.workers", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
