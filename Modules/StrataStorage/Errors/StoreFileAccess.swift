import Foundation

/// Finds which of a store's files this process cannot write, after an engine refused to open or
/// write the store for its permissions: the engine's own error names the store (SQLite's path,
/// LMDB's directory) even when the file that failed is a companion (SQLite's `-wal` or `-shm`,
/// LMDB's `lock.mdb`), which may belong to another user while the store's main file is fine.
///
/// ```swift
/// let files = [(path, "store file"), (path + "-wal", "write-ahead log")]
/// if let detail = StoreFileAccess.firstUnwritable(files) { throw StrataError.io(detail, native: native) }
/// ```
package enum StoreFileAccess {
    /// What is wrong with the first of `files` (each a path and what it is to the store, such as
    /// "write-ahead log") that this process cannot write, or, when it does not exist, cannot
    /// create in its directory; nil when it can write them all (the refusal had another cause).
    /// The text names the file, why (`access(2)`'s error), its owner and mode next to this
    /// process's user, and what to do.
    package static func firstUnwritable(_ files: [(path: String, role: String)]) -> String? {
        for (path, role) in files {
            if SystemCalls.fileKind(atPath: path) == nil {
                let directory = (path as NSString).deletingLastPathComponent
                let error = SystemCalls.writeAccessError(directory.isEmpty ? "." : directory)
                guard error != 0, error != ENOENT else { continue }
                return
                    """
                    cannot create the store's \(role) \(path): its directory \(directory) cannot be written \
                    (\(reason(error, directory))); give this process write access to the directory, or run as \
                    the user that owns it
                    """
            }
            let error = SystemCalls.writeAccessError(path)
            guard error != 0 else { continue }
            return
                """
                cannot open the store's \(role) \(path) for writing (\(reason(error, path))); give this process \
                write access to it (chown or chmod), or run as the user that owns the store
                """
        }
        return nil
    }

    /// `access(2)`'s error `code` for `path`, with the file's owner and mode when the error is
    /// its permissions.
    private static func reason(_ code: Int32, _ path: String) -> String {
        let text = SystemCalls.errorText(code).lowercased()
        switch code {
        case EACCES:
            let attributes = (try? FileManager.default.attributesOfItem(atPath: path)) ?? [:]
            guard let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value,
                let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value
            else { return text }
            return
                "\(text): owned by uid \(owner), mode 0\(String(mode, radix: 8)); this process runs as uid \(getuid())"
        case EPERM: return "\(text): it may be immutable (see lsattr)"
        default: return text
        }
    }
}
