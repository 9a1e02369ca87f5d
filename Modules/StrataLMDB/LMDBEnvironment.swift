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
/// Walled file (strict memory safety): the `MDB_env` pointer and the read transactions' pointers
/// stay in here and in ``LMDBTransaction``; callers get transactions as ``LMDBTransaction``
/// values and never see a pointer.
@safe final class LMDBEnvironment: @unchecked Sendable {
    let raw: OpaquePointer
    let path: String
    let options: LMDBOptions
    let maxKeySize: Int
    let writer: LMDBWriterThread
    /// Engines and readers using the environment (see ``LMDBRegistry``).
    let users = Atomic<Int>(0)
    /// The registry's key for this environment, set once under the registry's lock.
    var registryIdentity: LMDBRegistry.Identity?
    /// Keys reserved in the store but not handed out yet, by entity name.
    let keyCache = Mutex<[String: Range<Int64>]>([:])

    /// Taken only around a map replacement: by the writer while it waits for reads to drain,
    /// and by reads that arrive meanwhile.
    private let gate = NSCondition()
    /// Read operations in flight (low bits) and ``resizingFlag``, in one word, so that a read
    /// enters and leaves with one atomic add each and takes no lock unless a resize is under way.
    private let readState = Atomic<Int>(0)
    private static let resizingFlag = 1 << 40
    /// Read transactions ended with `mdb_txn_reset`: each keeps its reader slot, so the next
    /// ``beginRead()`` renews one (a few loads and a store) instead of locking the reader table
    /// and allocating a transaction. A reset transaction holds no snapshot, so it keeps no
    /// page from being reused; it does hold a slot of the table every process shares. So when
    /// the last read in flight ends, the pool keeps one transaction for the process's next read
    /// (a context per operation reads one after another) and ends the rest; the kept one is
    /// ended once it has gone unused for ``idleReadRelease``, so an idle process holds no slot.
    /// (Kept as addresses: `MDB_txn` pointers are not `Sendable`, and only one thread at a time
    /// takes one out.)
    private let idleReads = Mutex<ReadPool>(ReadPool())

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
    private let idleReadLimit: Int
    /// Held by the writer thread around each write transaction (nil when the directory is
    /// read-only): a write waits for another process's write only until its deadline,
    /// `options.busyTimeout` after the write was asked for (see ``write(_:_:)``).
    private let writeLock: LMDBFileLock?
    /// Times the map grew before a write because the write's estimate did not fit (for tests
    /// and the benchmark).
    let grownAhead = Atomic<Int>(0)
    /// Times a write transaction hit `MDB_MAP_FULL`, was aborted and ran again on a grown map:
    /// its estimate was short (for tests and the benchmark; the re-run is the slow path).
    let rerunWrites = Atomic<Int>(0)
    /// Write transactions since dead processes' reader slots were last cleared (writer thread only).
    private var writesSinceReaderCheck = 0
    /// Every this many write transactions the writer clears reader slots left by dead processes:
    /// a slot of a killed process pins the pages of its snapshot, and only commits can grow the
    /// file, so clearing on a commit cadence bounds the growth to this many commits.
    static let readerCheckInterval = 32

    /// Opens the environment in a directory that ``LMDBFileCheck`` accepted.
    init(directory: URL, options: LMDBOptions, databases: Int) throws(StrataError) {
        path = directory.path
        self.options = options
        var env: OpaquePointer?
        if let error = unsafe Self.fail(mdb_env_create(&env), path) { throw error }
        guard let env = unsafe env else { throw .io("\(directory.path): mdb_env_create returned no environment") }
        let opened: Int32 = {
            var rc = unsafe mdb_env_set_maxreaders(env, UInt32(clamping: options.maxReaders))
            if rc == 0 { rc = unsafe mdb_env_set_maxdbs(env, MDB_dbi(clamping: databases)) }
            if rc == 0 { rc = unsafe mdb_env_set_mapsize(env, Self.roundToPages(options.initialMapSize)) }
            if rc == 0 { rc = unsafe mdb_env_open(env, directory.path, UInt32(MDB_NOTLS), 0o644) }
            return rc
        }()
        if let error = Self.fail(opened, path) {
            unsafe mdb_env_close(env)
            throw error
        }
        var dead: Int32 = 0
        _ = unsafe mdb_reader_check(env, &dead)
        unsafe raw = env
        maxKeySize = unsafe Int(mdb_env_get_maxkeysize(env))
        writer = LMDBWriterThread(name: "strata.lmdb.writer")
        idleReadLimit = min(8, max(options.maxReaders / 8, 0))
        writeLock = LMDBFileLock(directory: directory, name: LMDBFileLock.writeLockName)
    }

