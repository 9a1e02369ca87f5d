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
