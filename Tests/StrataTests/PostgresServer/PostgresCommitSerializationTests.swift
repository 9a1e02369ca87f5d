import Foundation
import Strata
import StrataPostgres
import StrataTestSupport
import Synchronization
import Testing

/// A member of an org: the rows of a write skew, in which each unit of work inserts into the org
/// the other one guards.
final class SkewMember: ManagedObject {
    @Attribute var org: Int64 = 0
}

/// A serialization failure (SQLSTATE 40001) the server reports in a commit's last round trip (the
/// history append, the identity and the `COMMIT` in one pipeline), made exact by
/// ``PostgresFaultProxy``: the commit of a guarded unit of work is held on its way while a second
/// one, guarding the org the first inserts into and inserting into the org the first guards,
/// commits. When the held part reaches the server, serializable snapshot isolation refuses the
/// first commit at its first statement there: the `COMMIT` itself ("Canceled on identification
/// as a pivot, during commit attempt") when only the `COMMIT` was held, the history append or the
/// identity's insert when the whole pipeline was. Each way the save must report `.conflict` (not
/// a lost commit, not an I/O error), write nothing, and the retry must see the other row.
@Suite("PostgreSQL: a serialization failure in the commit's round trip")
struct PostgresCommitSerializationTests {
    /// Where the server refuses the held commit.
    enum Refusal: String, CaseIterable, CustomTestStringConvertible {
        case atCommit = "at the COMMIT"
        case atIdentity = "at the identity's insert"
        case atHistoryAppend = "at the history append"

        var testDescription: String { rawValue }
        var recordsHistory: Bool { self == .atHistoryAppend }
        var fault: PostgresFaultProxy.Fault { self == .atCommit ? .holdCommitStatement : .holdPipeline }
    }

    /// Two containers on one schema: one through a proxy that holds its commit back, one straight
    /// on the server.
    struct Pair {
        let proxy: PostgresFaultProxy
        let held: PersistentContainer
        let direct: PersistentContainer
        let schema: String

        init(recordsHistory: Bool) throws {
            let url = try #require(TestPostgres.url, "run with Scripts/with-postgres.sh")
            proxy = try PostgresFaultProxy(serverURL: url)
            schema = PostgresSQL.uniqueSchema("skew_")
            let model = try Schema(version: 1, [SkewMember.self])
            // The commit is held while the other one runs: well within the statement timeout.
            let options = PostgresOptions(statementTimeout: .seconds(30))
            direct = try PersistentContainer(
                schema: model, engine: .postgres(url: url, schema: schema, options: options),
                recordsHistory: recordsHistory)
            held = try PersistentContainer(
                schema: model, engine: .postgres(url: proxy.url, schema: schema, options: options),
                recordsHistory: recordsHistory)
        }

        /// Waits until the proxy holds the armed commit back.
        func waitUntilHolding() async throws {
            try await Self.wait(until: "the held container's commit reached the proxy") { proxy.isHolding }
        }

        /// Polls `condition` every 2 ms until it holds; a test failure after 30 s.
        static func wait(until what: String, _ condition: () throws -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while try !condition() {
                try #require(ContinuousClock.now < deadline, "never: \(what)")
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        /// Waits until the server has run the held commit's identity insert, so that the `COMMIT`
        /// is the first statement refused: a session whose last statement is that insert and that
        /// is still `active` (the server reports a session idle only when it answers a Sync, and
        /// the pipeline's Sync is held with its `COMMIT`; the insert's preparation, a round trip
        /// of its own before, leaves the session `idle in transaction`).
        func waitUntilIdentityInserted() async throws {
            let sql = try PostgresSQL()
            try await Self.wait(until: "the held commit's identity insert ran") {
                let waiting = try sql.value(
                    """
                    SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' \
                    AND query LIKE 'INSERT INTO %' || $1 || '%strata_commits%'
                    """, [schema])
                return waiting != "0"
            }
        }

        /// Every member's org, read straight from the server.
        func orgs() throws -> [Int64] {
            try PostgresSQL().execute(
                "SELECT org FROM \(PostgresSQL.identifier(schema)).\"SkewMember\" ORDER BY org"
            ).map { Int64($0[0] ?? "") ?? -1 }
        }

        func close() {
            proxy.release()
            held.close()
            direct.close()
            proxy.stop()
            PostgresSQL.dropSchema(schema)
        }
    }

    /// Inserts a member of `org` unless `guarded` has one, guarding that decision; the new
    /// member's URI, or nil when `guarded` had one.
    static func insert(_ org: Int64, unlessMemberOf guarded: Int64, in context: ObjectContext) throws -> String? {
        let members = FetchRequest<SkewMember>(predicate: #Predicate { $0.org == guarded })
        guard try context.fetch(members).isEmpty else { return nil }
        try context.requireUnchangedResults(of: members)
        let member = SkewMember(context: context)
        member.org = org
        try context.save()
        return member.objectID.uriString
    }

    @Test(
        "the held commit is refused: .conflict naming the other unit's row, nothing of it written",
        arguments: Refusal.allCases)
    func refused(_ refusal: Refusal) async throws {
        let pair = try Pair(recordsHistory: refusal.recordsHistory)
        defer { pair.close() }
        pair.proxy.arm(refusal.fault)
        let held = pair.held
        let first = Task {
            try await held.performUnitOfWork(retries: .none) { context in
                try Self.insert(2, unlessMemberOf: 1, in: context)
            }
        }
        try await pair.waitUntilHolding()
        if refusal == .atCommit { try await pair.waitUntilIdentityInserted() }
        let second = try await pair.direct.performUnitOfWork(retries: .none) { context in
            try Self.insert(1, unlessMemberOf: 2, in: context)
        }
        let winner = try #require(second, "the second unit saw no member of org 2 (the first is not committed)")
        pair.proxy.release()
        let error = await #expect(throws: StrataError.self) { _ = try await first.value }
        #expect(pair.proxy.triggered == 1)
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected .conflict, got \(String(describing: error))")
            return
        }
        #expect(conflicts.map(\.objectID.uriString) == [winner], "the conflict names the row that appeared")
        #expect(try pair.orgs() == [1], "only the second unit's member was written")
    }

    @Test("with retries the refused unit of work runs again and sees the other unit's row", arguments: Refusal.allCases)
    func retried(_ refusal: Refusal) async throws {
        let pair = try Pair(recordsHistory: refusal.recordsHistory)
        defer { pair.close() }
        pair.proxy.arm(refusal.fault)
        let held = pair.held
        let attempts = Atomic<Int>(0)
        let first = Task {
            try await held.performUnitOfWork { context in
                attempts.add(1, ordering: .relaxed)
                return try Self.insert(2, unlessMemberOf: 1, in: context)
            }
        }
        try await pair.waitUntilHolding()
        if refusal == .atCommit { try await pair.waitUntilIdentityInserted() }
        let second = try await pair.direct.performUnitOfWork(retries: .none) { context in
            try Self.insert(1, unlessMemberOf: 2, in: context)
        }
        #expect(second != nil)
        pair.proxy.release()
        let inserted = try await first.value
        #expect(inserted == nil, "the re-run saw the member of org 1 and inserted nothing")
        #expect(attempts.load(ordering: .relaxed) == 2)
        #expect(try pair.orgs() == [1])
    }
}
