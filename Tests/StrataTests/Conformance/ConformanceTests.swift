import Foundation
import Strata
import StrataConformance
import Testing

/// The engine conformance kit, once per engine per check: the cross-engine test matrix.
@Suite("engine conformance")
struct ConformanceTests {
    @Test("conformance check", arguments: EngineKind.allCases, StrataConformance.checks)
    func conformance(kind: EngineKind, check: ConformanceCheck) async throws {
        guard let reason = Self.knownFailures[kind]?[check.description] else {
            return await run(kind, check)
        }
        // A known failure must still fail: once the engine is fixed, this reports it, and the
        // entry goes.
        await withKnownIssue(Comment(rawValue: reason)) { await run(kind, check) }
    }

    private func run(_ kind: EngineKind, _ check: ConformanceCheck) async {
        do {
            try await check.run(
                engine: { kind.configuration(in: $0) }, capabilities: kind.capabilities, peer: Self.peer(kind))
        } catch let failure as ConformanceFailure {
            Issue.record(Comment(rawValue: failure.description))
        } catch {
            Issue.record(error)
        }
    }

    /// The conformance peer built next to the test binary (`strata-conformance-peer`), opening
    /// stores with `kind`.
    static func peer(_ kind: EngineKind) -> ConformancePeer {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return ConformancePeer(
            executable: executable.deletingLastPathComponent().appendingPathComponent("strata-conformance-peer"),
            arguments: ["--engine", kind.rawValue])
    }

    /// Checks an engine is known to fail, with why (issue 14: see the conformance report).
    static let knownFailures: [EngineKind: [String: String]] = [:]

    @Test("the kit covers every group the contract names")
    func groups() {
        let groups = Set(StrataConformance.checks.map(\.group))
        let required: Set = [
            "CRUD", "Relationships", "Fetch semantics", "Uniqueness and indexes", "Atomicity", "Isolation",
            "Optimistic conflicts", "IDs and URIs", "Persistence", "Concurrency", "Bad store files", "Contexts",
            "Attribute types", "Migration", "History and observation", "Prefetching and batch faulting",
            "Batch writes", "Upsert", "Aggregates", "Projections", "Streaming", "Set writes", "Engine commits",
        ]
        #expect(groups == required)
        #expect(Set(StrataConformance.checks.map(\.description)).count == StrataConformance.checks.count)
    }
}
