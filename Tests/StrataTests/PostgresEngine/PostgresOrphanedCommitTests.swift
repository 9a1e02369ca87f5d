import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// A commit's transaction whose client vanished (a partition, a half-open flow after a lost reply
/// to `COMMIT`): the server ends it once it has been idle for the statement timeout and 5 s, so
/// its row locks do not outlive the client for the hours TCP takes to give up.
@Suite("PostgreSQL engine: an orphaned commit's transaction")
struct PostgresOrphanedCommitTests {
    @Test("a commit's transaction left idle past the statement timeout and 5 s is ended by the server")
    func idleCommitTransactionIsEnded() async throws {
        let options = PostgresOptions(statementTimeout: .seconds(1))
        let (idleEnded, busyKept) = try await PostgresEngineFixture.withEngine(
            Fixtures.schema, options: options
        ) { engine in
            // Begun as a commit begins its transaction, then left idle as a vanished client leaves it.
            func idle(for seconds: Double) throws -> Bool {
                try engine.withSession { (session) throws(StrataError) -> Bool in
                    try engine.beginCheckingSchemaVersion(session, "BEGIN; " + engine.orphanBound)
                    Thread.sleep(forTimeInterval: seconds)
                    do {
                        _ = try session.run("SELECT 1")
                        session.rollbackQuietly()
                        return false
                    } catch {
                        return true
                    }
                }
            }
            return (try idle(for: 7.5), try idle(for: 0.5))
        }
        #expect(idleEnded, "the server ended the commit's session after 7.5 s idle (bound 6 s)")
        #expect(!busyKept, "a session idle for 0.5 s is kept")
    }
}
