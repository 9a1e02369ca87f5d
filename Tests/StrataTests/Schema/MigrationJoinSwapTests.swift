import Foundation
import Strata
import StrataStorage
import Testing

/// Version 2 of the rename model with `Book` renamed `Volume` through `originalEntityName`: the
/// join becomes `Tag_books__Volume_tags`, so Tag is now on its left (join names order their
/// sides by name) and the links must be swapped, not lost.
final class MStVAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
    @Relationship(inverse: \MStVolume.author) var books: RelatedObjects<MStVolume>
}

final class MStVolume: ManagedObject {
    override class var entityName: String { "Volume" }
    override class var originalEntityName: String? { "Book" }
    @Attribute(.unique) var title = ""
    @Relationship var author: MStVAuthor?
    @Relationship(inverse: \MStVTag.books) var tags: RelatedObjects<MStVTag>
}

final class MStVTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute var label = ""
    @Relationship var books: RelatedObjects<MStVolume>
}

@Suite("An entity rename that swaps a join's sides")
struct MigrationJoinSwapTests {
    @Test(arguments: EngineKind.allCases)
    func theLinksAreSwappedNotLost(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let old = try store.open(schema: try Schema(version: 1, [MStRAuthor.self, MStRBook.self, MStRTag.self]))
        let writer = old.newBackgroundContext()
        try await writer.perform {
            // Links chosen so that reading them with the sides swapped gives other pairs.
            let tags = ["sf", "classic", "noir"].map { label in
                let tag = MStRTag(context: writer)
                tag.label = label
                return tag
            }
            let dune = MStRBook(context: writer)
            dune.title = "Dune"
            dune.tags.insert(tags[0])
            let solaris = MStRBook(context: writer)
            solaris.title = "Solaris"
            solaris.tags.formUnion(tags)
            try writer.save()
        }
        old.close()

        // The model declares the rename itself: the plain initialiser infers the migration.
        let model = try Schema(version: 2, [MStVAuthor.self, MStVolume.self, MStVTag.self])
        #expect(model.recordedSchema.joins.map(\.name) == ["Tag_books__Volume_tags"])
        #expect(model.recordedSchema.joins.first?.left == "Tag")
        let container = try store.open(schema: model)
        let context = container.newBackgroundContext()
        let seen = try await context.perform {
            let volumes = try context.fetch(FetchRequest<MStVolume>()).sorted { $0.title < $1.title }
            let tags = try context.fetch(FetchRequest<MStVTag>()).sorted { $0.label < $1.label }
            return volumes.map { "\($0.title): \($0.tags.map(\.label).sorted())" }
                + tags.map { "\($0.label): \($0.books.map(\.title).sorted())" }
        }
        #expect(
            seen == [
                "Dune: [\"sf\"]", "Solaris: [\"classic\", \"noir\", \"sf\"]", "classic: [\"Solaris\"]",
                "noir: [\"Solaris\"]", "sf: [\"Dune\", \"Solaris\"]",
            ])
        // New links are stored on the new sides and read back from both.
        try await context.perform {
            let ubik = MStVolume(context: context)
            ubik.title = "Ubik"
            ubik.tags.formUnion(try context.fetch(FetchRequest<MStVTag>()))
            try context.save()
        }
        let fresh = container.newBackgroundContext()
        let reread = try await fresh.perform {
            try fresh.fetch(FetchRequest<MStVTag>()).sorted { $0.label < $1.label }.map {
                "\($0.label): \($0.books.map(\.title).sorted())"
            }
        }
        #expect(
            reread == [
                "classic: [\"Solaris\", \"Ubik\"]", "noir: [\"Solaris\", \"Ubik\"]",
                "sf: [\"Dune\", \"Solaris\", \"Ubik\"]",
            ])
        container.close()
        try MigrationStepStoreTests.expectFreshDefinitions(store, model)
    }
}
