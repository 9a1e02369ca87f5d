import Foundation
import Strata

/// Modes for the LMDB multi-process tests.
let lmdbModes: [String: ProbeMode] = [:]
