import Foundation
import Strata
import Synchronization
import Testing

/// Closing a store while other tasks are starting reads and saves: never a crash, and every
/// failure is `.misuse`. Releasing the last container while its contexts still work is not a
/// close at all: those contexts keep the store open and see no error.
// Serialized: each case runs hot loops on up to a dozen threads or tasks; three engines' cases at
// once starve the rest of the suite on a 2-core machine.
@Suite("close races", .serialized)
struct CloseRaceTests {
    static let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 200 : 20
    static let workers = 12

    /// Failures seen by the workers, and how many operations they completed.
    final class Tally: Sendable {
        let state = Mutex<(operations: Int, errors: [String], misuses: Int)>((0, [], 0))

        func succeeded() { state.withLock { $0.operations += 1 } }
        var operations: Int { state.withLock { $0.operations } }

        /// Records a failure; returns true when it is the `.misuse` that ends a worker.
        func failed(_ error: any Error) -> Bool {
            state.withLock { state in
                if case StrataError.misuse = error {
                    state.misuses += 1
                    return true
                }
                state.errors.append(String(describing: error))
                return false
            }
        }
    }

    /// One unit of work: a count, and every third time a save.
    static func work(_ context: ObjectContext, _ step: Int) async throws {
        try await context.perform {
            _ = try context.count(for: FetchRequest<Account>())
            if step % 3 == 0 {
                let entry = Entry(context: context)
                entry.memo = "step \(step)"
                try context.save()
            }
        }
    }

    /// How long a loop of these tests may wait for something that should come within
    /// milliseconds before it gives up and fails the test instead of hanging it.
    static let patience = Duration.seconds(60)

    /// A wait of these tests that ran past ``patience``.
    struct TimedOut: Error, CustomStringConvertible {
        let description: String
    }

    /// Waits until the workers completed `count` operations, so the close lands among them.
    /// - Throws: ``TimedOut`` when they have not after ``patience`` (the workers stopped early
    ///   or are stuck), so the test fails instead of hanging.
    static func waitForOperations(_ tally: Tally, _ count: Int, _ what: String = "operations") async throws {
        let deadline = ContinuousClock.now + patience
        while tally.operations < count {
            guard ContinuousClock.now < deadline else {
                throw TimedOut(description: "only \(tally.operations) of \(count) \(what) after \(patience)")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test(
        "close() while many tasks start reads and saves: no crash, every failure is misuse",
        arguments: EngineKind.allCases)
    func explicitCloseRacesWork(kind: EngineKind) async throws {
        var failures: [String] = []
        var misuses = 0
        for round in 0..<Self.rounds {
            let store = try TestStore(kind)
            let container = try store.open()
            let tally = Tally()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<Self.workers {
                    group.addTask {
                        // Each worker runs until a `.misuse` tells it the store was closed.
                        for step in 0..<100_000 {
                            do {
                                try await Self.work(container.newBackgroundContext(), worker &* 100_000 &+ step)
                                tally.succeeded()
                            } catch {
                                // A cancelled worker (the wait below gave up) stops too: its every
                                // perform would throw at once, a loop that never yields its thread.
                                if tally.failed(error) || Task.isCancelled { return }
                            }
                        }
                    }
                }
                try await Self.waitForOperations(tally, 10 + round % 20)
                container.close()
                try await group.waitForAll()
            }
            let result = tally.state.withLock { $0 }
            failures += result.errors.map { "round \(round): \($0)" }
            misuses += result.misuses
        }
        print(
            """
            close race \(kind): \(Self.rounds) rounds × \(Self.workers) workers, \(misuses) misuse, \
            \(failures.count) other failures
            """
        )
        #expect(failures.count == 0, "\(failures.prefix(3))")
        #expect(misuses == Self.rounds * Self.workers, "every worker should end on the .misuse of the closed store")
    }

    @Test(
        "engine close() while threads begin and use readers in a tight loop: no crash, every failure is misuse",
        arguments: EngineKind.allCases)
    func engineCloseRacesReaders(kind: EngineKind) async throws {
        let rounds = Self.rounds * 10
        let threads = 6
        var failures: [String] = []
        var roundsRun = 0
        // One store, reopened every round: each round closes the engine it opened.
        let store = try TestStore(kind)
        for round in 0..<rounds {
            roundsRun += 1
            let engine = try store.configuration.open(TestModels.schema.storeSchema)
            let tally = Tally()
            let finished = Tally()
            let deadline = ContinuousClock.now + Self.patience
            for _ in 0..<threads {
                // Plain threads: the loop blocks, so it stays off Swift's cooperative pool.
                // A thread ends on the `.misuse` of the closed engine, on any other error (a
                // failure, recorded), or at the deadline (a close that never took effect).
                Thread {
                    defer { finished.succeeded() }
                    while ContinuousClock.now < deadline {
                        do {
                            let reader = try engine.makeReader()
                            _ = try reader.count(entity: 0, filter: nil)
                            reader.close()
                            tally.succeeded()
                        } catch {
                            _ = tally.failed(error)
                            return
                        }
                    }
                    tally.state.withLock {
                        $0.errors.append(
                            "a reader thread still ran \(Self.patience) after the round began: close() never stopped it"
                        )
                    }
                }.start()
            }
            do {
                try await Self.waitForOperations(tally, 20 + round % 50)
            } catch {
                // The threads have stopped early or are stuck; close and collect what they saw.
                tally.state.withLock { $0.errors.append(String(describing: error)) }
            }
            engine.close()
            try await Self.waitForOperations(finished, threads, "reader threads finished")
            failures += tally.state.withLock { $0.errors }.map { "round \(round): \($0)" }
            // One failed round is enough to fail, and more would only add waits.
            if !failures.isEmpty { break }
        }
        print(
            """
            engine close race \(kind): \(roundsRun) of \(rounds) rounds × \(threads) threads, \(failures.count) \
            failures other than misuse
            """
        )
        #expect(failures.count == 0, "\(failures.prefix(3))")
    }

    @Test(
        "releasing the last container while its contexts read and save closes nothing under them",
        arguments: EngineKind.allCases)
    func releasingContainerKeepsContextsWorking(kind: EngineKind) async throws {
        var failures: [String] = []
        var operations = 0
        for round in 0..<Self.rounds {
            let store = try TestStore(kind)
            var container: PersistentContainer? = try store.open()
            let contexts = (0..<Self.workers).map { _ in container!.newBackgroundContext() }
            let tally = Tally()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (worker, context) in contexts.enumerated() {
                    group.addTask {
                        for step in 0..<30 {
                            do {
                                try await Self.work(context, worker &* 100 &+ step)
                                tally.succeeded()
                            } catch {
                                _ = tally.failed(error)
                                tally.state.withLock { $0.errors.append("misuse is not expected here: \(error)") }
                                return
                            }
                        }
                    }
                }
                try await Self.waitForOperations(tally, 5 + round % 20)
                container = nil
                try await group.waitForAll()
            }
            let result = tally.state.withLock { $0 }
            failures += result.errors.map { "round \(round): \($0)" }
            operations += result.operations
        }
        print(
            """
            container release race \(kind): \(Self.rounds) rounds, \(operations) operations, \(failures.count) \
            failures
            """
        )
        #expect(failures.count == 0, "\(failures.prefix(3))")
        #expect(operations == Self.rounds * Self.workers * 30)
    }
}
