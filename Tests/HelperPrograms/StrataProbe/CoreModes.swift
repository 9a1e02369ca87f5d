import Foundation
import Strata

/// Modes for the Core multi-process tests.
let coreModes: [String: ProbeMode] = [:]
