package import Foundation
import Glibc
package import StrataStorage

extension EngineConfiguration {
    /// Copy and backup access to an existing SQLite store at `url`, for tools without a model: its
    /// key counters (read-only), its identifier rewritten, and an online backup (`VACUUM INTO`).
    package static func sqliteMaintenance(at url: URL) -> StoreMaintenance {
        let path = url.path(percentEncoded: false)
        return StoreMaintenance(
            readKeyCounters: { try SQLiteStoreMaintenance.keyCounters(path: path) },
            adoptIdentifier: { try SQLiteStoreMaintenance.adoptIdentifier($0, path: path) },
            backup: { try SQLiteStoreMaintenance.backup(path: path, to: $0.path(percentEncoded: false)) })
    }
}

/// The statements behind ``StrataStorage/EngineConfiguration/sqliteMaintenance(at:)``.
enum SQLiteStoreMaintenance {
    /// `strata_key_counters`, on a read-only connection.
    static func keyCounters(path: String) throws(StrataError) -> [String: Int64] {
        let connection = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5000)
        defer { connection.close() }
        try SQLiteEngine.checkHeader(connection)
        let statement = try connection.statement("SELECT entity, next_key FROM strata_key_counters")
        defer { statement.reset() }
        var counters: [String: Int64] = [:]
        while try statement.step() {
            if let entity = statement.text(at: 0) { counters[entity] = statement.int64(at: 1) }
        }
        return counters
    }

    /// Rewrites `store_uuid` in one write transaction.
    static func adoptIdentifier(_ identifier: UUID, path: String) throws(StrataError) {
        let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeout: 5000)
        defer { connection.close() }
        try SQLiteEngine.checkHeader(connection)
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StrataError) {
            let statement = try connection.statement("UPDATE strata_metadata SET value = ?1 WHERE key = 'store_uuid'")
            try statement.bind(.text(identifier.uuidString), at: 1)
            try statement.run()
            try connection.execute("COMMIT")
        } catch {
            connection.rollbackQuietly()
            throw error
        }
    }

    /// `VACUUM INTO` a temporary file beside `destination` on a read-only connection (one read
    /// transaction, so one consistent state, while other processes write), then a hard link to
    /// `destination`, which fails when the name is taken: the backup appears whole or not at all.
    /// - Throws: `.io` when `destination` exists or its directory cannot hold the file; SQLite's errors.
    static func backup(path: String, to destination: String) throws(StrataError) {
        let slash = destination.lastIndex(of: "/")
        let directory = slash.map { String(destination[...$0]) } ?? ""
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        let temporary = directory + ".\(name).strata-backup-\(getpid())"
        // `VACUUM INTO` writes the new file with a rollback journal beside it, left when it fails.
        let leftovers = [temporary, temporary + "-journal"]
        for file in leftovers { SystemCalls.unlink(file) }
        defer { for file in leftovers { SystemCalls.unlink(file) } }
        let connection = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5000)
        do throws(StrataError) {
            try SQLiteEngine.checkHeader(connection)
            let statement = try connection.statement("VACUUM INTO ?1")
            try statement.bind(.text(temporary), at: 1)
            try statement.run()
            connection.close()
        } catch {
            connection.close()
            // SQLite names the source in its error, but a lack of room is the destination's.
            if case .storeFull(_, let native) = error,
                let exhausted = StoreRoom.exhaustion(files: leftovers, directory: directory.isEmpty ? "." : directory)
            {
                throw .storeFull("\(destination): the backup does not fit: \(exhausted)", native: native)
            }
            throw error
        }
        let code = SystemCalls.link(temporary, destination)
        guard code == 0 else {
            throw .io(
                "\(destination): the backup could not be put in place (\(SystemCalls.errorText(code)))",
                native: NativeError(
                    engine: "sqlite", code: Int(code), message: SystemCalls.errorText(code), operation: "link"))
        }
        SystemCalls.syncDirectory(directory.isEmpty ? "." : directory)
    }
}
