import Foundation
import Strata
import Testing

/// Two containers on one store in this process, and another process that opens the store, writes
/// and exits: every container keeps reading and writing, and nothing acknowledged is lost.
///
/// On SQLite this once failed with `.io` (`SQLITE_IOERR_SHORT_READ`, 522) or lost the later saves:
/// opening the second container read the store's header through a descriptor of its own, and
/// closing that descriptor dropped every POSIX lock this process held on the file (locks belong to
/// the process and the file, not to the descriptor). With no shared lock left, the other process
/// took the exclusive lock when it closed, checkpointed, and deleted the write-ahead log and its
/// index under this process's open connections. 10 rounds per engine (100 with `STRATA_STRESS=1`).
@Suite("two containers and another process on one store", .serialized)
struct SharedStoreTests {
    static let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 100 : 10

    /// Other processes open the store: the engines they share (``EngineKind/sharedAcrossProcesses``);
    /// in another process an in-memory store's name is a store of its own.
    @Test(
        "the containers keep reading and writing after another process closed the store",
        arguments: EngineKind.sharedAcrossProcesses
    )
    func anotherProcessCloses(kind: EngineKind) async throws {
        try LifetimeProbe.requireBuilt()
        var failures: [String] = []
        for round in 0..<Self.rounds {
            do {
                failures += try await Self.round(kind).map { "round \(round): \($0)" }
            } catch {
                failures.append("round \(round): \(error)")
            }
        }
        print("shared store \(kind): \(Self.rounds) rounds, \(failures.count) failures")
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    /// One round on a fresh store; returns what went wrong, throws what a step threw.
    static func round(_ kind: EngineKind) async throws -> [String] {
        let store = try TestStore(kind)
        let schema = try CreationRaceItem.probeSchema()
        var problems: [String] = []
        do {
            let first = try store.open(schema: schema)
            defer { first.close() }
            try await save("first-0", in: first)
            _ = try await count(in: first) // leaves a read connection in the pool
            let second = try store.open(schema: schema)
            defer { second.close() }
            try await save("second-0", in: second)
            let probe = try LifetimeProbe(
                "open-write", engine: kind.rawValue, store: store.configuration.location, ["name": "child"])
            let lines = await probe.collectRemainingLines()
            if lines != ["ok"] { problems.append("the other process said \(lines)") }
            try await save("first-1", in: first)
            try await save("second-1", in: second)
            let history = try await first.history()
            let token = try await first.currentHistoryToken()
            if history.last?.token != token { problems.append("the last history transaction is not the current token") }
            for (name, container) in [("first", first), ("second", second)] {
                let seen = try await count(in: container)
                if seen != 5 { problems.append("the \(name) container sees \(seen) items, not 5") }
            }
        }
        let reopened = try store.open(schema: schema)
        defer { reopened.close() }
        let stored = try await count(in: reopened)
        if stored != 5 { problems.append("the reopened store holds \(stored) items; 5 saves were acknowledged") }
        return problems
    }

    static func save(_ name: String, in container: PersistentContainer) async throws {
        try await container.performUnitOfWork(retries: .none) { context in
            let item = CreationRaceItem(context: context)
            item.name = name
            try context.save()
        }
    }

    static func count(in container: PersistentContainer) async throws -> Int {
        let context = container.newBackgroundContext()
        return try await context.perform { try context.count(for: FetchRequest<CreationRaceItem>()) }
    }
}
