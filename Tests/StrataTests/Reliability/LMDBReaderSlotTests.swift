import Foundation
import Strata
import StrataLMDB
import Synchronization
import Testing

/// LMDB reader slots: a killed process's slot is cleared while the store stays open (so it stops
/// pinning pages), and idle processes hold no slot.
@Suite("LMDB reader slots", .serialized)
struct LMDBReaderSlotTests {
    /// Updates one row with a large value `count` times, so every commit frees pages that only
    /// a pinned snapshot could keep from being reused.
    static func churn(_ container: PersistentContainer, count: Int) async throws {
        for step in 0..<count {
            try await container.performUnitOfWork { context in
                let item =
                    try context.fetch(FetchRequest<CreationRaceItem>()).first ?? CreationRaceItem(context: context)
                item.name = "churn"
                item.note = String(repeating: Character(UnicodeScalar(UInt8(65 + step % 26))), count: 12_000)
                try context.save()
            }
        }
    }

    static func dataFileSize(_ location: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(
            atPath: location.appendingPathComponent("data.mdb").path)
        return (attributes[.size] as? Int) ?? 0
    }

    @Test("a process killed while holding a snapshot stops pinning pages while the store stays open")
    func staleReaderIsCleared() async throws {
        try LifetimeProbe.requireBuilt()
        let store = try TestStore(.lmdb)
        let location = store.configuration.location
        // The probe opens the store with its own model, so the store is made with that model.
        let container = try store.open(schema: CreationRaceItem.probeSchema())
        try await Self.churn(container, count: 20)
        let holder = try LifetimeProbe("hold-snapshot", engine: "lmdb", store: location)
        #expect(holder.nextLine() == "ok holding")
        let pid = holder.pid
        holder.stop()
        #expect(
            try LifetimeProbe.readerSlots(location).contains { $0.pid == pid },
            "the killed probe should have left its slot")
        let before = try Self.dataFileSize(location)
        try await Self.churn(container, count: 300)
        let growth = try Self.dataFileSize(location) - before
        let stale = try LifetimeProbe.readerSlots(location).filter { $0.pid == pid }
        print(
            """
            stale reader: data file grew \(growth) bytes over 300 commits of a 12 kB value; stale slots left: \
            \(stale.count)
            """
        )
        #expect(stale.isEmpty, "the dead process's slot is still in the reader table")
        // A pinned snapshot makes every commit take fresh pages (about 300 × 16 kB here); with
        // the slot cleared within 32 commits the freed pages are reused.
        #expect(growth < 1 << 20, "the data file grew \(growth) bytes")
    }

    @Test("idle processes hold no reader slot, so they cannot lock another process out")
    func idleProcessesHoldNoSlots() async throws {
        try LifetimeProbe.requireBuilt()
        let store = try TestStore(.lmdb)
        let location = store.configuration.location
        // The first process to open the store sizes the reader table: 16 slots here.
        let container = try PersistentContainer(
            schema: CreationRaceItem.probeSchema(), engine: .lmdb(at: location, options: LMDBOptions(maxReaders: 16)))
        let idle = try (0..<2).map { _ in
            try LifetimeProbe("idle-after-reads", engine: "lmdb", store: location, ["readers": "8"])
        }
        for probe in idle { #expect(probe.nextLine() == "ok idle") }
        // An idle process keeps at most one ended transaction for its next read, and ends it
        // once it has gone unused for a moment (LMDBEnvironment.idleReadRelease, 100 ms): wait
        // for that, up to 10 s, so a process that never lets go fails instead of hanging.
        func heldByIdle() throws -> [(pid: Int32, txn: String)] {
            try LifetimeProbe.readerSlots(location).filter { slot in idle.contains { $0.pid == slot.pid } }
        }
        let atOnce = try heldByIdle()
        #expect(atOnce.count <= idle.count, "idle processes hold \(atOnce.count) reader slots right after their reads")
        var held = atOnce
        let deadline = ContinuousClock.now + .seconds(10)
        while !held.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            held = try heldByIdle()
        }
        let context = container.newBackgroundContext()
        let result: Result<Int, any Error>
        do {
            result = .success(try await context.perform { try context.count(for: FetchRequest<CreationRaceItem>()) })
        } catch {
            result = .failure(error)
        }
        idle.forEach { $0.stop() }
        print(
            """
            idle processes: \(held.count) reader slots held by 2 idle processes; a read from a third process: \
            \(result)
            """
        )
        #expect(held.isEmpty, "idle processes hold \(held.count) reader slots")
        #expect((try? result.get()) == 0, "the read failed: \(result)")
    }

    @Test(
        "more simultaneous performs than LMDB's old 126-slot table, all holding snapshots, all read",
        // Not PostgreSQL: there a snapshot is a transaction on one of the pool's connections, so
        // `poolSize` bounds simultaneous snapshots by design (`PostgresPoolTests`: the others
        // wait, then get `.busy` after `checkoutTimeout`).
        arguments: EngineKind.fileEngines)
    func manySimultaneousPerforms(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let performs = 160
        let shared = PerformGate()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<performs {
                group.addTask {
                    let context = container.newBackgroundContext()
                    do {
                        try await context.perform {
                            _ = try context.count(for: FetchRequest<Account>())
                            // Keep this snapshot until every perform holds one, or until the
                            // deadline: blocked performs need as many threads as there are
                            // performs, and a test must fail rather than hang if Dispatch
                            // does not supply them.
                            shared.arrived.withLock { $0 += 1 }
                            while shared.arrived.withLock({ $0 }) < performs && shared.errors.withLock({ $0.isEmpty }) {
                                guard ContinuousClock.now < shared.deadline else {
                                    let arrived = shared.arrived.withLock { $0 }
                                    shared.errors.withLock {
                                        $0.append(
                                            """
                                            only \(arrived) of \(performs) performs held a snapshot at once after \
                                            \(PerformGate.patience)
                                            """
                                        )
                                    }
                                    break
                                }
                                usleep(200)
                            }
                        }
                    } catch {
                        shared.errors.withLock { $0.append(String(describing: error)) }
                    }
                }
            }
        }
        let failed = shared.errors.withLock { $0 }
        print(
            """
            simultaneous performs \(kind): \(performs) performs, \(shared.arrived.withLock { $0 }) held snapshots \
            at once, \(failed.count) errors
            """
        )
        #expect(failed.count == 0, "\(failed.prefix(3))")
        #expect(shared.arrived.withLock { $0 } == performs)
    }
}

/// What the simultaneous performs share: how many hold a snapshot, and the errors seen.
final class PerformGate: Sendable {
    /// How long the performs wait for one another before the test fails instead of hanging.
    static let patience = Duration.seconds(60)
    let arrived = Mutex(0)
    let errors = Mutex<[String]>([])
    /// When the waiting performs give up.
    let deadline = ContinuousClock.now + patience
}