    private static func fail(_ rc: Int32, _ path: String) -> StrataError? {
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

    // MARK: Reads

    /// Runs one read operation; map growth waits for it and it waits for map growth.
    func withReadOperation<T>(_ body: () throws -> T) rethrows -> T {
        enterRead()
        defer { leaveRead() }
        return try body()
    }

    private func enterRead() {
        while true {
            let before = readState.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            if before & Self.resizingFlag == 0 { return }
            // A resize is under way: step back out and wait until it is done.
            leaveRead()
            gate.lock()
            while readState.load(ordering: .acquiring) & Self.resizingFlag != 0 { gate.wait() }
            gate.unlock()
        }
    }

    private func leaveRead() {
        let after = readState.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue
        if after == Self.resizingFlag {
            // The last read left while a resize waits for the reads to drain: wake it. The
            // writer checks the count under `gate`, so this broadcast cannot fall between its
            // check and its wait.
            gate.lock()
            gate.broadcast()
            gate.unlock()
        }
    }

    /// Begins a read-only transaction on the latest snapshot: an idle one renewed when there is
    /// one, else a new one (adopting a map grown by another process if needed).
    func beginRead() throws(StrataError) -> LMDBTransaction {
        let taken = idleReads.withLock { pool -> UInt? in
            pool.active += 1
            pool.usedSinceRelease = true
            return pool.idle.popLast()
        }
        do {
            return unsafe LMDBTransaction(
                raw: try beginRead(renewing: taken.flatMap { unsafe OpaquePointer(bitPattern: $0) }))
        } catch {
            idleReads.withLock { $0.active -= 1 }
            throw error
        }
    }

    private func beginRead(renewing idle: OpaquePointer?) throws(StrataError) -> OpaquePointer {
        if let idle = unsafe idle {
            if withReadOperation({ unsafe mdb_txn_renew(idle) }) == 0 { return unsafe idle }
            // The map was grown by another process, or the renewal failed: start afresh.
            unsafe mdb_txn_abort(idle)
        }
        var clearedDeadReaders = false
        for _ in 0..<4 {
            var txn: OpaquePointer?
            let rc = withReadOperation { unsafe mdb_txn_begin(raw, nil, UInt32(MDB_RDONLY), &txn) }
            if rc == MDB_READERS_FULL, !clearedDeadReaders {
                // Slots of dead processes may fill the table: clear them and try once more.
                clearedDeadReaders = true
                clearDeadReaders()
                continue
            }
            if rc == MDB_MAP_RESIZED {
                do {
                    try writer.perform(until: nil) { [self] in try replaceMap(size: 0) }
                } catch {
                    throw strataError(error, "adopting the map size of \(path)")
                }
                continue
            }
            if let error = Self.fail(rc, "beginning a read of \(path)") { throw error }
            if let txn = unsafe txn { return unsafe txn }
        }
        throw .busy("\(path): the map keeps being resized by another process")
    }

    /// How many reset transactions wait in the idle pool (for tests).
    var idleReadCount: Int { idleReads.withLock { $0.idle.count } }

    /// Clears the reader slots of processes that died holding them (`mdb_reader_check`);
    /// returns how many it cleared.
    @discardableResult
    func clearDeadReaders() -> Int {
        var dead: Int32 = 0
        _ = unsafe mdb_reader_check(raw, &dead)
        return Int(dead)
    }

    /// Ends a read-only transaction: its snapshot is released at once, and the transaction
    /// is kept for ``beginRead()`` while fewer than `idleReadLimit` are idle and other reads
    /// of this process are in flight. The last read in flight keeps one pooled transaction
    /// (ending the rest), which ``releaseIdleReads()`` ends unless it is used meanwhile.
    func endRead(_ transaction: LMDBTransaction) {
        let txn = unsafe transaction.pointer
        withReadOperation { unsafe mdb_txn_reset(txn) }
        var armRelease = false
        let ended = idleReads.withLock { pool -> [UInt] in
            pool.active -= 1
            if pool.closed { return [UInt(bitPattern: txn)] }
            if pool.active == 0 && idleReadLimit > 0 {
                defer { pool.idle = [UInt(bitPattern: txn)] }
                if !pool.releaseScheduled {
                    pool.releaseScheduled = true
                    armRelease = true
                }
                return pool.idle
            }
            guard pool.idle.count < idleReadLimit else { return [UInt(bitPattern: txn)] }
            pool.idle.append(UInt(bitPattern: txn))
            return []
        }
        for address in ended { unsafe mdb_txn_abort(OpaquePointer(bitPattern: address)) }
        if armRelease { scheduleIdleRelease() }
    }

    private func scheduleIdleRelease() {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.idleReadRelease) { [weak self] in
            self?.releaseIdleReads()
        }
    }

