import Foundation
import Strata
import StrataStorage
import Testing

/// Stores record their whole schema at creation and refuse a model of another shape at open.
@Suite("Recorded schema in stores")
struct RecordedSchemaStoreTests {
    /// Read the way a person would, outside Strata: an in-memory store has no outside.
    @Test(arguments: EngineKind.rawStores)
    func theSchemaIsRecordedAsReadableJSON(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let schema = try RecordedSchemaModels.library()
        try store.open(schema: schema).close()
        let json = try #require(try RawStoreEdits.recordedJSON(store))
        #expect(json == (try schema.recordedSchema.jsonText()))
        #expect(json.contains(#""name":"Author_name_unique""#))
    }

    @Test(arguments: EngineKind.allCases)
    func theSameShapeOpensAgain(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open(schema: RecordedSchemaModels.library())
        let context = container.newBackgroundContext()
        try await context.perform {
            let author = RSAuthor(context: context)
            author.name = "Le Guin"
            try context.save()
        }
        container.close()
        let again = try store.open(schema: RecordedSchemaModels.library())
        let reader = again.newBackgroundContext()
        let names = try await reader.perform { try reader.fetch(FetchRequest<RSAuthor>()).map(\.name) }
        #expect(names == ["Le Guin"])
        again.close()
    }

    @Test(arguments: EngineKind.allCases)
    func theSameVersionWithAnotherShapeIsRefused(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try store.open(schema: RecordedSchemaModels.note(version: 4)).close()
        let error = #expect(throws: StrataError.self) {
            try store.open(schema: RecordedSchemaModels.noteWithISBN(version: 4))
        }
        let isbn = RecordedAttribute(name: "isbn", type: .string, isOptional: false, defaultValue: .init(.text("")))
        #expect(
            error
                == .schemaMismatch(
                    storeVersion: 4, modelVersion: 4, differences: [.attributeAdded(entity: "Note", isbn)]))
        let message = error?.description ?? ""
        #expect(message.contains("- `Note.isbn` was added: `String`, not optional, default \"\""), "\(message)")
        #expect(message.contains("open the store with the model that created it"))
        // The refused open changed nothing: the first model still opens.
        try store.open(schema: RecordedSchemaModels.note(version: 4)).close()
    }

    /// Another version whose change cannot be inferred (a type change) is refused with the
    /// refused differences listed; the store still opens with the model that made it.
    @Test(arguments: EngineKind.allCases)
    func anotherVersionListsTheDifferencesToo(kind: EngineKind) throws {
        let store = try TestStore(kind)
        try store.open(schema: RecordedSchemaModels.note(version: 1)).close()
        let error = #expect(throws: StrataError.self) {
            try store.open(schema: Schema(version: 2, [IMNoteNumberTitle.self]))
        }
        guard case .migrationNotInferable(1, 2, let refused)? = error else {
            Issue.record("expected migrationNotInferable, got \(String(describing: error))")
            return
        }
        #expect(refused.map(\.description) == ["`Note.title` changed type from `String` to `Int64`"])
        try store.open(schema: RecordedSchemaModels.note(version: 1)).close()
    }
}
