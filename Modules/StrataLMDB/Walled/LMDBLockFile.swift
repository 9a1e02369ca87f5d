import Foundation
import Glibc
import StrataStorage

/// Reserves the disk blocks of LMDB's `lock.mdb` before `mdb_env_open` maps it.
///
/// LMDB sizes `lock.mdb` with `ftruncate`, which makes a sparse file, and writes it through a
/// shared writable mapping: the reader table's header when the environment opens, and a reader
/// slot each time a new one is used. On a full disk the first store to a page without a block
/// raises `SIGBUS`, which kills the process. So before LMDB opens the environment, Strata opens
/// (creating as LMDB would: `O_RDWR | O_CREAT`, mode 0644 less the umask, owned by this process)
/// and `posix_fallocate`s the file over the size LMDB will map; no full disk, then, reaches the
/// mapping, and a disk without room for it gives `.storeFull` here.
///
/// The size LMDB maps (`mdb_env_setup_locks` in liblmdb 0.9): the process that opens the
/// environment first (it gets the exclusive lock on byte 0 of the file) grows a smaller file
/// to `(maxreaders - 1) × sizeof(MDB_reader) + sizeof(MDB_txninfo)` and keeps a larger one;
/// a later process keeps the file's size and derives its reader count from it. So this grows
/// the file only when no other process has the environment open (no lock on byte 0), and
/// otherwise allocates the blocks of the size it has. It never shrinks the file.
///
/// Call it only when this process does not have the environment open (``LMDBRegistry``
/// ensures that): closing a descriptor of `lock.mdb` drops every `fcntl` lock this process
/// holds on it, which for an open environment are LMDB's own locks.
///
/// Walled file: `open` and `fcntl` take pointers to locals here.
enum LMDBLockFile {
    /// `sizeof(MDB_reader)` on 64-bit Linux: a reader slot padded to a cache line.
    static let readerSlotSize = 64
    /// `sizeof(MDB_txninfo)` on 64-bit Linux: the table's header (with its two mutexes), padded
    /// to cache lines.
    static let headerSize = 192

    /// The size LMDB gives a new `lock.mdb` for `maxReaders` reader slots (65,664 bytes for
    /// the default 1,024).
    static func size(maxReaders: Int) -> Int {
        // As `mdb_env_set_maxreaders` gets it: clamped to `UInt32`.
        (min(max(maxReaders, 1), Int(UInt32.max)) - 1) * readerSlotSize + headerSize
    }

    /// Allocates the blocks of `directory/lock.mdb` up to the size LMDB will map (see the type's
    /// documentation).
    /// - Throws: `.storeFull` when the disk has no room for them (`ENOSPC`, `EDQUOT`, `EFBIG`);
    ///   `.notAStore` when `lock.mdb` is not a regular file; `.io` when allocating fails
    ///   otherwise. When the file cannot be opened at all (a read-only directory), nothing is
    ///   thrown here: `mdb_env_open` then reports its own error.
    static func reserve(directory: String, maxReaders: Int) throws(StrataError) {
        let path = directory + "/lock.mdb"
        // O_NONBLOCK: opening a FIFO or a device must not wait; it is refused below.
        let descriptor = unsafe Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, mode_t(0o644))
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOSPC || error == EDQUOT { throw full(path, error, "open") }
            return
        }
        defer { Glibc.close(descriptor) }
        guard let (kind, current) = SystemCalls.fileStatus(descriptor: descriptor) else { return }
        guard kind == .regularFile else {
            throw .notAStore(path: directory, reason: "its lock.mdb is \(kind.description), not a regular file")
        }
        let target = isInUse(descriptor) ? current : max(current, size(maxReaders: maxReaders))
        guard target > 0 else { return }
        var rc: Int32
        repeat { rc = posix_fallocate(descriptor, 0, off_t(target)) } while rc == EINTR
        switch rc {
        case 0:
            return
        case ENOSPC, EDQUOT, EFBIG:
            throw full(path, rc, "posix_fallocate")
        case EOPNOTSUPP, ENOSYS:
            return // the file system cannot reserve blocks; LMDB goes on as it would without Strata
        default:
            throw .io(
                "\(path): cannot allocate the lock file's \(target) bytes: \(SystemCalls.errorText(rc))",
                native: native(rc, "posix_fallocate"))
        }
    }

    /// Whether another process has the environment in `directory` open, asked of `lock.mdb`
    /// through a read-only descriptor (for a process that cannot write it): false when there is
    /// no `lock.mdb` (every process with the environment open keeps its lock file), nil when it
    /// cannot be read or is not a regular file, so that the question has no answer.
    ///
    /// Call it only when this process does not have the environment open (see the type's
    /// documentation: closing the descriptor drops this process's locks on the file).
    static func isOpenElsewhere(directory: String) -> Bool? {
        let path = directory + "/lock.mdb"
        // O_NONBLOCK: opening a FIFO must not wait.
        let descriptor = unsafe Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return errno == ENOENT ? false : nil }
        defer { Glibc.close(descriptor) }
        guard SystemCalls.fileStatus(descriptor: descriptor)?.kind == .regularFile else { return nil }
        return isInUse(descriptor)
    }

    /// Whether another process holds a lock on byte 0 of the file: LMDB's lock, held by every
    /// process that has the environment open (`F_GETLK` asks without taking any lock, so a
    /// read-only descriptor can ask it).
    private static func isInUse(_ descriptor: Int32) -> Bool {
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        // When the question cannot be asked, assume another process has it: keep its size.
        guard unsafe fcntl(descriptor, F_GETLK, &probe) == 0 else { return true }
        return probe.l_type != Int16(F_UNLCK)
    }

    private static func full(_ path: String, _ code: Int32, _ operation: String) -> StrataError {
        .storeFull(
            """
            \(path): no room for LMDB's lock file (\(SystemCalls.errorText(code))); nothing was opened. Free space \
            on the store's disk.
            """,
            native: native(code, operation))
    }

    private static func native(_ code: Int32, _ operation: String) -> NativeError {
        NativeError(engine: "lmdb", code: Int(code), message: SystemCalls.errorText(code), operation: operation)
    }
}
