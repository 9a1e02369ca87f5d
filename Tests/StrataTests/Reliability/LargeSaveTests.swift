import Foundation
import Strata
import Synchronization
import Testing

@testable import StrataLMDB

/// Saves much larger than an LMDB store's initial map, on every engine: the data reads back,
/// and on LMDB the map grows before the write instead of the write failing with
/// `MDB_MAP_FULL` and running again. (PostgreSQL has no map: its store is the test one.)
@Suite("saves larger than the initial LMDB map")
struct LargeSaveTests {
    /// The LMDB map starts at 1 MiB; the saves below write about 8 MiB.
    static func configuration(_ store: TestStore) -> EngineConfiguration {
        switch store.kind {
        case .memory: store.configuration
        case .sqlite, .postgres: store.configuration
        case .lmdb:
            .lmdb(
                at: store.directory.appendingPathComponent("store.lmdb"), options: LMDBOptions(initialMapSize: 1 << 20))
        }
    }

    /// How often the LMDB map grew ahead of a write and how often a write ran again; nil on SQLite.
    static func growth(_ store: TestStore) throws -> (ahead: Int, rerun: Int, mapSize: Int)? {
        guard store.kind == .lmdb else { return nil }
        let environment = try LMDBRegistry.acquire(
            directory: store.directory.appendingPathComponent("store.lmdb"), options: LMDBOptions(), databases: 1)
        defer { LMDBRegistry.release(environment) }
        return (
            environment.grownAhead.load(ordering: .relaxed), environment.rerunWrites.load(ordering: .relaxed),
            environment.mapSize
        )
    }

    static func memo(_ number: Int) -> String {
        "entry \(number) " + String(repeating: "m", count: 80)
    }

    static func insert(_ context: ObjectContext, _ numbers: Range<Int>, account: Account) {
        for number in numbers {
            let entry = Entry(context: context)
            entry.amount = Int64(number)
            entry.memo = memo(number)
            entry.account = account
        }
    }

    /// Every entry reads back in a fresh container, with its values.
    static func checkReadBack(_ store: TestStore, count: Int) async throws {
        let container = try PersistentContainer(schema: TestModels.schema, engine: configuration(store))
        let context = container.newBackgroundContext()
        let (rows, mismatches) = try await context.perform {
            let entries = try context.fetch(FetchRequest<Entry>())
            let wrong = entries.filter { $0.memo != memo(Int($0.amount)) || $0.account?.name != "big" }
            return (entries.count, wrong.count)
        }
        #expect(rows == count)
        #expect(mismatches == 0)
    }

    @Test("one save of 60,000 rows, far past the initial map, runs once and reads back", arguments: EngineKind.allCases)
    func oneLargeSave(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        do {
            let container = try PersistentContainer(schema: TestModels.schema, engine: Self.configuration(store))
            let context = container.newBackgroundContext()
            try await context.perform {
                let account = Account(context: context)
                account.name = "big"
                Self.insert(context, 0..<60_000, account: account)
                try context.save()
            }
            // Read while the container keeps the environment open.
            if let growth = try withExtendedLifetime(container, { try Self.growth(store) }) {
                #expect(growth.rerun == 0, "the write ran again: the map was not grown ahead of it")
                #expect(growth.ahead >= 1)
                #expect(growth.mapSize > 8 << 20)
            }
        }
        try await Self.checkReadBack(store, count: 60_000)
    }

    @Test("30 saves of 2,000 rows crossing the initial map all run once and read back", arguments: EngineKind.allCases)
    func manySaves(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        do {
            let container = try PersistentContainer(schema: TestModels.schema, engine: Self.configuration(store))
            let context = container.newBackgroundContext()
            try await context.perform {
                let account = Account(context: context)
                account.name = "big"
                try context.save()
                for batch in 0..<30 {
                    Self.insert(context, batch * 2000..<(batch + 1) * 2000, account: account)
                    try context.save()
                }
            }
            if let growth = try withExtendedLifetime(container, { try Self.growth(store) }) {
                #expect(growth.rerun == 0, "a write ran again: the map was not grown ahead of it")
                #expect(growth.ahead >= 1)
            }
        }
        try await Self.checkReadBack(store, count: 60_000)
    }
}
