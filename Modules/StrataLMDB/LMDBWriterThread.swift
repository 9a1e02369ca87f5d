import Foundation
import StrataStorage

/// The one OS thread on which every LMDB write transaction of an environment begins, commits
/// and aborts.
///
/// LMDB ties a write transaction to the thread that began it, while Swift tasks and dispatch
/// queues move between threads. Callers hand a job to ``perform(until:_:)`` and block until it
/// ran here, or until their deadline passes while the job still waits in the queue.
final class LMDBWriterThread: @unchecked Sendable {
    private let condition = NSCondition()
    /// Pending jobs, in arrival order; guarded by `condition`.
    private var jobs: [Job] = []
    /// The number the next job gets; guarded by `condition`.
    private var nextJobNumber: UInt64 = 0
    /// Set once by ``stop()``; guarded by `condition`.
    private var stopping = false
    /// Whether the thread is running a job; guarded by `condition`.
    private var running = false
    private let finished = DispatchSemaphore(value: 0)

    private struct Job {
        let number: UInt64
        let run: () -> Void
        /// Set for a commit that may share one write transaction with the commits queued with it.
        let groupable: GroupableWrite?
        /// Signalled once the thread has finished the job and is free again.
        let done: DispatchSemaphore
    }

    /// The most queued commits one write transaction takes (group commit).
    static let groupLimit = 64

    /// Runs several queued commits in one write transaction (set by the environment through
    /// ``groupCommits(with:)``); nil runs every job alone. Guarded by `condition`.
    private var runGroup: (([GroupableWrite]) -> Void)?

    /// Thrown by ``perform(until:_:)`` when the deadline passed before the writer thread took
    /// the job: the job was taken out of the queue and never runs.
    struct DeadlinePassed: Error {
        /// Jobs that were still ahead of this one when it gave up.
        let jobsAhead: Int
    }

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
            var group = [jobs.removeFirst()]
            // Group commit: commits queued behind a commit share its write transaction (and its
            // one sync to disk); any other job runs alone.
            let runGroup = runGroup
            if runGroup != nil, group[0].groupable != nil {
                while group.count < Self.groupLimit, let next = jobs.first, next.groupable != nil {
                    group.append(jobs.removeFirst())
                }
            }
            running = true
            condition.unlock()
            if group.count > 1, let runGroup {
                runGroup(group.compactMap(\.groupable))
            } else {
                group[0].run()
            }
            // Free again before the callers wake: their next writes must not find the thread
            // still marked busy with these.
            condition.lock()
            running = false
            condition.unlock()
            for job in group { job.done.signal() }
        }
        finished.signal()
    }

    /// Runs `body` on the writer thread and returns its result; the caller blocks meanwhile.
    ///
    /// - Parameter deadline: when the job is still queued at this moment (earlier jobs of this
    ///   process keep the thread busy), it is taken out of the queue unrun and the call throws
    ///   ``DeadlinePassed``. Once the thread has taken the job the caller waits for it to end;
    ///   `body` itself must respect the deadline where it waits. Nil waits without bound.
    /// - Throws: whatever `body` throws; ``DeadlinePassed``; `StrataError.misuse` after ``stop()``.
    func perform<T>(until deadline: DispatchTime?, _ body: @escaping () throws -> T) throws -> T {
        let box = ResultBox<T>()
        return try enqueue(until: deadline, box: box, run: { box.result = Result { try body() } }, groupable: nil)
    }

    /// Like ``perform(until:_:)`` for a commit: alone, the thread runs `alone`; queued with other
    /// commits, it runs `write.apply` in their shared transaction instead (``GroupableWrite``).
    func performCommit<T>(
        until deadline: DispatchTime, alone: @escaping () throws -> T,
        grouped apply: @escaping (LMDBTransaction) throws -> T, context: String, bytes: Int
    ) throws -> T {
        let box = ResultBox<T>()
        let write = GroupableWrite(
            context: context, deadline: deadline, bytes: bytes,
            apply: { txn in box.result = .success(try apply(txn)) },
            fail: { error in box.result = .failure(error) })
        return try enqueue(
            until: deadline, box: box, run: { box.result = Result { try alone() } }, groupable: write)
    }

    private func enqueue<T>(
        until deadline: DispatchTime?, box: ResultBox<T>, run: @escaping () -> Void, groupable: GroupableWrite?
    ) throws -> T {
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        if stopping {
            condition.unlock()
            throw StrataError.misuse(
                "the LMDB store was closed before this write began; open a new PersistentContainer to write again")
        }
        let number = nextJobNumber
        nextJobNumber &+= 1
        jobs.append(Job(number: number, run: run, groupable: groupable, done: done))
        condition.signal()
        condition.unlock()
        if let deadline, done.wait(timeout: deadline) == .timedOut {
            condition.lock()
            // A job first in line while the thread is idle waits for nothing but the thread to
            // wake up (a zero or tiny timeout passes meanwhile): it is not given up.
            let position = jobs.firstIndex { $0.number == number }
            let givenUp = position.map { $0 > 0 || running } ?? false
            if givenUp, let position { jobs.remove(at: position) }
            condition.unlock()
            if givenUp, let position { throw DeadlinePassed(jobsAhead: position) }
            // The thread took the job (or is about to): it runs to its end.
            done.wait()
        } else if deadline == nil {
            done.wait()
        }
        // The semaphore orders the writer's store before this load.
        return try box.result!.get()
    }

    /// From now on, two or more groupable commits queued together run through `runGroup`.
    func groupCommits(with runGroup: @escaping ([GroupableWrite]) -> Void) {
        condition.lock()
        self.runGroup = runGroup
        condition.unlock()
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

/// A commit that may run in a write transaction shared with the commits queued with it (group
/// commit, ``LMDBEnvironment/runGroup(_:)``): `apply` runs its body in a nested transaction of
/// the shared one and keeps the body's result; `fail` records the error the commit ends with.
struct GroupableWrite {
    let context: String
    let deadline: DispatchTime
    /// The commit's estimate of the bytes it adds (for growing the map ahead).
    let bytes: Int
    let apply: (LMDBTransaction) throws -> Void
    let fail: (any Error) -> Void
}

/// Carries a job's result from the writer thread back to the caller.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
