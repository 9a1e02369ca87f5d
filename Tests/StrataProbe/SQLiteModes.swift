import Foundation
import Strata

/// Modes for the SQLite multi-process tests.
let sqliteModes: [String: ProbeMode] = [:]
