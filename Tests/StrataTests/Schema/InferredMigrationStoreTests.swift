import Foundation
import Strata
import StrataStorage
import Testing

/// `Note` with an optional `subtitle` added.
final class IMNoteWithSubtitle: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = ""
    @Attribute var subtitle: String?
}

/// `Note` with a required `shelf` added, default "unsorted".
final class IMNoteWithShelf: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = ""
    @Attribute var shelf = "unsorted"
}

/// `Note` whose title became an integer (not inferable).
final class IMNoteNumberTitle: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title: Int64 = 0
}

/// `Note` whose title became unique.
final class IMNoteUniqueTitle: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute(.unique) var title = ""
}

/// Inferred migrations applied by an engine at open, on real stores, on every engine.
@Suite("Inferred migrations in stores", .serialized)
struct InferredMigrationStoreTests {
    /// A version-1 `Note` store holding `titles`.
    private func makeStore(_ kind: EngineKind, titles: [String] = ["Dune", "Solaris"]) async throws -> TestStore {
        let store = try TestStore(kind)
        let container = try store.open(schema: RecordedSchemaModels.note(version: 1))
        let context = container.newBackgroundContext()
        try await context.perform {
            for title in titles { RSNote(context: context).title = title }
            try context.save()
        }
        container.close()
        return store
    }

    /// Opens the store's engine once with `schema` and inference on (what a migrating open does).
    private func migrate(_ store: TestStore, to schema: Schema) throws {
        var storeSchema = schema.storeSchema
        storeSchema.infersMigrations = true
        try store.configuration.open(storeSchema).close()
    }

    @Test(arguments: EngineKind.allCases)
    func anOptionalAttributeIsAddedAndTheRowsKept(kind: EngineKind) async throws {
        let store = try await makeStore(kind)
        let model = try Schema(version: 2, [IMNoteWithSubtitle.self])
        try migrate(store, to: model)
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        let notes = try await context.perform {
            try context.fetch(FetchRequest<IMNoteWithSubtitle>()).map { [$0.title, $0.subtitle ?? "nil"] }
        }
        #expect(notes.sorted { $0[0] < $1[0] } == [["Dune", "nil"], ["Solaris", "nil"]])
        try await context.perform {
            let note = IMNoteWithSubtitle(context: context)
            note.title = "Ubik"
            note.subtitle = "new"
            try context.save()
        }
        container.close()
        if RawStoreEdits.isReadable(store) {
            #expect(try RawStoreEdits.recordedJSON(store) == (try model.recordedSchema.jsonText()))
        }
    }

    @Test(arguments: EngineKind.allCases)
    func anAttributeWithADefaultIsAddedFilledWithTheDefault(kind: EngineKind) async throws {
        let store = try await makeStore(kind)
        let model = try Schema(version: 2, [IMNoteWithShelf.self])
        try migrate(store, to: model)
        // The stored rows hold the default (not a null the object layer would paper over).
        let engine = try store.configuration.open(model.storeSchema)
        let reader = try engine.makeReader()
        let stored = try [1, 2].map { try reader.row(entity: 0, key: $0)?.values.last }
        reader.close()
        engine.close()
        #expect(stored == [.text("unsorted"), .text("unsorted")])
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        let notes = try await context.perform {
            try context.fetch(FetchRequest<IMNoteWithShelf>()).map { "\($0.title)|\($0.shelf)" }
        }
        #expect(notes.sorted() == ["Dune|unsorted", "Solaris|unsorted"])
        container.close()
        // The migrated store is version 2: the old model is now refused.
        #expect(throws: StrataError.self) { try store.open(schema: RecordedSchemaModels.note(version: 1)) }
    }

    @Test(arguments: EngineKind.allCases)
    func aChangeThatNeedsCodeIsRefusedAndTheStoreIsUnchanged(kind: EngineKind) async throws {
        let store = try await makeStore(kind)
        let before = RawStoreEdits.isReadable(store) ? try RawStoreEdits.recordedJSON(store) : nil
        let error = #expect(throws: StrataError.self) {
            try migrate(store, to: try Schema(version: 2, [IMNoteNumberTitle.self]))
        }
        guard case .migrationNotInferable(1, 2, let refused)? = error else {
            Issue.record("expected migrationNotInferable, got \(String(describing: error))")
            return
        }
        #expect(refused == [.attributeTypeChanged(entity: "Note", attribute: "title", from: .string, to: .int64)])
        #expect(try RawStoreEdits.isReadable(store) ? RawStoreEdits.recordedJSON(store) == before : true)
        try store.open(schema: RecordedSchemaModels.note(version: 1)).close()
    }

    @Test(arguments: EngineKind.allCases)
    func aUniqueConstraintIsValidatedFirstAndAClashLeavesTheStoreUnchanged(kind: EngineKind) async throws {
        let model = try Schema(version: 2, [IMNoteUniqueTitle.self])
        let clashing = try await makeStore(kind, titles: ["Dune", "Dune", "Solaris"])
        let before = RawStoreEdits.isReadable(clashing) ? try RawStoreEdits.recordedJSON(clashing) : nil
        #expect(throws: StrataError.constraintViolation(entity: "Note", attributes: ["title"])) {
            try migrate(clashing, to: model)
        }
        #expect(try RawStoreEdits.isReadable(clashing) ? RawStoreEdits.recordedJSON(clashing) == before : true)
        try clashing.open(schema: RecordedSchemaModels.note(version: 1)).close()

        let store = try await makeStore(kind)
        try migrate(store, to: model)
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        let error = await #expect(throws: StrataError.self) {
            try await context.perform {
                IMNoteUniqueTitle(context: context).title = "Dune"
                try context.save()
            }
        }
        #expect(error?.withoutNative == .constraintViolation(entity: "Note", attributes: ["title"]))
        container.close()
    }

    @Test(arguments: EngineKind.allCases)
    func aRemovedAttributeIsDroppedAndTheOtherValuesKept(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: RecordedSchemaModels.noteWithISBN(version: 1))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            let note = RSNoteWithISBN(context: writer)
            note.title = "Dune"
            note.isbn = "978-0441013593"
            try writer.save()
        }
        old.close()
        let model = try RecordedSchemaModels.note(version: 2)
        try migrate(store, to: model)
        let engine = try store.configuration.open(model.storeSchema)
        let reader = try engine.makeReader()
        let stored = try reader.row(entity: 0, key: 1)?.values
        reader.close()
        engine.close()
        #expect(stored == [.text("Dune")])
        // The dropped column is really gone: new rows, which have no value for it, save.
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        try await context.perform {
            RSNote(context: context).title = "Solaris"
            try context.save()
        }
        container.close()
    }
}
