import Foundation
import Glibc
import StrataStorage

/// Creating a new store file so that no other process ever sees it half-made.
///
/// SQLite creates a database file empty and writes its header only at the first write, so a
/// process that opens a store while another is creating it would find a 0-byte file (which
/// ``SQLiteEngine/probeFile(at:)`` rightly refuses) or a database without Strata's tables. So a
/// new store is built complete under a temporary name in the same directory
/// (`.<name>.strata-new-<pid>-<uuid>`), closed, and then hard-linked to its final name:
/// `link(2)` is atomic and fails with `EEXIST` when the name is taken, so exactly one creator
/// wins and every other one opens the winner's store. The store's own path is never opened
/// with `SQLITE_OPEN_CREATE`.
extension SQLiteEngine {
    /// What ``createStoreFile(at:schema:tables:joins:options:)`` did.
    enum CreationOutcome {
        /// The new store is at its final path (this process's or another creator's).
        case inPlace
        /// The file system refuses hard links: the caller creates the store in place, as
        /// SQLite does (concurrent first opens are then not safe on this file system).
        case linksUnsupported
    }

    /// The prefix of every temporary creation file for the store at `path`.
    static func creationPrefix(forStoreAt path: String) -> (directory: String, prefix: String) {
        let (directory, name) = splitPath(path)
        return (directory, ".\(name).strata-new-")
    }

