import CLMDB
import Foundation
import StrataStorage
import Synchronization

/// The writes of an environment: each write transaction runs on the writer thread, under the
/// store's write lock and a deadline, and the map grows between transactions when a write's
/// estimate does not fit.
///
/// Walled file (strict memory safety): the write transaction's and the environment's pointers
/// stay in here; `body` gets the transaction as an ``LMDBTransaction``.
///
/// ```swift
/// try environment.write("commit", reserving: 4096) { txn in
///     try txn.put(database, primaryKey: 1, [0x01])
/// }
/// ```
extension LMDBEnvironment {

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
    ///
    /// A `groupable` write (a commit) that finds other groupable writes of this process queued
    /// with it shares one write transaction with them (group commit, ``runGroup(_:)``): `body`
    /// then runs in a nested transaction, and the shared transaction's one commit (one sync to
    /// disk) commits them all.
    func write<T>(
        _ context: String, reserving bytes: Int = 0, groupable: Bool = false,
        _ body: @escaping (LMDBTransaction) throws -> T
    ) throws(StrataError) -> T {
        let deadline = DispatchTime.now() + options.busyTimeout.dispatchInterval
        do {
            if groupable {
                return try writer.performCommit(
                    until: deadline, alone: { [self] in try writeOnWriterThread(context, deadline, bytes, body) },
                    grouped: body, context: context, bytes: bytes)
            }
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
            guard let txn = unsafe try beginWrite(context, adoptions: &adoptions) else { continue }
            let value: T
            do {
                value = try body(unsafe LMDBTransaction(raw: txn))
            } catch LMDBError.mapFull {
                unsafe mdb_txn_abort(txn)
                try grow(&growths, context, "mdb_put")
                continue
            } catch {
                unsafe mdb_txn_abort(txn)
                throw error
            }
            let rc = unsafe mdb_txn_commit(txn)
            if rc == MDB_MAP_FULL {
                try grow(&growths, context, "mdb_txn_commit")
                continue
            }
            try checkCommit(rc, context)
            return value
        }
    }

    /// Group commit: runs `writes` (queued together on the writer thread) in one write
    /// transaction, each in a nested transaction of its own, and commits them with one
    /// `mdb_txn_commit` (one sync to disk). Each write stays all-or-nothing: a write whose body
    /// throws has its nested transaction aborted and ends with that error, while the others
    /// commit. When the shared commit fails, every write that had applied ends with its error
    /// (nothing of any was written). `MDB_MAP_FULL` anywhere aborts the whole transaction, grows
    /// the map and runs every body again, as ``writeOnWriterThread(_:_:_:_:)`` does for one.
    /// Writer thread only.
    func runGroup(_ writes: [GroupableWrite]) {
        guard let first = writes.first else { return }
        let context = "\(first.context) (with \(writes.count - 1) other commit(s) of this process)"
        // Each write waits for another process's write lock only until its own deadline: when
        // the earliest passes, the writes whose deadlines have passed end with `.busy` and the
        // others wait on.
        var pending = writes
        while let deadline = pending.map(\.deadline).min() {
            do {
                try writeLock?.lock(
                    until: deadline, timeout: options.busyTimeout, waitingFor: "another process writing the store")
                break
            } catch {
                let now = DispatchTime.now()
                let expired = pending.filter { $0.deadline <= now }
                if expired.isEmpty {
                    // A wait that ended a moment early: wait again. Any other error ends them all.
                    if case StrataError.busy = error { continue }
                    for write in pending { write.fail(error) }
                    return
                }
                for write in expired { write.fail(error) }
                pending = pending.filter { $0.deadline > now }
            }
        }
        if pending.isEmpty { return }
        defer { writeLock?.unlock() }
        if writesSinceReaderCheck % Self.readerCheckInterval == 0 { clearDeadReaders() }
        writesSinceReaderCheck &+= 1
        do {
            try growAhead(pending.reduce(0) { $0 &+ max($1.bytes, 0) }, context)
            try commitGroup(pending, context)
        } catch {
            for write in pending { write.fail(error) }
        }
    }

