import Foundation
import Strata
import StrataStorage
import Testing

/// The migration steps that change a table's definition or its relationships, applied by each
/// engine at open on real store files: v1 model → rows → v2 model → reopen.
///
/// On SQLite the migrated store's tables and indexes are also compared with a fresh store of the
/// model (`CREATE` texts as `sqlite_schema` keeps them), where the steps leave the same text.
@Suite("Migration steps in stores", .serialized)
struct MigrationStepStoreTests {
    /// Opens the store's engine once with `schema` and inference on (what a migrating open does).
    static func migrate(_ store: TestStore, to schema: Schema, renames: SchemaRenames = SchemaRenames()) throws {
        var storeSchema = schema.storeSchema
        storeSchema.infersMigrations = true
        storeSchema.renames = renames
        try store.configuration.open(storeSchema).close()
    }

    /// Every stored row of an entity, read through the engine laid out as `schema`, by key.
    static func rows(_ store: TestStore, _ schema: Schema, entity: Int) throws -> [StoredRow] {
        let engine = try store.configuration.open(schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: entity)).sorted { $0.key < $1.key }
    }

    /// The `CREATE` statements of a SQLite store's tables and indexes (Strata's own excepted), sorted.
    static func sqliteDefinitions(_ store: TestStore) throws -> [String] {
        let raw = try RawSQLite(path: store.directory.appendingPathComponent("store.sqlite").path)
        return try raw.strings(
            """
            SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'strata\\_%' ESCAPE '\\'
            """
        ).sorted()
    }

    /// On SQLite, expects the migrated store's definitions to be a fresh store's of `model`, and
    /// every reference between its tables to hold (`PRAGMA foreign_key_check`); on PostgreSQL,
    /// the columns and indexes of its schema to be a fresh store's. (LMDB keeps no definitions.)
    static func expectFreshDefinitions(
        _ store: TestStore, _ model: Schema, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        if store.kind == .postgres {
            let fresh = try TestStore(.postgres)
            try fresh.open(schema: model).close()
            let sql = try PostgresSQL()
            #expect(
                try sql.definitions(schema: store.postgresSchema)
                    == (try sql.definitions(schema: fresh.postgresSchema)),
                sourceLocation: sourceLocation)
            return
        }
        guard store.kind == .sqlite else { return }
        let fresh = try TestStore(.sqlite)
        try fresh.open(schema: model).close()
        #expect(try sqliteDefinitions(store) == (try sqliteDefinitions(fresh)), sourceLocation: sourceLocation)
        let raw = try RawSQLite(path: store.directory.appendingPathComponent("store.sqlite").path)
        #expect(try raw.strings("PRAGMA foreign_key_check") == [], sourceLocation: sourceLocation)
    }

    @Test(arguments: EngineKind.allCases)
    func aRequiredAttributeBecomesOptional(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: RecordedSchemaModels.note(version: 1))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            for title in ["Dune", "Solaris"] { RSNote(context: writer).title = title }
            try writer.save()
        }
        old.close()
        let model = try RecordedSchemaModels.noteOptionalTitle(version: 2)
        try Self.migrate(store, to: model)
        try Self.expectFreshDefinitions(store, model)
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        try await context.perform {
            _ = RSNoteOptionalTitle(context: context)
            try context.save()
        }
        container.close()
        let stored = try Self.rows(store, model, entity: 0).map(\.values)
        #expect(stored == [[.text("Dune")], [.text("Solaris")], [.null]])
    }

    @Test(arguments: EngineKind.allCases)
    func anOptionalAttributeBecomesRequiredAndItsNullsGetTheDefault(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: RecordedSchemaModels.noteOptionalTitle(version: 1))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            RSNoteOptionalTitle(context: writer).title = "Dune"
            _ = RSNoteOptionalTitle(context: writer)
            RSNoteOptionalTitle(context: writer).title = "Solaris"
            try writer.save()
        }
        old.close()
        let model = try Schema(version: 2, [MStNoteTitleDefault.self])
        try Self.migrate(store, to: model)
        try Self.expectFreshDefinitions(store, model)
        // Read as stored: the object layer would show a stored null as the default anyway.
        let stored = try Self.rows(store, model, entity: 0)
        #expect(stored.map(\.values) == [[.text("Dune")], [.text("untitled")], [.text("Solaris")]])
        #expect(stored.map(\.version) == [1, 1, 1])
        if RawStoreEdits.isReadable(store) {
            #expect(try RawStoreEdits.recordedJSON(store) == (try model.recordedSchema.jsonText()))
        }
    }

    @Test(arguments: EngineKind.allCases)
    func severalChangesToOneEntityAreAppliedTogether(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: try Schema(version: 1, [MStNoteOptionalTitleISBN.self]))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            for (title, isbn) in [("Dune", "1"), (nil, "2"), ("Solaris", "3")] {
                let note = MStNoteOptionalTitleISBN(context: writer)
                note.title = title
                note.isbn = isbn
            }
            try writer.save()
        }
        old.close()
        let model = try Schema(version: 2, [MStNoteReshaped.self])
        try Self.migrate(store, to: model)
        try Self.expectFreshDefinitions(store, model)
        #expect(
            try Self.rows(store, model, entity: 0).map(\.values) == [
                [.null, .text("Dune"), .text("new")], [.null, .text("untitled"), .text("new")],
                [.null, .text("Solaris"), .text("new")],
            ])
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        let clash = await #expect(throws: StrataError.self) {
            try await context.perform {
                _ = MStNoteReshaped(context: context)
                try context.save()
            }
        }
        #expect(clash?.withoutNative == .constraintViolation(entity: "Note", attributes: ["title"]))
        container.close()
    }

    @Test(arguments: EngineKind.allCases)
    func aToOneAndItsToManyAreAddedThenRemoved(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let plain = try Schema(version: 1, [MStPlainAuthor.self, MStPlainBook.self])
        let old = try store.open(schema: plain)
        let writer = old.newBackgroundContext()
        try await writer.perform {
            MStPlainAuthor(context: writer).name = "Herbert"
            MStPlainBook(context: writer).title = "Dune"
            MStPlainBook(context: writer).title = "Children of Dune"
            try writer.save()
        }
        old.close()

        let related = try Schema(version: 2, [MStAuthor.self, MStBook.self])
        try Self.migrate(store, to: related)
        try Self.expectFreshDefinitions(store, related)
        let container = try store.open(schema: related)
        let context = container.newBackgroundContext()
        let startedEmpty = try await context.perform {
            let author = try #require(try context.fetch(FetchRequest<MStAuthor>()).first)
            var empty = author.books.isEmpty
            for book in try context.fetch(FetchRequest<MStBook>()) {
                empty = empty && book.author == nil
                book.author = author
            }
            try context.save()
            return empty
        }
        #expect(startedEmpty)
        container.close()
        let reopened = try store.open(schema: related)
        let reader = reopened.newBackgroundContext()
        let titles = try await reader.perform {
            try #require(try reader.fetch(FetchRequest<MStAuthor>()).first).books.map(\.title).sorted()
        }
        reopened.close()
        #expect(titles == ["Children of Dune", "Dune"])

        let plainAgain = try Schema(version: 3, [MStPlainAuthor.self, MStPlainBook.self])
        try Self.migrate(store, to: plainAgain)
        try Self.expectFreshDefinitions(store, plainAgain)
        #expect(
            try Self.rows(store, plainAgain, entity: 1).map(\.values) == [[.text("Dune")], [.text("Children of Dune")]])
        let last = try store.open(schema: plainAgain)
        let saver = last.newBackgroundContext()
        try await saver.perform {
            MStPlainBook(context: saver).title = "Dune Messiah"
            try saver.save()
        }
        last.close()
    }

    @Test(arguments: EngineKind.allCases)
    func aRebuiltTableGetsAndKeepsItsToOneKeysAndTheirIndex(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: try Schema(version: 1, [MStPlainAuthor.self, MStPlainBook.self]))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            MStPlainAuthor(context: writer).name = "Herbert"
            MStPlainBook(context: writer).title = "Dune"
            try writer.save()
        }
        old.close()
        // Book is rebuilt (its title becomes optional) with its new to-one key folded in.
        let loose = try Schema(version: 2, [MStAuthorOfLooseBooks.self, MStLooseBook.self])
        try Self.migrate(store, to: loose)
        try Self.expectFreshDefinitions(store, loose)
        let container = try store.open(schema: loose)
        let context = container.newBackgroundContext()
        let startedEmpty = try await context.perform {
            let book = try #require(try context.fetch(FetchRequest<MStLooseBook>()).first)
            let empty = book.author == nil
            book.author = try context.fetch(FetchRequest<MStAuthorOfLooseBooks>()).first
            _ = MStLooseBook(context: context)
            try context.save()
            return empty
        }
        #expect(startedEmpty)
        container.close()
        // Rebuilt again (the title becomes required): the key and its index stay.
        let strict = try Schema(version: 3, [MStAuthor.self, MStBook.self])
        try Self.migrate(store, to: strict)
        try Self.expectFreshDefinitions(store, strict)
        let reopened = try store.open(schema: strict)
        let reader = reopened.newBackgroundContext()
        let titles = try await reader.perform {
            try #require(try reader.fetch(FetchRequest<MStAuthor>()).first).books.map(\.title)
        }
        reopened.close()
        #expect(titles == ["Dune"])
        #expect(
            try Self.rows(store, strict, entity: 1).map(\.values) == [
                [.text("Dune"), .integer(1)], [.text(""), .null],
            ])
    }

    @Test(arguments: EngineKind.allCases)
    func aManyToManyIsAddedThenRemoved(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let plain = try Schema(version: 1, [MStPlainBook.self, MStPlainTag.self])
        let old = try store.open(schema: plain)
        let writer = old.newBackgroundContext()
        try await writer.perform {
            MStPlainBook(context: writer).title = "Dune"
            MStPlainTag(context: writer).label = "sf"
            MStPlainTag(context: writer).label = "classic"
            try writer.save()
        }
        old.close()

        let tagged = try Schema(version: 2, [MStTaggedBook.self, MStTag.self])
        try Self.migrate(store, to: tagged)
        try Self.expectFreshDefinitions(store, tagged)
        let container = try store.open(schema: tagged)
        let context = container.newBackgroundContext()
        let startedEmpty = try await context.perform {
            let book = try #require(try context.fetch(FetchRequest<MStTaggedBook>()).first)
            let empty = book.tags.isEmpty
            book.tags.formUnion(try context.fetch(FetchRequest<MStTag>()))
            try context.save()
            return empty
        }
        #expect(startedEmpty)
        container.close()
        let reopened = try store.open(schema: tagged)
        let reader = reopened.newBackgroundContext()
        let labels = try await reader.perform {
            try #require(try reader.fetch(FetchRequest<MStTaggedBook>()).first).tags.map(\.label).sorted()
        }
        reopened.close()
        #expect(labels == ["classic", "sf"])

        let plainAgain = try Schema(version: 3, [MStPlainBook.self, MStPlainTag.self])
        try Self.migrate(store, to: plainAgain)
        try Self.expectFreshDefinitions(store, plainAgain)
        #expect(try Self.rows(store, plainAgain, entity: 1).map(\.values) == [[.text("sf")], [.text("classic")]])
    }

    @Test(arguments: EngineKind.allCases)
    func aRenamedEntityKeepsItsRowsKeysAndLinks(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: try Schema(version: 1, [MStRAuthor.self, MStRBook.self, MStRTag.self]))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            let author = MStRAuthor(context: writer)
            author.name = "Herbert"
            let sf = MStRTag(context: writer)
            sf.label = "sf"
            let classic = MStRTag(context: writer)
            classic.label = "classic"
            let dune = MStRBook(context: writer)
            dune.title = "Dune"
            dune.author = author
            dune.tags.formUnion([sf, classic])
            let solaris = MStRBook(context: writer)
            solaris.title = "Solaris"
            solaris.tags.insert(sf)
            try writer.save()
        }
        old.close()

        let model = try Schema(version: 2, [MStNAuthor.self, MStNovel.self, MStNTag.self])
        try Self.migrate(store, to: model, renames: SchemaRenames(entities: ["Novel": "Book"]))
        try Self.expectFreshDefinitions(store, model)
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        let seen = try await context.perform {
            let novels = try context.fetch(FetchRequest<MStNovel>()).sorted { $0.title < $1.title }
            let sf = try #require(try context.fetch(FetchRequest<MStNTag>()).first { $0.label == "sf" })
            return novels.map { "\($0.title)|\($0.author?.name ?? "-")|\($0.tags.map(\.label).sorted())" }
                + ["sf: \(sf.books.map(\.title).sorted())"]
        }
        #expect(seen == ["Dune|Herbert|[\"classic\", \"sf\"]", "Solaris|-|[\"sf\"]", "sf: [\"Dune\", \"Solaris\"]"])
        // New novels get fresh keys, and the unique title still holds under the new name.
        try await context.perform {
            MStNovel(context: context).title = "Ubik"
            try context.save()
        }
        let clash = await #expect(throws: StrataError.self) {
            try await context.perform {
                MStNovel(context: context).title = "Dune"
                try context.save()
            }
        }
        #expect(clash?.withoutNative == .constraintViolation(entity: "Novel", attributes: ["title"]))
        container.close()
        let keys = try Self.rows(store, model, entity: 1).map(\.key)
        #expect(keys.count == 3 && keys.prefix(2) == [1, 2] && keys[2] > 2)
    }

    @Test(arguments: EngineKind.allCases)
    func aRenamedAttributeKeepsItsValuesAndItsUniqueness(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: try Schema(version: 1, [MStUniqueNote.self]))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            for title in ["Dune", "Solaris"] { MStUniqueNote(context: writer).title = title }
            try writer.save()
        }
        old.close()
        let model = try Schema(version: 2, [MStUniqueNoteHeading.self])
        try Self.migrate(store, to: model, renames: SchemaRenames(attributes: ["Note": ["heading": "title"]]))
        try Self.expectFreshDefinitions(store, model)
        #expect(try Self.rows(store, model, entity: 0).map(\.values) == [[.text("Dune")], [.text("Solaris")]])
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        let clash = await #expect(throws: StrataError.self) {
            try await context.perform {
                MStUniqueNoteHeading(context: context).heading = "Dune"
                try context.save()
            }
        }
        #expect(clash?.withoutNative == .constraintViolation(entity: "Note", attributes: ["heading"]))
        container.close()
    }
}
