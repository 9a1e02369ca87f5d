import CLMDB
import Foundation
import StrataStorage
import Synchronization

/// One open LMDB environment (one store directory), shared by every engine of this process
/// that opens the directory (see ``LMDBRegistry``).
///
/// It owns the writer thread (every write transaction runs there) and grows the map.
///
/// Map growth: `mdb_env_set_mapsize` remaps the file, so no read may touch the map meanwhile.
/// Every reader call runs inside ``withReadOperation(_:)``; growth (on the writer thread,
/// between write transactions) waits until no read operation is in flight and holds new ones
/// back until the map is replaced. Idle read snapshots keep no pointers into the map between
/// calls (cursors are closed, values are copied out), which is what LMDB 0.9 needs to
/// survive the remap.
///
/// Its reads are in `LMDBEnvironment+Reads.swift` (read operations, the pool of read
/// transactions), its writes in `LMDBEnvironment+Writes.swift` (the writer thread's
/// transactions and map growth).
///
/// Walled file (strict memory safety): the `MDB_env` pointer and the read transactions' pointers
/// stay in here and in ``LMDBTransaction``; callers get transactions as ``LMDBTransaction``
/// values and never see a pointer.
@safe final class LMDBEnvironment: @unchecked Sendable {
    let raw: OpaquePointer
    let path: String
    let options: LMDBOptions
    let maxKeySize: Int
    /// How the environment was opened: for writing, or only to read (``LMDBAccess``).
    let access: LMDBAccess
    let writer: LMDBWriterThread
    /// Engines and readers using the environment (see ``LMDBRegistry``).
    let users = Atomic<Int>(0)
    /// The registry's key for this environment, set once under the registry's lock.
    var registryIdentity: LMDBRegistry.Identity?
    /// Keys reserved in the store but not handed out yet, by entity name.
    let keyCache = Mutex<[String: Range<Int64>]>([:])

    /// Taken only around a map replacement: by the writer while it waits for reads to drain,
    /// and by reads that arrive meanwhile.
    let gate = NSCondition()
    /// Read operations in flight (low bits) and ``resizingFlag``, in one word, so that a read
    /// enters and leaves with one atomic add each and takes no lock unless a resize is under way.
    let readState = Atomic<Int>(0)
    static let resizingFlag = 1 << 40
    /// Read transactions ended with `mdb_txn_reset`: each keeps its reader slot, so the next
    /// ``beginRead()`` renews one (a few loads and a store) instead of locking the reader table
    /// and allocating a transaction. A reset transaction holds no snapshot, so it keeps no
    /// page from being reused; it does hold a slot of the table every process shares. So when
    /// the last read in flight ends, the pool keeps one transaction for the process's next read
    /// (a context per operation reads one after another) and ends the rest; the kept one is
    /// ended once it has gone unused for ``idleReadRelease``, so an idle process holds no slot.
    /// (Kept as addresses: `MDB_txn` pointers are not `Sendable`, and only one thread at a time
    /// takes one out.)
    let idleReads = Mutex<ReadPool>(ReadPool())

    struct ReadPool {
        var idle: [UInt] = []
        /// Read transactions begun and not yet ended.
        var active = 0
        /// A read began since the release timer last looked.
        var usedSinceRelease = false
        /// The release timer is armed.
        var releaseScheduled = false
        /// The environment was shut down: nothing is pooled or released any more.
        var closed = false
    }
    /// How long the transaction kept for a process's next read may go unused before it is
    /// ended and its reader slot given back.
    static let idleReadRelease = DispatchTimeInterval.milliseconds(100)
    /// At most this many idle transactions (and reader slots) are kept.
    let idleReadLimit: Int
    /// Held by the writer thread around each write transaction (nil when the directory is
    /// read-only): a write waits for another process's write only until its deadline,
    /// `options.busyTimeout` after the write was asked for (see ``write(_:_:)``).
    let writeLock: LMDBFileLock?
    /// Times the map grew before a write because the write's estimate did not fit (for tests
    /// and the benchmark).
    let grownAhead = Atomic<Int>(0)
    /// Times a write transaction hit `MDB_MAP_FULL`, was aborted and ran again on a grown map:
    /// its estimate was short (for tests and the benchmark; the re-run is the slow path).
    let rerunWrites = Atomic<Int>(0)
    /// Commits that ran in a write transaction shared with other commits (group commit; for tests
    /// and the benchmark).
    let groupedCommits = Atomic<Int>(0)
    /// Write transactions since dead processes' reader slots were last cleared (writer thread only).
    var writesSinceReaderCheck = 0
    /// Every this many write transactions the writer clears reader slots left by dead processes:
    /// a slot of a killed process pins the pages of its snapshot, and only commits can grow the
    /// file, so clearing on a commit cadence bounds the growth to this many commits.
    static let readerCheckInterval = 32

