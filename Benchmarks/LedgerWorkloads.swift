import Foundation
import Ledger
import Strata
import StrataLMDB
import StrataSQLite
import StrataTestSupport

/// Workloads 7 and 8 run the ledger domain's services, the way an application would.
///
/// 7. Concurrent ledger transfers: the same number of `TransactionService.transfer` calls from
///    1, 2, 4 and 8 tasks, in transfers per second (the baseline column is the 1-task rate).
/// 8. Main-actor stall: a main-actor heartbeat every 1 ms while ledger operations run from the
///    main actor, first through the `@MainActor` shared-context pattern, then through the
///    services' fresh background contexts; the longest and the 99th-percentile gap of each.
enum LedgerWorkloads {
    static func run(options: BenchmarkOptions, scratch: URL) async throws -> [WorkloadResult] {
        var results: [WorkloadResult] = []
        for engine in options.engines {
            let directory = scratch.appendingPathComponent("ledger-\(engine.rawValue)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            if options.workloads.contains(.ledgerTransfers) {
                progress("\(engine.displayName): 7 concurrent ledger transfers")
                results += try await ConcurrentTransfers.measure(engine, in: directory, rows: options.rows)
            }
            if options.workloads.contains(.mainActorStall) {
                progress("\(engine.displayName): 8 main-actor stall")
                results += try await MainActorStall.measure(engine, in: directory, rows: options.rows)
            }
        }
        return results
    }

    /// The configuration of the ledger store at `location` (a SQLite store is the file
    /// `location` + `.sqlite`; a PostgreSQL store is the schema named after `location`).
    static func configuration(_ engine: EngineChoice, at location: URL) -> EngineConfiguration {
        switch engine {
        case .sqlite:
            .sqlite(
                at: location.deletingLastPathComponent().appendingPathComponent(
                    location.lastPathComponent + ".sqlite"))
        case .lmdb: .lmdb(at: location)
        case .postgres: BenchmarkPostgres.configuration(for: location)
        }
    }

    /// A ledger store with `count` accounts of one currency and a large opening balance.
    static func makeLedger(
        _ engine: EngineChoice, in directory: URL, name: String, accounts count: Int
    ) async throws -> (PersistentContainer, [String]) {
        let container = try PersistentContainer(
            schema: .ledger, engine: configuration(engine, at: directory.appendingPathComponent(name)))
        let service = AccountService(contexts: container)
        var ids: [String] = []
        for index in 0..<count {
            ids.append(
                try await service.create(
                    name: "acct-\(index)", currency: "USD", openingBalance: 100_000_000, allowsOverdraft: false
                ).id)
        }
        return (container, ids)
    }
}
