import Foundation
import StrataStorage

/// Checkpoints that never take the room a commit needs.
///
/// A checkpoint copies the pages of the write-ahead log into the database file, which grows by
/// every page the log adds at its end. SQLite's automatic checkpoint (after any commit that
/// leaves 1,000 frames in the log) and its checkpoint on close run whatever the free space: on
/// a nearly full disk they grow the database file until the disk is full again and fail, and
/// the file keeps that size. The freed space is then gone, and the next commit, which needs a
/// few new log frames, fails with `SQLITE_FULL`: once a disk had filled, freeing less than the
/// checkpoint's growth never let a process write again. So every connection replaces the
/// automatic checkpoint with a hook that only counts frames (``SQLiteConnection/walFrames``),
/// and the engine checkpoints after a write, or lets the close checkpoint, only when the disk
/// has room for the growth plus `StoreRoom`'s full-disk margin. Until then commits append to
/// the log, which needs only the room of the commit itself.
extension SQLiteEngine {
    /// Frames in the write-ahead log from which a write checkpoints (SQLite's own default).
    static let checkpointFrames = 1_000

    /// After a successful write on `connection` (the writer): a passive checkpoint when the log
    /// holds ``checkpointFrames`` frames and the disk has room for it. Errors are ignored, as
    /// SQLite ignores its automatic checkpoint's: the write is committed either way.
    func checkpointIfDue(_ connection: SQLiteConnection) {
        guard connection.walFrames >= Self.checkpointFrames, checkpointHasRoom(connection) else { return }
        try? connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// Whether the disk can take the growth of the database file that a full checkpoint through
    /// `connection` causes (the store's pages, log included, past the file's size) and keep
    /// `StoreRoom`'s margin free.
    func checkpointHasRoom(_ connection: SQLiteConnection) -> Bool {
        guard let pages = try? connection.queryInt64("PRAGMA page_count"),
            let pageSize = try? connection.queryInt64("PRAGMA page_size"),
            let fileSize = StoreRoom.fileSize(path)
        else { return false }
        let (size, overflow) = pages.multipliedReportingOverflow(by: pageSize)
        guard !overflow, size > 0 else { return false }
        let growth = UInt64(size) > fileSize ? UInt64(size) - fileSize : 0
        return StoreRoom.hasRoom(forGrowth: growth, directory: (path as NSString).deletingLastPathComponent)
    }

    /// Closes the writer connection, checkpointing on close only when the disk has room for it.
    func closeWriter(_ connection: SQLiteConnection) {
        connection.setCheckpointOnClose(checkpointHasRoom(connection))
        connection.close()
    }
}
