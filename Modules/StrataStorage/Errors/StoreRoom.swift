import Foundation

/// Tells an engine whether a write that failed with a plain I/O error failed for lack of room.
///
/// Neither C library says so reliably: SQLite reports a write refused with `EFBIG` (the
/// process's file-size limit) as `SQLITE_IOERR_WRITE`, and LMDB turns a short `pwrite` (what a
/// full disk or the file-size limit gives) into `EIO`. So after such a failure the store's files
/// and their file system are looked at directly. Engines call this on their error paths only.
package enum StoreRoom {
    /// Below this much free space a file system counts as full.
    static let fullFileSystemBytes: UInt64 = 1 << 20
    /// A file this close to the file-size limit cannot take another page write.
    static let sizeLimitMargin: UInt64 = 1 << 16

    /// What has run out for a store (a file at the process's file-size limit, or a full file
    /// system), in words; nil when there is room, so the failure was something else.
    /// - Parameters:
    ///   - files: the store's files that grow (a missing one is skipped).
    ///   - directory: the directory holding them.
    package static func exhaustion(files: [String], directory: String) -> String? {
        if let limit = SystemCalls.fileSizeLimit() {
            for file in files {
                guard let size = fileSize(file) else { continue }
                let (reach, overflow) = size.addingReportingOverflow(sizeLimitMargin)
                if overflow || reach >= limit {
                    return "\(file) has reached the process's file-size limit (RLIMIT_FSIZE, \(limit) bytes)"
                }
            }
        }
        if let free = SystemCalls.freeBytes(directory: directory), free < fullFileSystemBytes {
            return "the disk holding \(directory) is full (\(free) bytes free)"
        }
        return nil
    }

    /// Whether the file system holding `directory` has room for a file to grow by `growth`
    /// bytes and still keep ``fullFileSystemBytes`` free (what a commit after it needs). True
    /// when the free space cannot be read.
    package static func hasRoom(forGrowth growth: UInt64, directory: String) -> Bool {
        guard let free = SystemCalls.freeBytes(directory: directory) else { return true }
        let (needed, overflow) = growth.addingReportingOverflow(fullFileSystemBytes)
        return !overflow && free >= needed
    }

    /// The size of the file at `path` in bytes, or nil when it cannot be read.
    package static func fileSize(_ path: String) -> UInt64? {
        SystemCalls.fileSize(path)
    }
}
