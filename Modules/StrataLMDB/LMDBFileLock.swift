import Foundation
import Strata

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
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Takes the lock, waiting at most `timeout`: polls with a non-blocking `flock`, backing off
    /// from 100 µs to 10 ms between tries.
    /// - Throws: `StrataError.busy` naming `holder` when the deadline passes; `.io` when `flock`
    ///   fails otherwise.
    func lock(timeout: Duration, waitingFor holder: String) throws(StrataError) {
        let start = ContinuousClock.now
        var pause = Duration.microseconds(100)
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
            let error = errno
            guard error == EWOULDBLOCK || error == EINTR else {
                throw .io("cannot lock \(path): \(String(cString: strerror(error))) (errno \(error)); check that the store directory is on a local file system")
            }
            let waited = ContinuousClock.now - start
            if waited >= timeout {
                throw .busy("\(holder) held \(path) for longer than the busy timeout (\(timeout)); nothing was written")
            }
            let remaining = timeout - waited
            let nanoseconds = (pause < remaining ? pause : remaining).nanoseconds
            usleep(UInt32(clamping: max(nanoseconds / 1000, 1)))
            pause = pause * 2 < .milliseconds(10) ? pause * 2 : .milliseconds(10)
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
}
