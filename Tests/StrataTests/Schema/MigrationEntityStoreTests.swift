import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// Inferred migrations that add, drop and rename entities, indexes, unique constraints, to-one
/// relationships and joins, applied by each engine at open on real store files (v1 models, data,
/// then the engine opened with a later model and inference on).
@Suite("Entity, index and relationship migrations in stores", .serialized)
struct MigrationEntityStoreTests {
    /// Opens the store's engine once with `schema`, inference on and `renames`, as a migrating open does.
    func migrate(_ store: TestStore, to schema: Schema, renames: SchemaRenames = SchemaRenames()) throws {
        var storeSchema = schema.storeSchema
        storeSchema.infersMigrations = true
        storeSchema.renames = renames
        try store.configuration.open(storeSchema).close()
    }

    private func saving(
        _ container: PersistentContainer, _ body: @escaping @Sendable (ObjectContext) throws -> Void
    )
        async throws
    {
        let context = container.newBackgroundContext()
        try await context.perform {
            try body(context)
            try context.save()
        }
    }

    @Test(arguments: EngineKind.allCases)
    func anEntityIsAddedThenRemovedAndItsRowsGoWithIt(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let v1 = try store.open(schema: RecordedSchemaModels.note(version: 1))
        try await saving(v1) { context in RSNote(context: context).title = "Dune" }
        v1.close()

        let withLabel = try Schema(version: 2, [RSNote.self, MELabel.self])
        try migrate(store, to: withLabel)
        let v2 = try store.open(schema: withLabel)
        try await saving(v2) { context in MELabel(context: context).text = "red" }
        let context = v2.newBackgroundContext()
        let seen = try await context.perform {
            (
                try context.fetch(FetchRequest<RSNote>()).map(\.title),
                try context.fetch(FetchRequest<MELabel>()).map(\.text)
            )
        }
        v2.close()
        #expect(seen.0 == ["Dune"] && seen.1 == ["red"])

        try migrate(store, to: try RecordedSchemaModels.note(version: 3))
        if RawStoreEdits.isReadable(store) {
            let names = try MigrationStoreProbe.names(store)
            #expect(names["Label"] == nil && names["e.Label"] == nil)
        }
        #expect(
            try MigrationStoreProbe.contents(store, try RecordedSchemaModels.note(version: 3).storeSchema).rows[0]
                .map(\.values) == [[.text("Dune")]])

