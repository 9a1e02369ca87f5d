import Foundation
import StrataStorage

/// How this process opens an LMDB environment: for writing (every engine), or only to read it
/// (the tool's inspections and backups, see ``forReading(directory:)``), when the store's files
/// do not let it write.
enum LMDBAccess: Sendable, Equatable {
    /// Read and write, with LMDB's locks (`mdb_env_open` without `MDB_RDONLY`).
    case readWrite
    /// `MDB_RDONLY` with LMDB's locks: `data.mdb` cannot be written, `lock.mdb` can. Each read
    /// takes a reader slot in `lock.mdb` as usual, so writers of other processes keep its
    /// snapshot's pages: as safe as any reader.
    case readOnly
    /// `MDB_RDONLY | MDB_NOLOCK`: `lock.mdb` cannot be written (a read-only directory, read-only
    /// files, a read-only mount), so a read cannot take a reader slot, and no writer would know
    /// to keep its snapshot's pages. Chosen only when no process has the store open; reads then
    /// run inside ``guardUnlockedRead(of:_:)``, which rejects a read that a writer could have
    /// overtaken.
    case readOnlyUnlocked

    /// The access for reading the store in `directory` (it holds `data.mdb`): read-write when
    /// this process may write both `data.mdb` and `lock.mdb` (or create `lock.mdb`), as an
    /// engine opens it; ``readOnly`` when only `lock.mdb` is writable; ``readOnlyUnlocked``
    /// when `lock.mdb` is not, and no other process has the store open.
    ///
    /// Why unlocked reads need no other process: LMDB's readers register in `lock.mdb`, and a
    /// writer reuses only pages that no registered reader's snapshot holds. A reader that
    /// cannot register is safe only while nothing writes, and a writer may be a process of
    /// another user who can write `lock.mdb`. Every process that has the environment open
    /// holds a lock on byte 0 of `lock.mdb`, which `F_GETLK` sees through a read-only
    /// descriptor (across mounts too: locks belong to the file), so such a process is found
    /// here. One that opens the store after this check is caught by
    /// ``guardUnlockedRead(of:_:)``.
    /// - Throws: `.io` naming `lock.mdb` when it cannot be written and another process has the
    ///   store open, or when it cannot even be read (so that cannot be known).
    static func forReading(directory: URL) throws(StrataError) -> LMDBAccess {
        let path = directory.path
        let lockPath = directory.appendingPathComponent("lock.mdb").path
        // A missing lock file is created by LMDB in the directory.
        let lockError = SystemCalls.writeAccessError(
            SystemCalls.fileKind(atPath: lockPath) == nil ? path : lockPath)
        if lockError == 0 {
            let dataError = SystemCalls.writeAccessError(directory.appendingPathComponent("data.mdb").path)
            return dataError == 0 ? .readWrite : .readOnly
        }
        let why = SystemCalls.errorText(lockError)
        let native = NativeError(
            engine: "lmdb", code: Int(lockError), message: why, operation: "access(\(lockPath), W_OK)")
        switch LMDBLockFile.isOpenElsewhere(directory: path) {
        case false?:
            return .readOnlyUnlocked
        case true?:
            throw .io(
                """
                \(lockPath) cannot be written by this process (\(why)), and another process has the store open, \
                which may be writing it: a read that cannot take a reader slot in that lock file could read pages \
                that process's writes reuse, so nothing was read. Run this as a user who can write \(lockPath) \
                (the store's owner), or when no process has the store open
                """,
                native: native)
        case nil:
            throw .io(
                """
                \(lockPath) can be neither written nor read by this process (\(why)), so whether another process \
                is writing the store cannot be known, and nothing was read. Run this as a user who can write \
                \(lockPath) (the store's owner), or make it readable
                """,
                native: native)
        }
    }

    /// Runs `body`, which reads the environment of `dataFile` (its `data.mdb`) opened
    /// ``readOnlyUnlocked``, and rejects its result when a writer could have overtaken it.
    ///
    /// A writer that started after ``forReading(directory:)`` looked does not know the read's
    /// snapshot. Its first commit after that snapshot reuses only pages freed before it, which
    /// the snapshot does not hold; its second may reuse the pages the first freed, which the
    /// snapshot does hold. So a read during which the store's newest transaction (read from its
    /// meta pages, before and after) moved on by more than one is thrown away. (Such a read
    /// may also have failed, or stopped the process, on a reused page: LMDB trusts its pages.)
    /// - Throws: `.busy` when the store moved on by two transactions or more; what `body` throws.
    static func guardUnlockedRead<T>(of dataFile: String, _ body: () throws(StrataError) -> T) throws(StrataError) -> T
    {
        let before = try LMDBFileCheck.newestTransaction(dataFile)
        let result = try body()
        let after = try LMDBFileCheck.newestTransaction(dataFile)
        guard after <= before + 1 else {
            throw .busy(
                """
                \(dataFile): another process committed \(after - before) transactions while this process read \
                the store without a reader slot (its lock.mdb cannot be written), so the read may have seen pages \
                those commits reused, and it was thrown away. Run it again when no process writes the store, or \
                as a user who can write lock.mdb
                """)
        }
        return result
    }
}
