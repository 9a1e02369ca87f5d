import Foundation
import StrataConformance
import StrataTestSupport
import Testing

/// TEMPORARY (issue 17): every conformance check on PostgreSQL, until `EngineKind` gains
/// `.postgres` and the matrix in ConformanceTests runs them. Run with
/// `bash Scripts/with-postgres.sh swift test --skip-build --filter PostgresKit`.
@Suite("PostgresKit")
struct PostgresKitTests {
    @Test(arguments: StrataConformance.checks)
    func kit(check: ConformanceCheck) async throws {
        // STRATA_KIT_FILTER=text runs only the checks whose description contains it (while debugging).
        if let only = ProcessInfo.processInfo.environment["STRATA_KIT_FILTER"], !only.isEmpty,
            !check.description.contains(only)
        {
            return
        }
        do {
            try await check.run(
                engine: { TestPostgres.configuration(at: $0.appendingPathComponent("store.postgres")) },
                peer: ConformancePeer(
                    executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                        .deletingLastPathComponent().appendingPathComponent("strata-conformance-peer"),
                    arguments: ["--engine", "postgres"]))
        } catch let failure as ConformanceFailure {
            Issue.record(Comment(rawValue: "[\(check.group)] " + failure.description))
        }
    }
}
