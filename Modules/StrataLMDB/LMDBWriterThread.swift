import Foundation
import Strata

/// The one OS thread on which every LMDB write transaction of an environment begins, commits
/// and aborts.
///
/// LMDB ties a write transaction to the thread that began it, while Swift tasks and dispatch
/// queues move between threads. Callers hand a job to ``perform(_:)`` and block until it ran here.
final class LMDBWriterThread: @unchecked Sendable {
    private let condition = NSCondition()
    /// Pending jobs; guarded by `condition`.
    private var jobs: [() -> Void] = []
    /// Set once by ``stop()``; guarded by `condition`.
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in self.main() }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    private func main() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                break
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
        finished.signal()
    }

    /// Runs `body` on the writer thread and returns its result; the caller blocks meanwhile.
    /// - Throws: whatever `body` throws; `StrataError.misuse` after ``stop()``.
    func perform<T>(_ body: @escaping () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        condition.lock()
        if stopping {
            condition.unlock()
            throw StrataError.misuse("the LMDB store was closed before this write began; open a new PersistentContainer to write again")
        }
        jobs.append {
            box.result = Result { try body() }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        // The semaphore orders the writer's store before this load.
        return try box.result!.get()
    }

    /// Lets queued jobs finish, then ends the thread and waits for it. Idempotent.
    func stop() {
        condition.lock()
        let already = stopping
        stopping = true
        condition.signal()
        condition.unlock()
        if !already { finished.wait() }
    }
}

/// Carries a job's result from the writer thread back to the caller.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
