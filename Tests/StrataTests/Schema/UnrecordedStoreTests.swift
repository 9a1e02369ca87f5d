import Foundation
import Strata
import StrataStorage
import Testing

/// Stores made by the format before recorded schemas (no `schema` metadata entry) are upgraded
/// on their first open when their version and their tables or databases are the model's.
///
/// On the engines whose stores a raw write can change (``EngineKind/rawStores``): the tests make
/// such a store by removing the recorded schema. The in-memory engine has no older format and
/// records every store it makes, so it never meets one.
@Suite("Stores without a recorded schema")
struct UnrecordedStoreTests {
    /// A store as today's code leaves it: made with `schema`, holding one author and one book,
    /// with the recorded schema removed by a raw write.
    private func unrecordedLibrary(_ kind: EngineKind) async throws -> TestStore {
        let store = try TestStore(kind)
        let container = try store.open(schema: RecordedSchemaModels.library())
        let context = container.newBackgroundContext()
        try await context.perform {
            let author = RSAuthor(context: context)
            author.name = "Le Guin"
            let book = RSBook(context: context)
            book.title = "The Dispossessed"
            book.year = 1974
            book.author = author
            try context.save()
        }
        container.close()
        try RawStoreEdits.removeRecordedSchema(store)
        #expect(try RawStoreEdits.recordedJSON(store) == nil)
        return store
    }

    @Test(arguments: EngineKind.rawStores)
    func isUpgradedOnFirstOpen(kind: EngineKind) async throws {
        let store = try await unrecordedLibrary(kind)
        let schema = try RecordedSchemaModels.library()
        let container = try store.open(schema: schema)
        let context = container.newBackgroundContext()
        let titles = try await context.perform {
            try context.fetch(FetchRequest<RSBook>()).map { "\($0.title) \($0.year ?? 0) \($0.author?.name ?? "-")" }
        }
        #expect(titles == ["The Dispossessed 1974 Le Guin"])
        container.close()
        #expect(try RawStoreEdits.recordedJSON(store) == (try schema.recordedSchema.jsonText()))
        // Recorded now: a model of another shape is refused with the differences listed.
        let error = #expect(throws: StrataError.self) { try store.open(schema: RecordedSchemaModels.note()) }
        guard case .schemaMismatch(1, 1, let differences)? = error else {
            Issue.record("expected schemaMismatch, got \(String(describing: error))")
            return
        }
        #expect(differences.contains { $0.description == "entity `Note` was added" })
    }

    @Test(arguments: EngineKind.rawStores)
    func withOtherTablesIsRefusedAndLeftAlone(kind: EngineKind) async throws {
        let store = try await unrecordedLibrary(kind)
        let error = #expect(throws: StrataError.self) { try store.open(schema: RecordedSchemaModels.note()) }
        guard case .schemaMismatch(1, 1, let differences)? = error, case .unrecordedStoreDiffers? = differences.first
        else {
            Issue.record("expected schemaMismatch with unrecordedStoreDiffers, got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("predates recorded schemas") == true)
        #expect(try RawStoreEdits.recordedJSON(store) == nil, "a refused open records nothing")
        // The right model still upgrades it afterwards.
        try store.open(schema: RecordedSchemaModels.library()).close()
        #expect(try RawStoreEdits.recordedJSON(store) != nil)
    }

    @Test(arguments: EngineKind.rawStores)
    func ofAnotherVersionIsRefusedAsBefore(kind: EngineKind) async throws {
        let store = try await unrecordedLibrary(kind)
        #expect(throws: StrataError.schemaMismatch(storeVersion: 1, modelVersion: 2)) {
            try store.open(schema: RecordedSchemaModels.library(version: 2))
        }
        #expect(try RawStoreEdits.recordedJSON(store) == nil)
    }

    /// SQLite compares the `CREATE` statements it keeps; LMDB decodes every row with the model's
    /// columns. Either way a column the model adds is found.
    @Test(arguments: EngineKind.rawStores)
    func anAddedColumnIsFound(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open(schema: RecordedSchemaModels.note())
        let context = container.newBackgroundContext()
        try await context.perform {
            RSNote(context: context).title = "a note"
            try context.save()
        }
        container.close()
        try RawStoreEdits.removeRecordedSchema(store)
        let error = #expect(throws: StrataError.self) { try store.open(schema: RecordedSchemaModels.noteWithISBN()) }
        guard case .schemaMismatch(1, 1, let differences)? = error,
            case .unrecordedStoreDiffers(let detail)? = differences.first
        else {
            Issue.record("expected schemaMismatch with unrecordedStoreDiffers, got \(String(describing: error))")
            return
        }
        // PostgreSQL compares its catalog's columns with the model's: the missing one is named.
        let expected =
            switch kind {
            case .memory: "(the in-memory engine records every store it makes)"
            case .sqlite: #"no `CREATE TABLE "Note""#
            case .lmdb: "wrong column count"
            case .postgres: "isbn"
            }
        #expect(detail.contains(expected), "\(detail)")
        #expect(try RawStoreEdits.recordedJSON(store) == nil)
    }

    /// A column that became required while a row holds nil in it: SQLite sees `NOT NULL` in the
    /// `CREATE` text, LMDB sees the nil when it reads the row.
    @Test(arguments: EngineKind.rawStores)
    func aNilInAColumnTheModelRequiresIsFound(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open(schema: RecordedSchemaModels.noteOptionalTitle())
        let context = container.newBackgroundContext()
        try await context.perform {
            _ = RSNoteOptionalTitle(context: context)
            try context.save()
        }
        container.close()
        try RawStoreEdits.removeRecordedSchema(store)
        let error = #expect(throws: StrataError.self) { try store.open(schema: RecordedSchemaModels.note()) }
        guard case .schemaMismatch(1, 1, let differences)? = error,
            case .unrecordedStoreDiffers(let detail)? = differences.first
        else {
            Issue.record("expected schemaMismatch with unrecordedStoreDiffers, got \(String(describing: error))")
            return
        }
        // PostgreSQL sees the nullable column in its catalog (or the NULL in the row): title is named.
        let expected =
            switch kind {
            case .memory: "(the in-memory engine records every store it makes)"
            case .sqlite: #"no `CREATE TABLE "Note""#
            case .lmdb: "has no value for the required title"
            case .postgres: "title"
            }
        #expect(detail.contains(expected), "\(detail)")
        #expect(try RawStoreEdits.recordedJSON(store) == nil)
    }
}
