import Foundation
import PostgresTestStores
import Strata
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// `Note(title)` at version 1 of these tests.
final class PGMNote: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = ""
}

/// `Note` with `motto`, whose default holds SQL: a fill that were spliced would break the
/// statement (or run the rest of it).
final class PGMNoteWithMotto: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = ""
    @Attribute var motto = PostgresMigrationTests.motto
}

/// `Note` with `motto` and a unique title: over two equal titles, refused after `motto` was added.
final class PGMUniqueNoteWithMotto: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute(.unique) var title = ""
    @Attribute var motto = PostgresMigrationTests.motto
}

/// PostgreSQL-specific migration behaviour, read from the server's catalog (the engine-neutral
/// behaviour is the conformance kit's "Migration" group): fills are bound, a refused migration
/// leaves the schema's DDL as it was, and a renamed entity's indexes and key counter follow it.
@Suite("PostgreSQL migrations", .serialized)
struct PostgresMigrationTests {
    static let motto = "it's'); DROP TABLE \"Note\"; -- $1 \\ \u{0} end"

    /// A store with the given titles at version 1.
    private func notes(_ titles: [String]) async throws -> PostgresTestStore {
        let store = try PostgresTestStore()
        let container = try PersistentContainer(
            schema: try Schema(version: 1, [PGMNote.self]), engine: store.configuration)
        let context = container.newBackgroundContext()
        try await context.perform {
            for title in titles { PGMNote(context: context).title = title }
            try context.save()
        }
        container.close()
        return store
    }

    @Test func aFillIsBoundNeverSpliced() async throws {
        let store = try await notes(["Dune", "Solaris"])
        let container = try PersistentContainer(
            schema: try Schema(version: 2, [PGMNoteWithMotto.self]), engine: store.configuration)
        defer { container.close() }
        let motto = Self.motto
        let context = container.newBackgroundContext()
        let stored = try await context.perform {
            try context.count(for: FetchRequest<PGMNoteWithMotto>(predicate: #Predicate { $0.motto == motto }))
        }
        #expect(stored == 2)
    }

    @Test func aRefusedMigrationLeavesTheSchemaAsItWas() async throws {
        let store = try await notes(["Dune", "Dune", "Ubik"])
        let before = try store.catalog()
        #expect(throws: StrataError.constraintViolation(entity: "Note", attributes: ["title"])) {
            try PersistentContainer(
                schema: try Schema(version: 2, [PGMUniqueNoteWithMotto.self]), engine: store.configuration
            ).close()
        }
        #expect(try store.catalog() == before)
        #expect(before.contains("schema_version 1"))
    }

    @Test func aRenamedEntitysIndexesAndKeyCounterFollowIt() async throws {
        let store = try PostgresTestStore()
        let v1 = try PersistentContainer(
            schema: try Schema(version: 1, [MEPerson.self, MEBookOfPerson.self, MEGenreOfPerson.self]),
            engine: store.configuration)
        let context = v1.newBackgroundContext()
        try await context.perform {
            let lem = MEPerson(context: context)
            lem.name = "Lem"
            let solaris = MEBookOfPerson(context: context)
            solaris.title = "Solaris"
            solaris.author = lem
            try context.save()
        }
        v1.close()
        let v2 = try Schema(version: 2, [MEWriter.self, MEBookOfWriter.self, MEGenreOfWriter.self])
        var renamed = v2.storeSchema
        renamed.infersMigrations = true
        renamed.renames = SchemaRenames(entities: ["Writer": "Person"])
        try store.configuration.open(renamed).close()

        let fresh = try PostgresTestStore()
        try fresh.configuration.open(v2.storeSchema).close()
        let migrated = try store.catalog()
        #expect(migrated == (try fresh.catalog()).map { $0.hasPrefix("schema_version") ? "schema_version 2" : $0 })
        #expect(migrated.contains("index Writer Writer_pkey"))
        #expect(migrated.contains("counter Writer"))
        #expect(!migrated.contains { $0.contains("Person") })
    }
}

/// A PostgreSQL store at a fresh location (its own schema), removed with its directory.
final class PostgresTestStore: Sendable {
    let directory: URL
    var location: URL { directory.appendingPathComponent("store.postgres") }
    var configuration: EngineConfiguration { TestPostgres.configuration(at: location) }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The store's tables' columns, indexes and constraints, its key counters and schema
    /// version, one sorted line each (`column Note.title text NO`, `index Note Note_pkey`, …).
    func catalog() throws -> [String] {
        let schema = TestPostgres.schema(for: location)
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set")
        let settings = try PostgresConnectionSettings(url: url, schema: schema, options: PostgresOptions())
        let connection = try PGConnection(keywords: settings.keywords)
        let quoted = pgQuoted(schema)
        var lines: [String] = []
        for sql in [
            """
            SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable \
            FROM information_schema.columns WHERE table_schema = $1
            """,
            "SELECT 'index ' || tablename || ' ' || indexname FROM pg_indexes WHERE schemaname = $1",
            """
            SELECT 'constraint ' || c.conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace \
            WHERE n.nspname = $1
            """,
            "SELECT 'counter ' || entity FROM \(quoted).strata_key_counters WHERE $1 <> ''",
            """
            SELECT 'schema_version ' || value FROM \(quoted).strata_metadata \
            WHERE key = 'schema_version' AND $1 <> ''
            """,
        ] {
            let result = try connection.execute(
                sql, [.rawText(schema)], binaryResults: false, deadline: .now + .seconds(30))
            for row in 0..<result.rowCount { lines.append(result.text(row, 0) ?? "NULL") }
        }
        return lines.sorted()
    }
}
