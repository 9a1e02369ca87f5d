import Foundation
import PostgresTestStores
import Strata
import StrataConformance
import StrataLMDB
import StrataMemory
import StrataSQLite
import StrataTestSupport
import Testing

/// The engines the tests run on: the two embedded engines and PostgreSQL (the server from
/// `STRATA_POSTGRES_URL`, see `TestPostgres`), which every engine-level and service-level test
/// takes (``allCases``), and the in-memory engine, which the conformance kit and the ledger's
/// service tests take too (``withMemory``).
enum EngineKind: String, CaseIterable, Codable, CustomTestStringConvertible, Sendable {
    case sqlite
    case lmdb
    case postgres
    /// `.inMemory(name:)`: one process, no files, not durable (see ``capabilities``).
    case memory

    var testDescription: String { rawValue }

    /// The durable engines, which every engine-level and service-level test runs on. Tests that
    /// reopen a closed store, read its files or start other processes take these.
    static let allCases: [EngineKind] = chosen([.sqlite, .lmdb, .postgres])

    /// Every engine, the in-memory one included: for tests whose stores live while they run.
    static let withMemory: [EngineKind] = chosen([.sqlite, .lmdb, .postgres, .memory])

    /// `kinds`, or only those named in `STRATA_TEST_ENGINES` (comma-separated, e.g. `memory` or
    /// `sqlite,memory`) when it is set: to time or debug one engine's runs.
    private static func chosen(_ kinds: [EngineKind]) -> [EngineKind] {
        guard let names = ProcessInfo.processInfo.environment["STRATA_TEST_ENGINES"], !names.isEmpty else {
            return kinds
        }
        let wanted = Set(names.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return kinds.filter { wanted.contains($0.rawValue) }
    }

    /// What the engine offers beyond the contract, for the conformance kit.
    var capabilities: EngineCapabilities { self == .memory ? .inProcess : .durable }

    /// The engines whose store is a set of files on this machine. Tests about files (a full
    /// disk, permissions, links, LMDB's reader table) take these: a PostgreSQL store lives in
    /// the server's own files, which the client process neither sees nor limits.
    static let fileEngines: [EngineKind] = [.sqlite, .lmdb]

    /// What a test about store files throws for the in-memory engine, which has none (such tests
    /// take ``allCases``).
    static let noStoreFiles = StrataError.misuse("the in-memory engine keeps no store files to read or edit")

    /// The engine configuration for a store at a fresh location inside `directory`.
    func configuration(in directory: URL) -> EngineConfiguration {
        switch self {
        case .sqlite: .sqlite(at: directory.appendingPathComponent("store.sqlite"))
        case .lmdb: .lmdb(at: directory.appendingPathComponent("store.lmdb"))
        case .postgres: TestPostgres.configuration(at: directory.appendingPathComponent("store.postgres"))
        // The temporary directory is unique: its path names a store no other test opens.
        case .memory: .inMemory(name: directory.appendingPathComponent("store.memory").path)
        }
    }
}
