import Foundation
import Strata

/// Same-version drift: a model whose shape changed but whose version did not is refused with
/// `schemaMismatch` listing every difference in model terms (one check per kind of difference),
/// and the store still opens with the model that made it.
enum MigrationDriftChecks {
    /// One drift: the store's shape, the model's (both at version 1), the differences expected.
    struct Drift {
        let kind: String
        let store: any VersionedSchema.Type
        let model: any VersionedSchema.Type
        let differences: [String]
    }

    static var drifts: [Drift] {
        [
            Drift(
                kind: "an entity added", store: KitV1.self, model: KitNoteAndShelf.self,
                differences: ["entity `Shelf` was added"]),
            Drift(
                kind: "an entity removed", store: KitNoteAndShelf.self, model: KitV1.self,
                differences: ["entity `Shelf` was removed"]),
            Drift(
                kind: "an attribute added", store: KitV1.self, model: KitV2.self,
                differences: ["`Note.summary` was added: `String`, optional, default nil"]),
            Drift(
                kind: "an attribute removed", store: KitV1.self, model: KitNoteUnranked.self,
                differences: ["`Note.rank` was removed (it was `Int`, not optional, default 0)"]),
            Drift(
                kind: "an attribute's type changed", store: KitV1.self, model: KitNoteTextRank.self,
                differences: [
                    "`Note.rank` changed type from `Int` to `String`",
                    #"`Note.rank` changed its default from 0 to """#,
                ]),
            Drift(
                kind: "an attribute made optional", store: KitV1.self, model: KitNoteOptionalTitle.self,
                differences: [
                    "`Note.title` became optional (it was required)",
                    #"`Note.title` changed its default from "" to nil"#,
                ]),
            Drift(
                kind: "an attribute made required", store: KitV1.self, model: KitNoteRequiredBody.self,
                differences: [
                    "`Note.body` became required (it was optional)",
                    #"`Note.body` changed its default from nil to "(empty)""#,
                ]),
            Drift(
                kind: "an attribute's default changed", store: KitV1.self, model: KitNoteTitled.self,
                differences: [#"`Note.title` changed its default from "" to "untitled""#]),
            Drift(
                kind: "a relationship added", store: KitLibrary.self, model: KitLibraryAuthors.self,
                differences: [
                    "relationship `Book.author` was added: to-one to `Author`, inverse `books`, delete rule nullify",
                    "relationship `Author.books` was added: to-many to `Book`, inverse `author`, delete rule nullify",
                ]),
            Drift(
                kind: "a relationship removed", store: KitLibraryAuthors.self, model: KitLibrary.self,
                differences: [
                    """
                    relationship `Book.author` was removed (it was to-one to `Author`, inverse `books`, delete rule \
                    nullify)
                    """,
                    """
                    relationship `Author.books` was removed (it was to-many to `Book`, inverse `author`, delete rule \
                    nullify)
                    """,
                ]),
            Drift(
                kind: "a relationship's delete rule changed", store: KitLibraryAuthors.self,
                model: KitLibraryAuthorsCascade.self,
                differences: [
                    """
                    relationship `Author.books` changed from to-many to `Book`, inverse `author`, delete rule \
                    nullify to to-many to `Book`, inverse `author`, delete rule cascade
                    """
                ]),
            Drift(
                kind: "an index added", store: KitV1.self, model: KitNoteIndexed.self,
                differences: ["an index on `Note` (title, named Note_title_index) was added"]),
            Drift(
                kind: "an index removed", store: KitNoteIndexed.self, model: KitV1.self,
                differences: ["the index on `Note` (title, named Note_title_index) was removed"]),
            Drift(
                kind: "a unique constraint added", store: KitV1.self, model: KitNoteUnique.self,
                differences: ["a unique constraint on `Note` (title, named Note_title_unique) was added"]),
            Drift(
                kind: "a unique constraint removed", store: KitNoteUnique.self, model: KitV1.self,
                differences: ["the unique constraint on `Note` (title, named Note_title_unique) was removed"]),
            Drift(
                kind: "a join table added", store: KitLibrary.self, model: KitLibraryTags.self,
                differences: [
                    """
                    relationship `Book.tags` was added: many-to-many to `Tag`, inverse `books`, delete rule nullify, \
                    join `Book_tags__Tag_books`
                    """,
                    """
                    relationship `Tag.books` was added: many-to-many to `Book`, inverse `tags`, delete rule nullify, \
                    join `Book_tags__Tag_books`
                    """,
                    "join table `Book_tags__Tag_books` (`Book` ↔ `Tag`) was added",
                ]),
            Drift(
                kind: "a join table removed", store: KitLibraryTags.self, model: KitLibrary.self,
                differences: [
                    """
                    relationship `Book.tags` was removed (it was many-to-many to `Tag`, inverse `books`, delete rule \
                    nullify, join `Book_tags__Tag_books`)
                    """,
                    """
                    relationship `Tag.books` was removed (it was many-to-many to `Book`, inverse `tags`, delete rule \
                    nullify, join `Book_tags__Tag_books`)
                    """,
                    "join table `Book_tags__Tag_books` (`Book` ↔ `Tag`) was removed",
                ]),
            Drift(
                kind: "the columns reordered", store: KitV1.self, model: KitNoteReordered.self,
                differences: [
                    """
                    the stored columns of `Note` are in another order: title, rank, body in the store, rank, title, \
                    body in the model
                    """
                ]),
        ]
    }

    static let all: [ConformanceCheck] = drifts.indices.map { index in
        MigrationAttributeChecks.check(
            "the same version with \(drifts[index].kind) is refused, listing the difference",
            { try await refuse(drifts[index], $0) })
    }

    static func refuse(_ drift: Drift, _ kit: ConformanceHarness) async throws {
        let store = try MigrationModels.schema(drift.store, version: 1)
        let hasNotes = drift.store.models.contains { ObjectIdentifier($0) == ObjectIdentifier(KitV1.Note.self) }
        if hasNotes {
            try await MigrationChecks.with(kit, store) { container in
                try await container.performUnitOfWork { context in
                    KitV1.Note(context: context).title = "Kept"
                    try context.save()
                }
            }
        } else {
            try kit.open(schema: store).close()
        }
        let model = try MigrationModels.schema(drift.model, version: 1)
        let error = try kit.expectStrataError(
            "opening with \(drift.kind) at the same version",
            sync: {
                _ = try kit.open(schema: model)
            })
        guard case .schemaMismatch(1, 1, let differences) = error else {
            throw kit.fail("opening with \(drift.kind) at the same version: expected schemaMismatch, got \(error)")
        }
        try kit.expectEqual(differences.map(\.description), drift.differences, "the differences")
        for difference in drift.differences {
            try kit.expect(error.description.contains("- " + difference), "the message lists \(difference): \(error)")
        }
        // The refused open changed nothing: the store's own model still opens it, with its rows.
        try await MigrationChecks.with(kit, store) { container in
            guard hasNotes else { return }
            let titles = try await container.read { context in
                try context.fetch(FetchRequest<KitV1.Note>()).map(\.title)
            }
            try kit.expectEqual(titles, ["Kept"], "notes after the refusal")
        }
    }
}
