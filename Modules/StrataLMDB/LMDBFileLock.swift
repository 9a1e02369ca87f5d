import Foundation
import StrataStorage

/// An inter-process lock: `flock` on a Strata-owned sidecar file in the store directory.
///
/// LMDB's own locks live in `lock.mdb`, which Strata never opens itself (closing any
/// descriptor of a file drops every `fcntl` lock the process holds on it). The sidecars are
/// separate files, locked with `flock`, which belongs to one open file description: two
/// engines of one process, each with its own descriptor, exclude each other like two processes.
///
/// - `strata-open.lock`: held while a process checks, opens or creates the store, so exactly one
///   process creates a new store and the others wait for it and then open it.
/// - `strata-write.lock`: held by the writer thread around each write transaction, so that a
///   writer waiting for another process's commit can give up at a deadline (LMDB's own writer
///   mutex waits without bound).
final class LMDBFileLock: @unchecked Sendable {
    static let openLockName = "strata-open.lock"
    static let writeLockName = "strata-write.lock"

    let path: String
    private let descriptor: Int32

    /// Opens (creating if needed) the sidecar file, or returns nil when the directory does not
    /// allow it (read-only): then no process can create or write the store there either, and
    /// the caller goes on unlocked and gets LMDB's own error.
    init?(directory: URL, name: String) {
        path = directory.appendingPathComponent(name).path
        let fd = SystemCalls.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Takes the lock, waiting at most `timeout` from now.
    /// - Throws: `StrataError.busy` naming `holder` when the deadline passes; `.io` when `flock`
    ///   fails otherwise.
    func lock(timeout: Duration, waitingFor holder: String) throws(StrataError) {
        try lock(until: DispatchTime.now() + timeout.dispatchInterval, timeout: timeout, waitingFor: holder)
    }

    /// Takes the lock if it is free, else waits for it until `deadline` (a deadline already
    /// passed still gets one try): polls with a non-blocking `flock`, backing off from 100 µs
    /// to 10 ms between tries. A free lock costs one `flock` call and no clock read.
    /// - Parameters:
    ///   - deadline: when to give up (`DispatchTime` clock).
    ///   - timeout: the busy timeout the deadline came from, for the error message.
    ///   - holder: who holds the lock, for the error message.
    /// - Throws: `StrataError.busy` naming `holder` when the deadline passes; `.io` when `flock`
    ///   fails otherwise.
    func lock(until deadline: DispatchTime, timeout: Duration, waitingFor holder: String) throws(StrataError) {
        var pause: UInt64 = 100_000
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
            let error = errno
            guard error == EWOULDBLOCK || error == EINTR else {
                throw .io(
                    "cannot lock \(path); check that the store directory is on a local file system",
                    native: NativeError(
                        engine: "lmdb", code: Int(error), message: SystemCalls.errorText(error), operation: "flock"))
            }
            let now = DispatchTime.now().uptimeNanoseconds
            let end = deadline.uptimeNanoseconds
            if now >= end {
                throw .busy("\(holder) held \(path) for longer than the busy timeout (\(timeout))")
            }
            usleep(UInt32(clamping: max(min(pause, end - now) / 1000, 1)))
            pause = min(pause * 2, 10_000_000)
        }
    }

    /// Releases the lock.
    func unlock() {
        _ = flock(descriptor, LOCK_UN)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }

    /// The duration as a `DispatchTimeInterval`; negative counts as zero, and a duration too
    /// long for one saturates (a deadline that far away never passes).
    var dispatchInterval: DispatchTimeInterval {
        .nanoseconds(Int(clamping: max(nanoseconds, 0)))
    }
}