    /// Ends the pooled transactions once no read has begun for ``idleReadRelease`` and none is
    /// in flight (the timer looks again while reads keep coming). The transactions are ended
    /// under the pool's lock, so a shutdown cannot close the environment under them.
    private func releaseIdleReads() {
        let again = idleReads.withLock { pool -> Bool in
            if !pool.closed && pool.usedSinceRelease {
                pool.usedSinceRelease = false
                return true
            }
            if !pool.closed && pool.active == 0 {
                for address in pool.idle { unsafe mdb_txn_abort(OpaquePointer(bitPattern: address)) }
                pool.idle.removeAll()
            }
            pool.releaseScheduled = false
            return false
        }
        if again { scheduleIdleRelease() }
    }

    // MARK: Writes

    /// Runs `body` in a write transaction on the writer thread and commits it.
    ///
    /// The busy timeout bounds the whole wait of the call, from the moment it is made: the
    /// deadline is set here, on the caller's thread. A write still queued behind this process's
    /// other writes at the deadline leaves the queue unrun; one that reaches the writer thread
    /// waits for another process's write lock only until the deadline. Either way it throws
    /// `.busy` having written nothing.
    ///
    /// Map growth: when the pages in use plus `bytes` (the caller's estimate of what the write
    /// adds) do not fit the map, the map grows *before* the transaction begins, to at least
    /// twice what is needed (``growAhead(_:_:)``), so a large commit runs once. When the estimate
    /// was short and a put or the commit still hits `MDB_MAP_FULL`, the transaction aborts, the
    /// map grows fourfold (up to `maximumMapSize`, at most `maxMapGrowthRetries` times) and `body`
    /// runs again (counted in ``rerunWrites``). Any other error aborts the transaction.
    /// - Throws: `StrataError` only: what `body` throws, `.busy`, `.storeFull`, `.io`, ...
    func write<T>(
        _ context: String, reserving bytes: Int = 0, _ body: @escaping (LMDBTransaction) throws -> T
    ) throws(StrataError) -> T {
        let deadline = DispatchTime.now() + options.busyTimeout.dispatchInterval
        do {
            return try writer.perform(until: deadline) { [self] in
                try writeOnWriterThread(context, deadline, bytes, body)
            }
        } catch let passed as LMDBWriterThread.DeadlinePassed {
            throw .busy(
                """
                \(context): this write waited longer than the busy timeout (\(options.busyTimeout)) behind \
                \(passed.jobsAhead) earlier write(s) of this process (which wait in turn for another process \
                writing the store, or run long). If this happens often, raise LMDBOptions.busyTimeout
                """
            )
        } catch {
            throw strataError(error, context)
        }
    }

