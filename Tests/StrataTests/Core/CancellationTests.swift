import Dispatch
import Foundation
import Strata
import Synchronization
import Testing

/// Task cancellation and `perform`: a body that has not started does not run, a running body
/// can see the cancellation, and a save that starts after it writes nothing.
@Suite("perform cancellation")
struct CancellationTests {
    static func accountCount(_ container: PersistentContainer) async throws -> Int {
        let context = container.newBackgroundContext()
        return try await context.perform { try context.count(for: FetchRequest<Account>()) }
    }

    @Test(
        "a task cancelled before perform gets CancellationError and the body never runs", arguments: EngineKind.allCases
    )
    func cancelledBeforeStart(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let ran = Atomic<Bool>(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await context.perform {
                ran.store(true, ordering: .relaxed)
                Account(context: context).name = "never"
                try context.save()
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        let bodyRan = ran.load(ordering: .relaxed)
        #expect(!bodyRan)
        #expect(try await Self.accountCount(container) == 0)
    }

    /// Waits, without blocking a cooperative thread, until `semaphore` is signalled.
    static func wait(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    @Test(
        "a perform cancelled while waiting for the context's queue does not run its body",
        arguments: EngineKind.allCases)
    func cancelledWhileQueued(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        // Several rounds, so that if one cancel lands before its perform is queued (then the
        // "cancelled before start" path answers, with the same outcome), others still take the
        // queued path.
        let rounds = 5
        for round in 0..<rounds {
            let release = DispatchSemaphore(value: 0)
            let holding = DispatchSemaphore(value: 0)
            let aboutToPerform = DispatchSemaphore(value: 0)
            let ran = Atomic<Bool>(false)
            // Occupies the context's queue until released.
            let blocker = Task {
                try await context.perform {
                    holding.signal()
                    release.wait()
                }
            }
            await Self.wait(for: holding)
            let waiting = Task {
                aboutToPerform.signal()
                try await context.perform {
                    ran.store(true, ordering: .relaxed)
                    Account(context: context).name = "queued \(round)"
                    try context.save()
                }
            }
            // The waiting task has passed its own start; a moment later its perform has queued
            // its body behind the blocker (the pause only makes that likely; the assertions
            // below hold either way).
            await Self.wait(for: aboutToPerform)
            try await Task.sleep(for: .milliseconds(100))
            waiting.cancel()
            release.signal()
            try await blocker.value
            await #expect(throws: CancellationError.self, "round \(round)") { try await waiting.value }
            let bodyRan = ran.load(ordering: .relaxed)
            #expect(!bodyRan, "round \(round): the cancelled perform's body ran")
        }
        #expect(try await Self.accountCount(container) == 0)
    }

    @Test(
        "a running body sees the cancellation, and a save that starts after it throws and writes nothing",
        arguments: EngineKind.allCases)
    func cancelledWhileRunning(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let started = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        let task = Task {
            try await context.perform { () -> [String] in
                var seen = ["isCancelled before: \(context.isCancelled)"]
                Account(context: context).name = "unsaved"
                started.signal()
                cancelled.wait()
                seen.append("isCancelled after: \(context.isCancelled)")
                do {
                    try context.checkCancellation()
                    seen.append("checkCancellation: no error")
                } catch is CancellationError {
                    seen.append("checkCancellation: CancellationError")
                }
                do {
                    try context.save()
                    seen.append("save: no error")
                } catch is CancellationError {
                    seen.append("save: CancellationError, hasChanges \(context.hasChanges)")
                }
                return seen
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        task.cancel()
        cancelled.signal()
        let seen = try await task.value
        #expect(
            seen == [
                "isCancelled before: false", "isCancelled after: true", "checkCancellation: CancellationError",
                "save: CancellationError, hasChanges true",
            ])
        #expect(try await Self.accountCount(container) == 0)
    }

    @Test("an uncancelled perform saves normally", arguments: EngineKind.allCases)
    func notCancelled(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let flag = try await context.perform {
            Account(context: context).name = "saved"
            try context.checkCancellation()
            try context.save()
            return context.isCancelled
        }
        #expect(!flag)
        #expect(try await Self.accountCount(container) == 1)
    }
}
