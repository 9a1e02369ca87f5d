import Foundation
import PostgresTestStores
import Strata
import StrataLMDB
import StrataSQLite
import StrataTestSupport
import Testing

/// The engines every engine-level and service-level test runs on: the two embedded engines and
/// PostgreSQL (the server from `STRATA_POSTGRES_URL`, see `TestPostgres`).
enum EngineKind: String, CaseIterable, Codable, CustomTestStringConvertible, Sendable {
    case sqlite
    case lmdb
    case postgres

    var testDescription: String { rawValue }

    /// The engines whose store is a set of files on this machine. Tests about files (a full
    /// disk, permissions, links, LMDB's reader table) take these: a PostgreSQL store lives in
    /// the server's own files, which the client process neither sees nor limits.
    static let fileEngines: [EngineKind] = [.sqlite, .lmdb]

    /// The engine configuration for a store at a fresh location inside `directory`.
    func configuration(in directory: URL) -> EngineConfiguration {
        switch self {
        case .sqlite: .sqlite(at: directory.appendingPathComponent("store.sqlite"))
        case .lmdb: .lmdb(at: directory.appendingPathComponent("store.lmdb"))
        case .postgres: TestPostgres.configuration(at: directory.appendingPathComponent("store.postgres"))
        }
    }
}
