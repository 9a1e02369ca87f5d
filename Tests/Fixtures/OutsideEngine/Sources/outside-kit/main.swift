import Foundation
import OutsideMemoryEngine
import Strata
import StrataConformance

// Runs every check of the conformance kit on the engine this package builds, one line per check,
// and exits 1 when any fails. An engine written elsewhere runs the kit the same way; the whole of
// it is `StrataConformance.run(engine:capabilities:)`, which this loop spells out to log each check.
let engine: EngineFactory = { directory in .inMemory(name: "outside-kit:\(directory.path)") }
var failed = 0
for check in StrataConformance.checks {
    do {
        try await check.run(engine: engine, capabilities: .inProcess)
        print("passed  \(check)")
    } catch {
        failed += 1
        print("FAILED  \(check): \(error)")
    }
}
let checks = StrataConformance.checks.count
print("outside engine: \(checks - failed) of \(checks) conformance checks passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