    /// Builds a complete store under a temporary name next to `path`, then links it into place.
    ///
    /// When another process links its store first, this one's is discarded and the caller opens
    /// theirs. Leftover creation files of dead processes are removed first.
    /// - Throws: `.io` when the directory cannot hold the file (missing, read-only, full),
    ///   `.notAStore` beside a leftover write-ahead log (``refuseLeftoverLog(at:)``), and what
    ///   ``prepareStore(_:schema:tables:joins:options:)`` throws.
    static func createStoreFile(
        at path: String, schema: StoreSchema, tables: [SQLiteTableLayout], joins: [SQLiteJoinLayout],
        options: SQLiteOptions,
        linksFollowed: Int = 0
    ) throws(StrataError) -> CreationOutcome {
        // A symbolic link whose target is missing: create the target, as SQLite would.
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
            guard linksFollowed < 16 else {
                throw .io("\(path): too many levels of symbolic links (a loop?); point the store's path at a file")
            }
            let resolved = target.hasPrefix("/") ? target : splitPath(path).directory + target
            return try createStoreFile(
                at: resolved, schema: schema, tables: tables, joins: joins, options: options,
                linksFollowed: linksFollowed + 1)
        }
        try refuseLeftoverLog(at: path)
        let (directory, prefix) = creationPrefix(forStoreAt: path)
        removeStaleCreationFiles(directory: directory, prefix: prefix)
        let temporary = directory + prefix + "\(getpid())-\(UUID().uuidString)"
        defer { removeCreationFile(temporary) }
        let connection: SQLiteConnection
        do throws(StrataError) {
            connection = try SQLiteConnection(
                path: temporary, readOnly: false, create: true, busyTimeout: options.busyTimeoutMilliseconds)
        } catch .io(let detail, _) {
            if let exhausted = StoreRoom.exhaustion(files: [], directory: directory.isEmpty ? "." : directory) {
                throw .storeFull("\(path): the new store could not be made: \(exhausted)")
            }
            throw .io(
                """
                \(path) does not exist and cannot be created: the new store's temporary file could not be made \
                (\(detail)); check that the directory exists and is writable
                """
            )
        }
        do throws(StrataError) {
            _ = try prepareStore(connection, schema: schema, tables: tables, joins: joins, options: options)
        } catch {
            connection.close()
            throw error
        }
        // Closing the only connection checkpoints the write-ahead log into the file and deletes it.
        connection.close()
        if let size = (try? FileManager.default.attributesOfItem(atPath: temporary + "-wal"))?[.size] as? Int, size > 0
        {
            // The checkpoint on close found no room: the disk filled while the store was made.
            if let exhausted = StoreRoom.exhaustion(
                files: [temporary, temporary + "-wal"], directory: directory.isEmpty ? "." : directory)
            {
                throw .storeFull("\(path): the new store could not be made: \(exhausted)")
            }
            throw .io(
                """
                \(path): the new store's write-ahead log (\(temporary)-wal) was not checkpointed when it was \
                closed; check the disk and retry
                """
            )
        }
        let code = SystemCalls.link(temporary, path)
        if code != 0 {
            switch code {
            case EEXIST:
                return .inPlace // Another process created the store first: the caller opens theirs.
            case EPERM, EOPNOTSUPP, ENOSYS, EXDEV, EMLINK:
                return .linksUnsupported
            case ENOENT where FileManager.default.fileExists(atPath: path):
                // Another opener took this creator for a dead one and removed its file, then
                // created the store itself: open theirs.
                return .inPlace
            default:
                throw .io(
                    "\(path): could not link the new store into place; "
                        + "check the directory's permissions and free space",
                    native: NativeError(
                        engine: "sqlite", code: Int(code), message: SystemCalls.errorText(code), operation: "link"))
            }
        }
        SystemCalls.syncDirectory(directory.isEmpty ? "." : directory)
        return .inPlace
    }

    /// Refuses to create a store at `path` beside a write-ahead log that is not empty: the log of
    /// a store whose file was deleted or moved away (perhaps by someone resetting a store with
    /// `rm store.sqlite`, perhaps while a process still writes to it). SQLite would replay that
    /// log onto the new file, which it does not belong to, and the new store would be damaged
    /// from its first open.
    /// - Throws: `.notAStore` naming the log and what to do.
    static func refuseLeftoverLog(at path: String) throws(StrataError) {
        let log = path + "-wal"
        guard let size = (try? FileManager.default.attributesOfItem(atPath: log))?[.size] as? Int, size > 0 else {
            return
        }
        // Looked at after the log: another process that created the store meanwhile (its log
        // appears only once its file is in place) is not a leftover; its store is opened.
        guard !FileManager.default.fileExists(atPath: path) else { return }
        throw .notAStore(
            path: path,
            reason: """
                the store file is missing but its write-ahead log \(log) (\(size) bytes) is still there: the \
                file was deleted or moved while the store was in use, and a new store made here would be \
                damaged by that log. Put the store file back (its last commits are in the log), or, to start \
                a new store, stop every process using it and delete \(log) and \(path)-shm
                """)
    }

    /// The number of extra names of the store file that are creation files (its creator links
    /// the store into place and unlinks its temporary name a moment later).
    static func creationLinks(toStoreAt path: String) -> Int {
        let (directory, prefix) = creationPrefix(forStoreAt: path)
        guard let inode = inodeNumber(path) else { return 0 }
        return creationFiles(directory: directory, prefix: prefix).count { inodeNumber(directory + $0) == inode }
    }

    /// Removes creation files left by processes that no longer exist (a creator that crashed).
    private static func removeStaleCreationFiles(directory: String, prefix: String) {
        for name in creationFiles(directory: directory, prefix: prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                SystemCalls.unlink(directory + name)
            }
        }
    }

    /// Names in `directory` that start with `prefix` and are not SQLite's companions of one.
    private static func creationFiles(directory: String, prefix: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        return names.filter { name in
            name.hasPrefix(prefix) && !name.hasSuffix("-wal") && !name.hasSuffix("-shm") && !name.hasSuffix("-journal")
        }
    }

    private static func removeCreationFile(_ temporary: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { SystemCalls.unlink(temporary + suffix) }
    }

    private static func inodeNumber(_ path: String) -> UInt64? {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.systemFileNumber] as? NSNumber)?.uint64Value
    }

    /// `"/a/b/store.sqlite"` → `("/a/b/", "store.sqlite")`; `"store.sqlite"` → `("", "store.sqlite")`.
    private static func splitPath(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }
}
