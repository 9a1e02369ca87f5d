import Foundation
import PostgresTestStores
import Strata
import StrataConformance
import StrataLMDB
import StrataMemory
import StrataSQLite
import StrataTestSupport
import Testing

/// The engines the tests run on: the two embedded engines, PostgreSQL (the server from
/// `STRATA_POSTGRES_URL`, see `TestPostgres`) and the in-memory engine. Every engine-level and
/// service-level test takes them all (``allCases``). A test that cannot run on one of them takes a
/// named subset that says why, from what that engine is (see ``capabilities``), never from a bug:
/// ``durable``, ``sharedAcrossProcesses``, ``rawStores`` or ``fileEngines``.
///
/// `STRATA_TEST_ENGINES` (comma-separated names, e.g. `memory` or `sqlite,memory`) narrows every
/// list to the engines it names: to time or debug one engine's runs.
enum EngineKind: String, CaseIterable, Codable, CustomTestStringConvertible, Sendable {
    case sqlite
    case lmdb
    case postgres
    /// `.inMemory(name:)`: one process, no files, not durable (see ``capabilities``).
    case memory

    var testDescription: String { rawValue }

    /// Every engine, the in-memory one included: every engine-level and service-level test takes
    /// these. A test whose subject one engine does not have asserts what that engine does instead
    /// (its typed refusal, its documented behaviour) where it can; only where it cannot does it
    /// take one of the subsets below.
    static let allCases: [EngineKind] = chosen([.sqlite, .lmdb, .postgres, .memory])

    /// The engines whose store outlives every container on it and the process: not the in-memory
    /// engine, whose store is gone with its last container. For tests whose subject is what is
    /// left after a process is killed or every container is closed (crashes, restarts, a reopen
    /// that must find the saved data with nothing else holding the store).
    static let durable: [EngineKind] = allCases.filter { $0.capabilities.isDurable }

    /// The engines whose store other processes open too: not the in-memory engine, whose name
    /// another process resolves to a store of its own. For tests that start processes on one
    /// store (helper programs, the `ledger` command line's `--store`).
    static let sharedAcrossProcesses: [EngineKind] = allCases.filter { $0.capabilities.sharesAcrossProcesses }

    /// The engines whose stored tables a test can read and edit behind Strata's back (SQLite's and
    /// LMDB's files with their C libraries, PostgreSQL's tables with SQL): not the in-memory
    /// engine, whose store is reachable only through the engine. For tests about stores made by an
    /// older format or damaged, which they make with raw edits (``RawStoreEdits``).
    static let rawStores: [EngineKind] = allCases.filter { $0.capabilities.hasStoreFiles }

    /// The engines whose store is a set of files on this machine. Tests about files (a full
    /// disk, permissions, links, LMDB's reader table) take these: a PostgreSQL store lives in
    /// the server's own files, which the client process neither sees nor limits, and the
    /// in-memory engine writes no file at all.
    static let fileEngines: [EngineKind] = chosen([.sqlite, .lmdb])

    /// `kinds`, or only those named in `STRATA_TEST_ENGINES` when it is set.
    private static func chosen(_ kinds: [EngineKind]) -> [EngineKind] {
        guard let names = ProcessInfo.processInfo.environment["STRATA_TEST_ENGINES"], !names.isEmpty else {
            return kinds
        }
        let wanted = Set(names.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return kinds.filter { wanted.contains($0.rawValue) }
    }

    /// What the engine offers beyond the contract, for the conformance kit and the subsets above.
    var capabilities: EngineCapabilities { self == .memory ? .inProcess : .durable }

    /// What a helper about store files or raw store edits throws for the in-memory engine, which
    /// has none (the tests that use such helpers take ``rawStores`` or ``fileEngines``).
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
