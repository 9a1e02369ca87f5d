package import Foundation
import Glibc
package import StrataStorage

extension EngineConfiguration {
    /// Copy and backup access to an existing LMDB store in `directory`, for tools without a model:
    /// its key counters (a read transaction), its identifier rewritten, and an online backup
    /// (`mdb_env_copy2` with `MDB_CP_COMPACT`).
    package static func lmdbMaintenance(at directory: URL) -> StoreMaintenance {
        StoreMaintenance(
            readKeyCounters: { try LMDBStoreMaintenance.keyCounters(directory: directory) },
            adoptIdentifier: { try LMDBStoreMaintenance.adoptIdentifier($0, directory: directory) },
            backup: { try LMDBStoreMaintenance.backup(directory: directory, to: $0) })
    }
}

/// The transactions behind ``StrataStorage/EngineConfiguration/lmdbMaintenance(at:)``.
enum LMDBStoreMaintenance {
    private static let counterPrefix = Array("counter.".utf8)

    /// Every `counter.ENTITY` entry of the metadata database, in one read transaction.
    static func keyCounters(directory: URL) throws(StrataError) -> [String: Int64] {
        try LMDBStoreInspection.withSnapshot(directory) { txn in
            let meta = try txn.openDatabase(LMDBCatalog.metaName, create: false)
            var counters: [String: Int64] = [:]
            try txn.scan(meta, from: counterPrefix) { key, value in
                let bytes = IndexKeyCodec.array(key)
                guard bytes.starts(with: counterPrefix) else { return false }
                let entity = String(decoding: bytes.dropFirst(counterPrefix.count), as: UTF8.self)
                counters[entity] = IndexKeyCodec.readPrimaryKey(value)
                return true
            }
            return counters
        }
    }

    /// Rewrites `store_uuid` in one write transaction.
    static func adoptIdentifier(_ identifier: UUID, directory: URL) throws(StrataError) {
        let uuid = identifier.uuid
        let bytes = [
            uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
            uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15,
        ]
        try LMDBStoreInspection.withEnvironment(directory, writing: true) { environment in
            try environment.write("adopting the store identifier of \(directory.path)") { txn in
                let meta = try txn.openDatabase(LMDBCatalog.metaName, create: false)
                try txn.put(meta, Array("store_uuid".utf8), bytes)
            }
        }
    }

    /// Copies the environment, compacted, into a new directory beside `destination`, then renames
    /// it to `destination`: the backup appears whole or not at all.
    /// - Throws: `.io` when `destination` exists or cannot be made; LMDB's errors.
    static func backup(directory: URL, to destination: URL) throws(StrataError) {
        let target = destination.path(percentEncoded: false)
        let parent = destination.deletingLastPathComponent().path(percentEncoded: false)
        let temporary = parent + "/.\(destination.lastPathComponent).strata-backup-\(getpid())"
        try? FileManager.default.removeItem(atPath: temporary)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        do {
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        } catch {
            throw .io("\(target): the backup's directory cannot be made here (\(error.localizedDescription))")
        }
        try LMDBStoreInspection.withEnvironment(directory) { try $0.copyCompacted(into: temporary) }
        guard SystemCalls.isDirectory(atPath: target) == nil else {
            throw .io("\(target) exists: a backup is written to a new path only")
        }
        do {
            try FileManager.default.moveItem(atPath: temporary, toPath: target)
        } catch {
            throw .io("\(target): the backup could not be put in place (\(error.localizedDescription))")
        }
        SystemCalls.syncDirectory(parent)
    }
}
