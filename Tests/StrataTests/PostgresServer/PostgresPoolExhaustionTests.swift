import Foundation
import PostgresTestStores
import Strata
import StrataPostgres
import StrataStorage
import StrataTestSupport
import Testing

/// On PostgreSQL a snapshot is a transaction on one of the pool's connections, so `poolSize`
/// bounds how many readers hold one at once (`poolSize - 1`: the pool keeps its last connection
/// for commits and key reservations): the next waits for a connection and gets `.busy` after
/// `checkoutTimeout`, never a hang, and reads again once a connection is free.
///
/// The readers are the engine's own (`makeReader`), held open without holding a thread: a
/// perform body that blocks would hold a Dispatch worker, which starves the parallel suite.
@Suite("PostgreSQL: the pool")
struct PostgresPoolExhaustionTests {
    @Test("more simultaneous snapshots than the pool gives readers: the extra one gets busy after checkoutTimeout")
    func exhaustedPool() async throws {
        let store = try TestStore(.postgres)
        let checkoutTimeout = Duration.seconds(1)
        let configuration = TestPostgres.configuration(
            at: store.directory.appendingPathComponent("store.postgres"),
            options: PostgresOptions(poolSize: 3, checkoutTimeout: checkoutTimeout))
        let engine = try configuration.open(TestModels.schema.storeSchema)
        defer { engine.close() }
        // Two readers (poolSize - 1) each hold a snapshot on a connection of their own.
        var held = [try engine.makeReader(), try engine.makeReader()]
        defer { held.forEach { $0.close() } }
        _ = try held.map { try $0.count(entity: 0, filter: nil) }

        // The third waits for a connection: on a thread of its own, not a Swift-concurrency one.
        let (outcome, waited) = await runOnOwnThread { () -> Result<Void, any Error> in
            Result { try engine.makeReader().close() }
        }
        print("exhausted pool: the third reader waited \(waited): \(outcome)")
        guard case .failure(StrataError.busy(let message, _)) = outcome else {
            Issue.record("expected .busy from a third reader on a pool of 3, got \(outcome)")
            return
        }
        #expect(waited >= checkoutTimeout - .milliseconds(50), "busy before checkoutTimeout: \(message)")
        #expect(waited < checkoutTimeout + .seconds(3), "busy long after checkoutTimeout: \(waited)")
        #expect(message.contains("poolSize"), "the message should say what to raise: \(message)")
        #expect(message.contains("all 2 connections readers may hold"), "the message should say which share ran out")

        // A reader closed, its connection serves the next one at once.
        held.removeLast().close()
        let again = try engine.makeReader()
        defer { again.close() }
        #expect(try again.count(entity: 0, filter: nil) == 0)
    }
}
