import Foundation
import Strata
import StrataConformance
import StrataMemory
import Testing

/// The whole conformance kit on the in-memory engine in one line, as an engine outside the package
/// runs it: every check, with the engine's capabilities (no durability, no files, one process).
@Suite("in-memory engine: the whole kit")
struct MemoryKitTests {
    @Test("every conformance check passes on .inMemory(name:)")
    func wholeKit() async {
        let report = await StrataConformance.run(engine: { .inMemory(name: $0.path) }, capabilities: .inProcess)
        print("memory engine conformance: \(report.description)")
        #expect(report.conforms, "\(report)")
    }
}

/// The kit run by a careless plug-in author: the in-memory engine declared `.durable` (the
/// default) with no peer. Its stores do not survive a reopen and it has no files, so many checks
/// must fail; what matters is that every one of them reports a failure instead of trapping, so the
/// author gets a report. (Two history checks wait out their 120-second guard: the run takes about
/// four minutes, most of it asleep.)
@Suite("in-memory engine declared durable: the kit reports, never traps")
struct MisdeclaredMemoryKitTests {
    @Test("every check of a misdeclared engine ends in a pass or a failure")
    func misdeclared() async {
        let report = await StrataConformance.run(engine: { .inMemory(name: $0.path) })
        print("memory engine declared durable: \(report.failures.count) of \(report.checkCount) checks failed")
        #expect(report.checkCount == StrataConformance.checks.count)
        #expect(!report.conforms, "a store that forgets everything on reopen cannot pass as durable")
        #expect(
            report.failures.contains { $0.check.hasPrefix("Persistence:") && $0.message.contains("reopen") },
            "the persistence checks must fail: \(report)")
    }
}