    /// Begins a top-level write transaction; nil after adopting a map another process grew
    /// (`MDB_MAP_RESIZED`, at most four times), when the caller begins again.
    /// - Throws: `.notAStore` when `data.mdb` was deleted or replaced since the environment
    ///   opened (``checkDataFileInPlace(_:)``); LMDB's errors.
    private func beginWrite(_ context: String, adoptions: inout Int) throws -> OpaquePointer? {
        try checkDataFileInPlace(context)
        var txn: OpaquePointer?
        let rc = unsafe mdb_txn_begin(raw, nil, 0, &txn)
        if rc == MDB_MAP_RESIZED, adoptions < 4 {
            adoptions += 1
            try replaceMap(size: 0)
            return nil
        }
        try lmdbCheck(rc)
        guard let txn = unsafe txn else { throw StrataError.io("\(context): mdb_txn_begin returned no transaction") }
        return unsafe txn
    }

    /// The transactions of ``runGroup(_:)``: throws only what ends every write.
    private func commitGroup(_ writes: [GroupableWrite], _ context: String) throws {
        var growths = 0
        var adoptions = 0
        attempt: while true {
            guard let parent = unsafe try beginWrite(context, adoptions: &adoptions) else { continue }
            var rc: Int32
            var applied: [Bool] = []
            for write in writes {
                var child: OpaquePointer?
                rc = unsafe mdb_txn_begin(raw, parent, 0, &child)
                guard rc == 0, let child = unsafe child else {
                    unsafe mdb_txn_abort(parent)
                    try lmdbCheck(rc)
                    throw StrataError.io("\(context): mdb_txn_begin returned no nested transaction")
                }
                do {
                    try write.apply(unsafe LMDBTransaction(raw: child))
                } catch LMDBError.mapFull {
                    unsafe mdb_txn_abort(child)
                    unsafe mdb_txn_abort(parent)
                    try grow(&growths, context, "mdb_put")
                    continue attempt
                } catch {
                    unsafe mdb_txn_abort(child)
                    write.fail(error)
                    applied.append(false)
                    continue
                }
                rc = unsafe mdb_txn_commit(child)
                if rc == MDB_MAP_FULL {
                    unsafe mdb_txn_abort(parent)
                    try grow(&growths, context, "mdb_txn_commit")
                    continue attempt
                }
                if rc != 0 {
                    // A nested commit that fails leaves the parent unusable: end them all.
                    unsafe mdb_txn_abort(parent)
                    try lmdbCheck(rc)
                }
                applied.append(true)
            }
            rc = unsafe mdb_txn_commit(parent)
            if rc == MDB_MAP_FULL {
                try grow(&growths, context, "mdb_txn_commit")
                continue
            }
            do {
                try checkCommit(rc, context)
            } catch {
                for (write, didApply) in zip(writes, applied) where didApply { write.fail(error) }
                return
            }
            groupedCommits.add(writes.count, ordering: .relaxed)
            return
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

    /// Grows the map fourfold for a write transaction that hit `MDB_MAP_FULL` to run again
    /// (counted in ``rerunWrites``), or throws `.storeFull` (with `MDB_MAP_FULL` from `operation` as
    /// its native cause) when it may not grow any more.
    private func grow(_ growths: inout Int, _ context: String, _ operation: String) throws {
        var info = unsafe MDB_envinfo()
        unsafe try lmdbCheck(mdb_env_info(raw, &info))
        let current = unsafe info.me_mapsize
        let limit = Self.roundToPages(options.maximumMapSize)
        guard growths < options.maxMapGrowthRetries, current < limit else {
            throw options.mapFullError(
                context, mapSize: current, limit: limit, growths: growths, native: LMDBError.mapFull.native(operation))
        }
        try replaceMap(size: current > limit / 4 ? limit : current * 4)
        growths += 1
        rerunWrites.add(1, ordering: .relaxed)
    }

    /// Throws the error of a top-level `mdb_txn_commit` that returned `rc` (nothing when 0).
    /// LMDB turns a short `pwrite` while flushing a commit's pages (what a full disk or the
    /// file-size limit gives) into `EIO`; the files and the file system tell which it was, and
    /// that is `.storeFull`.
    private func checkCommit(_ rc: Int32, _ context: String) throws {
        if rc == EIO, let exhausted = StoreRoom.exhaustion(files: [path + "/data.mdb"], directory: path) {
            throw StrataError.storeFull(
                "\(context): \(exhausted); LMDB reported its short write as an I/O error and wrote nothing",
                native: LMDBError(code: rc).native("mdb_txn_commit"))
        }
        try lmdbCheck(rc)
    }

    /// Calls `mdb_env_set_mapsize` once no read operation is in flight. Writer thread only,
    /// between write transactions.
    func replaceMap(size: Int) throws {
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
