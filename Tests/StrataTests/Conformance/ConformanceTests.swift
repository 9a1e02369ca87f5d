import Foundation
import Strata
import StrataConformance
import Testing

/// The engine conformance kit, once per engine per check: the cross-engine test matrix.
@Suite("engine conformance")
struct ConformanceTests {
    @Test("conformance check", arguments: EngineKind.allCases, StrataConformance.checks)
    func conformance(kind: EngineKind, check: ConformanceCheck) async throws {
        do {
            try await check.run(engine: { kind.configuration(in: $0) })
        } catch let failure as ConformanceFailure {
            Issue.record(Comment(rawValue: failure.description))
        }
    }

    @Test("the kit covers every group the contract names")
    func groups() {
        let groups = Set(StrataConformance.checks.map(\.group))
        let required: Set = [
            "CRUD", "Relationships", "Fetch semantics", "Uniqueness and indexes", "Atomicity", "Isolation",
            "Optimistic conflicts", "IDs and URIs", "Persistence", "Concurrency", "Bad store files", "Contexts",
            "Attribute types", "Migration",
        ]
        #expect(groups == required)
        #expect(Set(StrataConformance.checks.map(\.description)).count == StrataConformance.checks.count)
    }
}
