import Foundation
import Synchronization

/// A task executor with a thread of its own: tasks that prefer it
/// (`withTaskExecutorPreference`) run their async code there, never waiting for a thread of the
/// Swift-concurrency pool, which the parallel suite shares (two threads on CI, which tests
/// blocked in child processes or sleeps can hold for seconds).
///
/// For tests that time calls: what they measure is then the call and its hops (a `perform`
/// body still runs on its context's queue), not the pool's queue. The thread holds the executor
/// until ``finish()``, which ends it after the jobs already enqueued; call it once no task that
/// prefers the executor is left. A job enqueued after that stops the test with a message.
final class OwnThreadExecutor: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var finished = false
        var exited = false
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
        let accepted = state.withLock { state -> Bool in
            guard !state.exited else { return false }
            state.jobs.append(job)
            return true
        }
        precondition(accepted, "a job was enqueued on an OwnThreadExecutor after finish() ended its thread")
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
                if state.finished { state.exited = true }
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