    private func writeOnWriterThread<T>(
        _ context: String, _ deadline: DispatchTime, _ bytes: Int, _ body: (LMDBTransaction) throws -> T
    ) throws -> T {
        try writeLock?.lock(
            until: deadline, timeout: options.busyTimeout, waitingFor: "another process writing the store")
        defer { writeLock?.unlock() }
        if writesSinceReaderCheck % Self.readerCheckInterval == 0 { clearDeadReaders() }
        writesSinceReaderCheck &+= 1
        // Under the write lock: no other process commits meanwhile, so the last page read here
        // is the one this transaction starts from.
        try growAhead(bytes, context)
        var growths = 0
        var adoptions = 0
        while true {
            var txn: OpaquePointer?
            var rc = unsafe mdb_txn_begin(raw, nil, 0, &txn)
            if rc == MDB_MAP_RESIZED, adoptions < 4 {
                adoptions += 1
                try replaceMap(size: 0)
                continue
            }
            try lmdbCheck(rc)
            guard let txn = unsafe txn else {
                throw StrataError.io("\(context): mdb_txn_begin returned no transaction")
            }
            let value: T
            do {
                value = try body(unsafe LMDBTransaction(raw: txn))
            } catch LMDBError.mapFull {
                unsafe mdb_txn_abort(txn)
                try grow(&growths, context, "mdb_put")
                rerunWrites.add(1, ordering: .relaxed)
                continue
            } catch {
                unsafe mdb_txn_abort(txn)
                throw error
            }
            rc = unsafe mdb_txn_commit(txn)
            if rc == MDB_MAP_FULL {
                try grow(&growths, context, "mdb_txn_commit")
                rerunWrites.add(1, ordering: .relaxed)
                continue
            }
            // LMDB turns a short `pwrite` while flushing a commit's pages (what a full disk or the
            // file-size limit gives) into `EIO`; the files and the file system tell which it was.
            if rc == EIO, let exhausted = StoreRoom.exhaustion(files: [path + "/data.mdb"], directory: path) {
                throw StrataError.storeFull(
                    "\(context): \(exhausted); LMDB reported its short write as an I/O error and wrote nothing",
                    native: LMDBError(code: rc).native("mdb_txn_commit"))
            }
            try lmdbCheck(rc)
            return value
        }
    }

    /// Grows the map before a write transaction when the pages in use (up to the last page of
    /// the latest commit, from `mdb_env_info`, times the page size from `mdb_env_stat`) plus
    /// `bytes` exceed it: to twice that sum or twice the map, whichever is larger, capped at
    /// `maximumMapSize`. The map is address space only (a read-only shared mapping: the file
    /// grows with the data, not with the map), so growing generously costs nothing. Writer
    /// thread only, under the write lock.
    private func growAhead(_ bytes: Int, _ context: String) throws {
        guard bytes > 0 else { return }
        var info = unsafe MDB_envinfo()
        var stat = MDB_stat()
        unsafe try lmdbCheck(mdb_env_info(raw, &info))
        unsafe try lmdbCheck(mdb_env_stat(raw, &stat))
        let current = unsafe info.me_mapsize
        let used = unsafe (info.me_last_pgno + 1).multipliedReportingOverflow(by: Int(stat.ms_psize))
        let needed = used.partialValue.addingReportingOverflow(bytes)
        let limit = Self.roundToPages(options.maximumMapSize)
        guard !used.overflow, !needed.overflow, needed.partialValue > current, current < limit else { return }
        let target = max(current, needed.partialValue)
        try replaceMap(size: target > limit / 2 ? limit : Self.roundToPages(target * 2))
        grownAhead.add(1, ordering: .relaxed)
    }

    /// Grows the map fourfold, or throws `.storeFull` (with `MDB_MAP_FULL` from `operation` as its
    /// native cause) when it may not grow any more.
    private func grow(_ growths: inout Int, _ context: String, _ operation: String) throws {
        var info = unsafe MDB_envinfo()
        unsafe try lmdbCheck(mdb_env_info(raw, &info))
        let current = unsafe info.me_mapsize
        let limit = Self.roundToPages(options.maximumMapSize)
        guard growths < options.maxMapGrowthRetries, current < limit else {
            throw StrataError.storeFull(
                """
                \(context): the LMDB map is full at \(current) bytes (maximumMapSize \(options.maximumMapSize), \
                \(growths) growth(s) tried)
                """,
                native: LMDBError.mapFull.native(operation))
        }
        try replaceMap(size: current > limit / 4 ? limit : current * 4)
        growths += 1
    }

    /// Calls `mdb_env_set_mapsize` once no read operation is in flight. Writer thread only,
    /// between write transactions.
    private func replaceMap(size: Int) throws {
        gate.lock()
        readState.bitwiseOr(Self.resizingFlag, ordering: .acquiringAndReleasing)
        while readState.load(ordering: .acquiring) != Self.resizingFlag { gate.wait() }
        let rc = unsafe mdb_env_set_mapsize(raw, size)
        readState.bitwiseAnd(~Self.resizingFlag, ordering: .acquiringAndReleasing)
        gate.broadcast()
        gate.unlock()
        try lmdbCheck(rc)
    }

    /// The current map size in bytes.
    var mapSize: Int {
        var info = unsafe MDB_envinfo()
        _ = unsafe mdb_env_info(raw, &info)
        return unsafe info.me_mapsize
    }
}