        // Added back in version 4, the entity starts empty: the dropped rows are gone.
        let again = try Schema(version: 4, [RSNote.self, MELabel.self])
        try migrate(store, to: again)
        #expect(try MigrationStoreProbe.contents(store, again.storeSchema).rows[1].isEmpty)
    }

    @Test(arguments: EngineKind.allCases)
    func aRenamedEntityKeepsItsRowsKeysLinksAndConstraint(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let v1 = try store.open(
            schema: try Schema(version: 1, [MEPerson.self, MEBookOfPerson.self, MEGenreOfPerson.self]))
        try await saving(v1) { context in
            let leGuin = MEPerson(context: context)
            leGuin.name = "Le Guin"
            let lem = MEPerson(context: context)
            lem.name = "Lem"
            MEPerson(context: context).name = "Dick"
            let solaris = MEBookOfPerson(context: context)
            solaris.title = "Solaris"
            solaris.author = lem
            let earthsea = MEBookOfPerson(context: context)
            earthsea.title = "Earthsea"
            earthsea.author = leGuin
            let genre = MEGenreOfPerson(context: context)
            genre.label = "sf"
            genre.people.insert(lem)
            genre.people.insert(leGuin)
        }
        // The person with the highest key goes: its key must never be handed out again.
        try await saving(v1) { context in
            for person in try context.fetch(FetchRequest<MEPerson>()) where person.name == "Dick" {
                context.delete(person)
            }
        }
        v1.close()

        let v2 = try Schema(version: 2, [MEWriter.self, MEBookOfWriter.self, MEGenreOfWriter.self])
        try migrate(store, to: v2, renames: SchemaRenames(entities: ["Writer": "Person"]))
        let engine = try store.configuration.open(v2.storeSchema)
        let next = try engine.allocateKeys(entity: 0, count: 1)
        engine.close()
        #expect(next.lowerBound > 3)

        let container = try store.open(schema: v2)
        let context = container.newBackgroundContext()
        let seen = try await context.perform {
            let writers = try context.fetch(FetchRequest<MEWriter>(sortBy: [SortDescriptor(\.name)]))
            let books = try context.fetch(FetchRequest<MEBookOfWriter>(sortBy: [SortDescriptor(\.title)]))
            let genres = try context.fetch(FetchRequest<MEGenreOfWriter>())
            return (
                writers.map { "\($0.name):\($0.books.map(\.title).sorted())" },
                books.map { "\($0.title):\($0.author?.name ?? "nil")" },
                genres.flatMap { $0.people.map(\.name) }.sorted()
            )
        }
        #expect(seen.0 == ["Le Guin:[\"Earthsea\"]", "Lem:[\"Solaris\"]"])
        #expect(seen.1 == ["Earthsea:Le Guin", "Solaris:Lem"])
        #expect(seen.2 == ["Le Guin", "Lem"])
        // The unique constraint came along under the new entity's name.
        let error = await #expect(throws: StrataError.self) {
            try await saving(container) { context in MEWriter(context: context).name = "Lem" }
        }
        #expect(error?.withoutNative == .constraintViolation(entity: "Writer", attributes: ["name"]))
        container.close()
    }

    @Test(arguments: EngineKind.allCases)
    func anIndexIsAddedOverTheRowsThenRemoved(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let v1 = try store.open(schema: RecordedSchemaModels.note(version: 1))
        try await saving(v1) { context in
            for title in ["Dune", "Solaris", "Ubik"] { RSNote(context: context).title = title }
        }
        v1.close()

        let indexed = try Schema(version: 2, [MENoteIndexedTitle.self])
        try migrate(store, to: indexed)
        switch kind {
        case .memory: break // its indexes have no names to look at from outside; the filter below uses it
        case .sqlite, .postgres: #expect(try MigrationStoreProbe.names(store)["Note_title_index"] != nil)
        case .lmdb: #expect(try MigrationStoreProbe.names(store)["i.Note_title_index"] == 3)
        }
        let filter = Filter.compare(column: 0, .equal, .text("Solaris"))
        let engine = try store.configuration.open(indexed.storeSchema)
        if let lmdb = engine as? LMDBEngine {
            #expect(
                try lmdb.explain(FetchPlan(entity: 0, filter: filter)) == .indexScan(indexes: ["i.Note_title_index"]))
        }
        let reader = try engine.makeReader()
        let found = try reader.rows(for: FetchPlan(entity: 0, filter: filter)).map(\.key)
        reader.close()
        engine.close()
        #expect(found == [2])

        try migrate(store, to: try RecordedSchemaModels.note(version: 3))
        if RawStoreEdits.isReadable(store) {
            let after = try MigrationStoreProbe.names(store)
            #expect(after["Note_title_index"] == nil && after["i.Note_title_index"] == nil)
        }
        let container = try store.open(schema: try RecordedSchemaModels.note(version: 3))
        let context = container.newBackgroundContext()
        let titles = try await context.perform {
            try context.fetch(FetchRequest<RSNote>(predicate: #Predicate { $0.title == "Ubik" })).map(\.title)
        }
        container.close()
        #expect(titles == ["Ubik"])
    }

    /// An indexed column whose nulls are filled (optional → required with a default) keeps its
    /// index in step: the filled rows are found through it.
    @Test(arguments: EngineKind.allCases)
    func anIndexedColumnMadeRequiredIsReindexedWithItsFill(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let v1 = try store.open(schema: try Schema(version: 1, [MEOptionalIndexedNote.self]))
        try await saving(v1) { context in
            MEOptionalIndexedNote(context: context).title = "Dune"
            _ = MEOptionalIndexedNote(context: context)
        }
        v1.close()
        let v2 = try Schema(version: 2, [MERequiredIndexedNote.self])
        try migrate(store, to: v2)
        let engine = try store.configuration.open(v2.storeSchema)
        let reader = try engine.makeReader()
        let filled = try reader.rows(for: FetchPlan(entity: 0, filter: .compare(column: 0, .equal, .text("untitled"))))
        let nulls = try reader.count(entity: 0, filter: .isNull(column: 0))
        reader.close()
        engine.close()
        #expect(filled.map(\.key) == [2] && nulls == 0)
    }

    @Test(arguments: EngineKind.allCases)
    func aCompoundUniqueConstraintRefusesClashingRowsAndHoldsAfterwards(kind: EngineKind) async throws {
        let v1 = try Schema(version: 1, [MEEdition.self])
        let v2 = try Schema(version: 2, [MEUniqueEdition.self])
        func store(_ editions: [(String, Int64)]) async throws -> TestStore {
            let store = try TestStore(kind)
            let container = try store.open(schema: v1)
            try await saving(container) { context in
                for (title, year) in editions {
                    let edition = MEEdition(context: context)
                    edition.title = title
                    edition.year = year
                }
            }
            container.close()
            return store
        }
        let clashing = try await store([("Dune", 1965), ("Dune", 1984), ("Dune", 1965)])
        let before = try MigrationStoreProbe.contents(clashing, v1.storeSchema)
        let json = RawStoreEdits.isReadable(clashing) ? try RawStoreEdits.recordedJSON(clashing) : nil
        let error = #expect(throws: StrataError.self) { try migrate(clashing, to: v2) }
        #expect(error?.withoutNative == .constraintViolation(entity: "Edition", attributes: ["title", "year"]))
        #expect(try MigrationStoreProbe.contents(clashing, v1.storeSchema) == before)
        #expect(try RawStoreEdits.isReadable(clashing) ? RawStoreEdits.recordedJSON(clashing) == json : true)

        let fine = try await store([("Dune", 1965), ("Dune", 1984)])
        try migrate(fine, to: v2)
        let container = try fine.open(schema: v2)
        let duplicate = await #expect(throws: StrataError.self) {
            try await saving(container) { context in
                let edition = MEUniqueEdition(context: context)
                edition.title = "Dune"
                edition.year = 1984
            }
        }
        #expect(duplicate?.withoutNative == .constraintViolation(entity: "Edition", attributes: ["title", "year"]))
        try await saving(container) { context in
            let edition = MEUniqueEdition(context: context)
            edition.title = "Dune"
            edition.year = 2021
        }
        container.close()
    }

    @Test(arguments: EngineKind.allCases)
    func aToOneRelationshipIsAddedWithItsIndexThenRemoved(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let v1 = try store.open(schema: try Schema(version: 1, [MEPlainAuthor.self, MEPlainBook.self]))
        try await saving(v1) { context in
            MEPlainAuthor(context: context).name = "Lem"
            for title in ["Solaris", "Eden"] { MEPlainBook(context: context).title = title }
        }
        v1.close()

        let linked = try Schema(version: 2, [MELinkedAuthor.self, MELinkedBook.self])
        try migrate(store, to: linked)
        let container = try store.open(schema: linked)
        try await saving(container) { context in
            let lem = try context.fetch(FetchRequest<MELinkedAuthor>())[0]
            for book in try context.fetch(FetchRequest<MELinkedBook>()) where book.title == "Solaris" {
                book.author = lem
            }
        }
        let context = container.newBackgroundContext()
        let books = try await context.perform {
            try context.fetch(FetchRequest<MELinkedAuthor>())[0].books.map(\.title)
        }
        container.close()
        #expect(books == ["Solaris"])
        // The rows from before the relationship are in its index as nulls: a lookup of the books
        // without an author (an index scan on LMDB) finds the one left unlinked.
        let engine = try store.configuration.open(linked.storeSchema)
        let reader = try engine.makeReader()
        let unlinked = try reader.rows(for: FetchPlan(entity: 1, filter: .isNull(column: 1))).map(\.values)
        reader.close()
        engine.close()
        #expect(unlinked == [[.text("Eden"), .null]])

        let plain = try Schema(version: 3, [MEPlainAuthor.self, MEPlainBook.self])
        try migrate(store, to: plain)
        #expect(
            try MigrationStoreProbe.contents(store, plain.storeSchema).rows[1].map(\.values) == [
                [.text("Solaris")], [.text("Eden")],
            ])
        if kind == .lmdb { #expect(try MigrationStoreProbe.names(store)["i.Book_author_ref"] == nil) }
    }

    @Test(arguments: EngineKind.allCases)
    func aManyToManyJoinIsAddedThenDroppedWithItsLinks(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let plain = try Schema(version: 1, [MEPlainBook.self, MEShelf.self])
        let v1 = try store.open(schema: plain)
        try await saving(v1) { context in
            MEPlainBook(context: context).title = "Solaris"
            MEShelf(context: context).label = "sf"
        }
        v1.close()

        let shelved = try Schema(version: 2, [MEShelvedBook.self, MEBookShelf.self])
        try migrate(store, to: shelved)
        let container = try store.open(schema: shelved)
        try await saving(container) { context in
            let shelf = try context.fetch(FetchRequest<MEBookShelf>())[0]
            shelf.books.insert(try context.fetch(FetchRequest<MEShelvedBook>())[0])
        }
        let context = container.newBackgroundContext()
        let shelves = try await context.perform {
            try context.fetch(FetchRequest<MEShelvedBook>())[0].shelves.map(\.label)
        }
        container.close()
        #expect(shelves == ["sf"])
        #expect(
            try MigrationStoreProbe.contents(store, shelved.storeSchema).links == [
                [JoinLink(join: 0, leftKey: 1, rightKey: 1)]
            ])

        try migrate(store, to: try Schema(version: 3, [MEPlainBook.self, MEShelf.self]))
        if RawStoreEdits.isReadable(store) {
            let names = try MigrationStoreProbe.names(store)
            #expect(!names.keys.contains { $0.contains("Book_shelves__Shelf_books") })
        }
        // Declared again in version 4, the join starts empty: the dropped links are gone.
        let again = try Schema(version: 4, [MEShelvedBook.self, MEBookShelf.self])
        try migrate(store, to: again)
        #expect(try MigrationStoreProbe.contents(store, again.storeSchema).links == [[]])
    }
}
