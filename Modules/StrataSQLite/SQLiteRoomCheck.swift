import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Tells whether a write that SQLite reported as a plain I/O error failed for lack of room.
///
/// SQLite reports a write refused with `EFBIG` (the process's file-size limit) as
/// `SQLITE_IOERR_WRITE`, not `SQLITE_FULL`, and `sqlite3_system_errno` cannot say why: it reads
/// the thread's `errno` after SQLite's own clean-up calls. So the store's files and their file
/// system are looked at directly, after the failure.
enum SQLiteRoomCheck {
    /// Below this much free space a file system counts as full.
    static let fullFileSystemBytes: UInt64 = 1 << 20
    /// A file this close to the file-size limit cannot take another page write.
    static let sizeLimitMargin: UInt64 = 1 << 16

    /// What has run out for the store at `path` (its file-size limit or its file system), or nil.
    static func exhaustion(storePath path: String) -> String? {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            for file in [path, path + "-wal", path + "-journal"] {
                guard let size = fileSize(file) else { continue }
                let (reach, overflow) = size.addingReportingOverflow(sizeLimitMargin)
                if overflow || reach >= UInt64(limit.rlim_cur) {
                    return "\(file) has reached the process's file-size limit (RLIMIT_FSIZE, \(limit.rlim_cur) bytes)"
                }
            }
        }
        let directory = (path as NSString).deletingLastPathComponent
        var stats = statvfs()
        if statvfs(directory.isEmpty ? "." : directory, &stats) == 0 {
            let free = UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize))
            if !free.overflow, free.partialValue < fullFileSystemBytes {
                return "the file system holding \(directory) has \(free.partialValue) bytes free"
            }
        }
        return nil
    }

    private static func fileSize(_ path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt64(clamping: info.st_size)
    }
}
