import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import Testing

/// The engines every engine-level and service-level test runs on.
enum EngineKind: String, CaseIterable, Codable, CustomTestStringConvertible, Sendable {
    case sqlite
    case lmdb

    var testDescription: String { rawValue }

    /// The engine configuration for a store at a fresh location inside `directory`.
    func configuration(in directory: URL) -> EngineConfiguration {
        switch self {
        case .sqlite: .sqlite(at: directory.appendingPathComponent("store.sqlite"))
        case .lmdb: .lmdb(at: directory.appendingPathComponent("store.lmdb"))
        }
    }
}
