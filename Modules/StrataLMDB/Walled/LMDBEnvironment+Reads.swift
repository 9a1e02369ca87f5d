import CLMDB
import Foundation
import StrataStorage
import Synchronization

/// The reads of an environment: read operations, which map growth waits for, and read
/// transactions, renewed from a pool of reset ones.
///
/// Walled file (strict memory safety): the read transactions' `MDB_txn` pointers stay in here
/// (pooled as addresses) and reach callers only as ``LMDBTransaction`` values.
///
/// ```swift
/// let count = try environment.withReadOperation {
///     let txn = try environment.beginRead()
///     defer { environment.endRead(txn) }
///     return try txn.count(database)
/// }
/// ```
extension LMDBEnvironment {

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
}
