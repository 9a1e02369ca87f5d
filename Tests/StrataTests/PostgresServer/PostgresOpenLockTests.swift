import Foundation
import Strata
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// The open's advisory lock, held by "another process" (a plain connection) the way a write
/// transaction in progress holds it: shared. Opening a store that exists and is the model's only
/// reads, so it must not wait for that write; creating or migrating one writes, so it must. (The
/// models are `PostgresMigrationTests`' `Note` at versions 1 and 2.)
@Suite("PostgreSQL: opens and the open lock", .serialized)
struct PostgresOpenLockTests {
    /// Short enough that an open waiting for the held lock fails within the test, long enough for
    /// a loaded machine's open.
    static let options = PostgresOptions(
        poolSize: 2, statementTimeout: .seconds(20), lockTimeout: .seconds(2), checkoutTimeout: .seconds(20))

    /// A connection holding the store's open lock shared in an open transaction, as a commit of
    /// another process does while it runs.
    private func holdOpenLockShared(schema: String) throws -> PostgresSQL {
        let other = try PostgresSQL()
        try other.execute(
            "BEGIN; SELECT pg_advisory_xact_lock_shared(\(PostgresEngine.openLockClass), hashtext('\(schema)'))")
        return other
    }

    /// Opens the store in `schema` with `model` (version 1's `Note` by default) and ``options``.
    private func open(_ url: String, schema: String, model: Schema? = nil) throws -> PersistentContainer {
        try PersistentContainer(
            schema: try model ?? Schema(version: 1, [PGMNote.self]),
            engine: .postgres(url: url, schema: schema, options: Self.options))
    }

    private func makeStore(_ url: String, schema: String) async throws {
        try PostgresSQL().execute("DROP SCHEMA IF EXISTS \(schema) CASCADE")
        let container = try open(url, schema: schema)
        let context = container.newBackgroundContext()
        try await context.perform {
            PGMNote(context: context).title = "first"
            try context.save()
        }
        container.close()
    }

    @Test("an open of a store that is the model's does not wait for another process's write in progress")
    func openDuringAWrite() async throws {
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set: run with Scripts/test.sh")
        let schema = "s_open_lock_read"
        try await makeStore(url, schema: schema)
        let other = try holdOpenLockShared(schema: schema)
        defer { _ = try? other.execute("ROLLBACK") }
        // Before opens took the lock shared, this open waited for the write and failed with .busy
        // once lockTimeout (2 s) ran out.
        let container = try open(url, schema: schema)
        defer { container.close() }
        let context = container.newBackgroundContext()
        let titles = try await context.perform {
            PGMNote(context: context).title = "second"
            try context.save()
            return try context.fetch(FetchRequest<PGMNote>(sortBy: [SortDescriptor(\.title)])).map(\.title)
        }
        #expect(titles == ["first", "second"])
    }

    @Test("an open that migrates waits for another process's write in progress, then migrates")
    func migrationWaitsForAWrite() async throws {
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set: run with Scripts/test.sh")
        let schema = "s_open_lock_migrate"
        try await makeStore(url, schema: schema)
        let other = try holdOpenLockShared(schema: schema)
        let version2 = try Schema(version: 2, [PGMNoteWithMotto.self])
        do {
            try open(url, schema: schema, model: version2).close()
            Issue.record("a migration opened while another process's write held the open lock")
        } catch let error as StrataError {
            guard case .busy = error else {
                Issue.record("expected .busy (the lock's wait past lockTimeout), got \(error)")
                return
            }
        }
        #expect(try other.value("SELECT value FROM \(schema).strata_metadata WHERE key = 'schema_version'") == "1")
        try other.execute("ROLLBACK")
        let container = try open(url, schema: schema, model: version2)
        defer { container.close() }
        let context = container.newBackgroundContext()
        let mottos = try await context.perform {
            try context.fetch(FetchRequest<PGMNoteWithMotto>()).map(\.motto)
        }
        #expect(mottos == [PostgresMigrationTests.motto])
    }
}
