import Foundation

#if canImport(Glibc)
    import Glibc
#endif

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
        var limit = rlimit()
        if unsafe getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            for file in files {
                guard let size = fileSize(file) else { continue }
                let (reach, overflow) = size.addingReportingOverflow(sizeLimitMargin)
                if overflow || reach >= UInt64(limit.rlim_cur) {
                    return "\(file) has reached the process's file-size limit (RLIMIT_FSIZE, \(limit.rlim_cur) bytes)"
                }
            }
        }
        var stats = statvfs()
        if unsafe statvfs(directory.isEmpty ? "." : directory, &stats) == 0 {
            let free = UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize))
            if !free.overflow, free.partialValue < fullFileSystemBytes {
                return "the disk holding \(directory) is full (\(free.partialValue) bytes free)"
            }
        }
        return nil
    }

    /// Whether the file system holding `directory` has room for a file to grow by `growth`
    /// bytes and still keep ``fullFileSystemBytes`` free (what a commit after it needs). True
    /// when the free space cannot be read.
    package static func hasRoom(forGrowth growth: UInt64, directory: String) -> Bool {
        var stats = statvfs()
        guard unsafe statvfs(directory.isEmpty ? "." : directory, &stats) == 0 else { return true }
        let free = UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize))
        let (needed, overflow) = growth.addingReportingOverflow(fullFileSystemBytes)
        return free.overflow || (!overflow && free.partialValue >= needed)
    }

    /// The size of the file at `path` in bytes, or nil when it cannot be read.
    package static func fileSize(_ path: String) -> UInt64? {
        var info = stat()
        guard unsafe stat(path, &info) == 0 else { return nil }
        return UInt64(clamping: info.st_size)
    }
}