    /// Opens the environment in a directory that ``LMDBFileCheck`` accepted, after reserving
    /// the blocks of its lock file (``LMDBLockFile``), so that a full disk gives `.storeFull`
    /// instead of `SIGBUS` in the shared mapping of `lock.mdb`. An environment opened only to
    /// read (`access` other than ``LMDBAccess/readWrite``) gets `MDB_RDONLY`, and
    /// ``LMDBAccess/readOnlyUnlocked`` also `MDB_NOLOCK`: LMDB then neither opens `lock.mdb` nor
    /// takes reader slots (see ``LMDBAccess`` for when that is safe).
    init(directory: URL, options: LMDBOptions, databases: Int, access: LMDBAccess = .readWrite) throws(StrataError) {
        path = directory.path
        self.options = options
        self.access = access
        if access != .readOnlyUnlocked { try LMDBLockFile.reserve(directory: path, maxReaders: options.maxReaders) }
        let flags =
            MDB_NOTLS | (access == .readWrite ? 0 : MDB_RDONLY) | (access == .readOnlyUnlocked ? MDB_NOLOCK : 0)
        var env: OpaquePointer?
        if let error = unsafe Self.fail(mdb_env_create(&env), path) { throw error }
        guard let env = unsafe env else { throw .io("\(directory.path): mdb_env_create returned no environment") }
        let opened: Int32 = {
            var rc = unsafe mdb_env_set_maxreaders(env, UInt32(clamping: options.maxReaders))
            if rc == 0 { rc = unsafe mdb_env_set_maxdbs(env, MDB_dbi(clamping: databases)) }
            if rc == 0 { rc = unsafe mdb_env_set_mapsize(env, Self.roundToPages(options.initialMapSize)) }
            if rc == 0 { rc = unsafe mdb_env_open(env, directory.path, UInt32(flags), 0o644) }
            return rc
        }()
        if opened != 0 {
            unsafe mdb_env_close(env)
            throw LMDBError(code: opened).openError(directory: path)
        }
        var dead: Int32 = 0
        _ = unsafe mdb_reader_check(env, &dead)
        unsafe raw = env
        maxKeySize = unsafe Int(mdb_env_get_maxkeysize(env))
        writer = LMDBWriterThread(name: "strata.lmdb.writer")
        idleReadLimit = min(8, max(options.maxReaders / 8, 0))
        // A read-only environment never writes, so it makes no sidecar file.
        writeLock = access == .readWrite ? LMDBFileLock(directory: directory, name: LMDBFileLock.writeLockName) : nil
        writer.groupCommits { [weak self] writes in
            guard let self else {
                for write in writes { write.fail(StrataError.misuse("\(write.context): the LMDB store was closed")) }
                return
            }
            self.runGroup(writes)
        }
    }

    /// The error of LMDB result `rc` for the store at `path`, or nil when `rc` is 0.
    static func fail(_ rc: Int32, _ path: String) -> StrataError? {
        rc == 0 ? nil : LMDBError(code: rc).strataError(path)
    }

    static func roundToPages(_ size: Int) -> Int {
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        return max((size + page - 1) / page * page, page * 16)
    }

    /// Stops the writer thread and closes the environment. Call once, with no reader left.
    func shutdown() {
        writer.stop()
        idleReads.withLock { pool in
            pool.closed = true
            for address in pool.idle { unsafe mdb_txn_abort(OpaquePointer(bitPattern: address)) }
            pool.idle.removeAll()
        }
        unsafe mdb_env_close(raw)
    }
}
