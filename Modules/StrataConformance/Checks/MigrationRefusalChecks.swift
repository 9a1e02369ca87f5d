import Foundation
import Strata
import StrataStorage

/// Migrations that must not happen: a change inference cannot do, a custom stage that throws,
/// and a store newer than the model. Each is a typed error and leaves the store as it was.
enum MigrationRefusalChecks {
    static let all: [ConformanceCheck] = [
        MigrationAttributeChecks.check(
            "a type change without a custom stage is refused as not inferable; the store is unchanged", typeChange),
        MigrationAttributeChecks.check(
            "a relationship's kind change without a custom stage is refused as not inferable; the store is unchanged",
            relationshipKindChange),
        MigrationAttributeChecks.check(
            "a custom stage that throws surfaces its own error; the store is unchanged", throwingStage),
        MigrationAttributeChecks.check(
            "a store newer than the model is refused and its files are not touched", newerStore),
    ]

    static func typeChange(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let error = try kit.expectStrataError(
            "opening with rank as a String",
            sync: {
                _ = try kit.open(schema: KitNoteTextRank.schema())
            })
        guard case .migrationNotInferable(1, 2, let refused) = error else {
            throw kit.fail("opening with rank as a String: expected migrationNotInferable(1, 2, …), got \(error)")
        }
        try kit.expectEqual(
            refused, [.attributeTypeChanged(entity: "Note", attribute: "rank", from: .int, to: .string)],
            "the refused differences")
        try kit.expect(
            error.description.contains("`Note.rank` changed type from `Int` to `String`")
                && error.description.contains("MigrationStage.custom"),
            "the message names the change and points to a custom stage: \(error)")
        try kit.expectEqual(
            try await MigrationChecks.readV1Notes(kit), MigrationChecks.v1Lines, "notes at version 1 after the refusal")
    }

    /// One-to-many (`KitLibraryAuthors`, version 2) to many-to-many under the same names
    /// (`KitLibraryCoauthors`, version 3): both sides are refused; the join it would add is not.
    static func relationshipKindChange(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.with(kit, KitLibraryAuthors.schema()) { container in
            try await container.performUnitOfWork { context in
                let book = KitLibraryAuthors.Book(context: context)
                book.title = "Dune"
                let author = KitLibraryAuthors.Author(context: context)
                author.name = "Herbert"
                book.author = author
                try context.save()
            }
        }
        let error = try kit.expectStrataError(
            "opening with the relationship made many-to-many",
            sync: {
                _ = try kit.open(schema: KitLibraryCoauthors.schema())
            })
        guard case .migrationNotInferable(2, 3, let refused) = error else {
            throw kit.fail("opening with a many-to-many: expected migrationNotInferable(2, 3, …), got \(error)")
        }
        let changes = refused.map { difference -> String in
            guard case .relationshipChanged(let entity, let from, let to) = difference else { return "\(difference)" }
            return "\(entity).\(to.name): \(from.kind) → \(to.kind)"
        }
        try kit.expectEqual(
            changes, ["Book.author: toOne → manyToMany", "Author.books: toMany → manyToMany"], "the refused differences"
        )
        let authors = try await MigrationChecks.with(kit, KitLibraryAuthors.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<KitLibraryAuthors.Book>()).map {
                    "\($0.title):\($0.author?.name ?? "nil")"
                }
            }
        }
        try kit.expectEqual(authors, ["Dune:Herbert"], "books and authors at version 2 after the refusal")
    }

    static func throwingStage(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let log = KitMigrationLog()
        let thrown: (any Error)? = KitMigrationLog.during(log) {
            do {
                _ = try PersistentContainer(
                    schema: KitV2.schema(), migrationPlan: KitFailingPlan.self, engine: kit.configuration)
                return nil
            } catch {
                return error
            }
        }
        try kit.expectEqual(log.recorded, ["will saved", "did saved, throwing"], "what the stage recorded")
        guard let stageError = thrown as? KitStageError else {
            throw kit.fail("the open should rethrow the stage's KitStageError, got \(String(describing: thrown))")
        }
        try kit.expectEqual(stageError, KitStageError(detail: "the stage gave up"), "the stage's error")
        try kit.expectEqual(
            try await MigrationChecks.readV1Notes(kit), MigrationChecks.v1Lines, "notes at version 1 after the failure")
        // The store is still at version 1: the stage runs again, in full, once it no longer fails.
        let (again, _) = try MigrationStageChecks.migrate(kit, KitV2.schema(), plan: KitPlanToV2.self)
        try kit.expectEqual(again.count, 2, "closures run by the next open with a working plan: \(again)")
    }

    /// The bytes of every file of the store, by name (of every part, for an engine whose store
    /// is not a set of files: see `EngineConfiguration.storeContents`).
    static func snapshot(_ kit: ConformanceHarness) throws -> [String: Data] {
        if let contents = kit.configuration.storeContents {
            return Dictionary(uniqueKeysWithValues: try contents.read().enumerated().map { ("part \($0)", $1) })
        }
        var files: [String: Data] = [:]
        for file in StoreFileChecks.storeFiles(kit.configuration.location) {
            files[file.lastPathComponent] = try Data(contentsOf: file)
        }
        return files
    }

    static func newerStore(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit, version: 2)
        let before = try snapshot(kit)
        let error = try kit.expectStrataError(
            "opening a version 2 store with version 1",
            sync: {
                _ = try kit.open(schema: KitV1.schema())
            })
        try kit.expectEqual(error, .storeNewerThanModel(storeVersion: 2, modelVersion: 1), "the error")
        let after = try snapshot(kit)
        for (name, data) in before {
            try kit.expect(after[name] == data, "\(name) was changed by the refused open")
        }
        try kit.expectEqual(
            try await MigrationChecks.readV1Notes(kit, version: 2), MigrationChecks.v1Lines,
            "notes at version 2 after the refusal")
    }
}
