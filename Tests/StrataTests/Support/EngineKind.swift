import Testing
import Foundation
import Strata
import StrataSQLite

/// The engines every engine-level and service-level test runs on.
enum EngineKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite

    var testDescription: String { rawValue }

    /// The engine configuration for a store at a fresh location inside `directory`.
    func configuration(in directory: URL) -> EngineConfiguration {
        switch self {
        case .sqlite: .sqlite(at: directory.appendingPathComponent("store.sqlite"))
        }
    }
}
