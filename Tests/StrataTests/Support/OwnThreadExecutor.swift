import Foundation
import Synchronization

/// A task executor with a thread of its own: tasks that prefer it
/// (`withTaskExecutorPreference`) run their async code there, never waiting for a thread of the
/// Swift-concurrency pool, which the parallel suite shares (two threads on CI, which tests
/// blocked in child processes or sleeps can hold for seconds).
///
/// For tests that time calls: what they measure is then the call, not the pool's queue.
/// ``finish()`` ends the thread once nothing prefers the executor any more.
final class OwnThreadExecutor: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var finished = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    /// Ends the thread after the jobs already enqueued.
    func finish() {
        state.withLock { $0.finished = true }
        ready.signal()
    }

    private func run() {
        while true {
            ready.wait()
            let next = state.withLock { state -> UnownedJob?? in
                if !state.jobs.isEmpty { return .some(state.jobs.removeFirst()) }
                return state.finished ? .none : .some(nil)
            }
            switch next {
            case .none: return
            case .some(.none): continue
            case .some(.some(let job)): job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }
}
