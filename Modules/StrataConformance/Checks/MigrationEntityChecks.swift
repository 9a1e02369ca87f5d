import Foundation
import Strata

/// Inferred entity changes: an entity added, removed (and its rows with it), or renamed
/// through `originalEntityName` with its rows kept.
enum MigrationEntityChecks {
    static let all: [ConformanceCheck] = [
        MigrationAttributeChecks.check("an entity is added: the other rows kept, the new one usable", add),
        MigrationAttributeChecks.check("an entity is removed: the other rows kept, its rows gone", remove),
        MigrationAttributeChecks.check("an entity renamed through originalEntityName keeps its rows", rename),
        MigrationAttributeChecks.check("an entity renamed keeps its unique constraint working", renameUnique),
        MigrationAttributeChecks.check(
            "IDs and history made before an entity rename name the renamed entity and resolve", renamedIDs),
    ]

    /// Saves shelves labelled `labels` and returns every shelf label and note title, sorted.
    static func addShelves(_ container: PersistentContainer, _ labels: [String]) async throws -> [String] {
        try await container.performUnitOfWork { context in
            for label in labels { KitNoteAndShelf.Shelf(context: context).label = label }
            try context.save()
        }
        return try await container.read { context in
            let shelves = try context.fetch(FetchRequest<KitNoteAndShelf.Shelf>(sortBy: [SortDescriptor(\.label)]))
            let notes = try context.fetch(FetchRequest<KitV1.Note>(sortBy: [SortDescriptor(\.title)]))
            return shelves.map(\.label) + ["|"] + notes.map(\.title)
        }
    }

    static func add(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let seen = try await MigrationChecks.with(kit, KitNoteAndShelf.schema()) { try await addShelves($0, ["A"]) }
        try kit.expectEqual(seen, ["A", "|", "Dune", "Solaris", "Ubik"], "shelves and notes after adding Shelf")
        let again = try await MigrationChecks.with(kit, KitNoteAndShelf.schema()) { try await addShelves($0, ["B"]) }
        try kit.expectEqual(again, ["A", "B", "|", "Dune", "Solaris", "Ubik"], "shelves and notes after reopening")
    }

    static func remove(_ kit: ConformanceHarness) async throws {
        let withShelves = try MigrationModels.schema(KitNoteAndShelf.self, version: 1)
        try await MigrationChecks.with(kit, withShelves) { container in
            _ = try await addShelves(container, ["A", "B"])
            try await container.performUnitOfWork { context in
                KitV1.Note(context: context).title = "Dune"
                try context.save()
            }
        }
        try kit.expectEqual(
            try await MigrationChecks.readV1Notes(kit, version: 2), ["Dune 0 nil"], "notes once Shelf is removed")
        // Adding Shelf again (version 3) makes a new, empty entity: the old shelves are gone.
        let readded = try MigrationModels.schema(KitNoteAndShelf.self, version: 3)
        let seen = try await MigrationChecks.with(kit, readded) { try await addShelves($0, ["C"]) }
        try kit.expectEqual(seen, ["C", "|", "Dune"], "shelves once Shelf is added again")
    }

    static func rename(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitMemo.schema()) { container in
            let (lines, ranked) = try await container.read { context in
                let memos = try context.fetch(FetchRequest<KitMemo.Memo>(sortBy: [SortDescriptor(\.title)]))
                let ranked = try context.fetch(FetchRequest<KitMemo.Memo>(predicate: #Predicate { $0.rank >= 2 }))
                return (memos.map { "\($0.title) \($0.rank) \($0.body ?? "nil")" }, ranked.map(\.title).sorted())
            }
            try kit.expectEqual(lines, MigrationChecks.v1Lines, "memos after renaming Note to Memo")
            try kit.expectEqual(ranked, ["Dune", "Ubik"], "memos ranked 2 or more")
            try await container.performUnitOfWork { context in
                KitMemo.Memo(context: context).title = "Emma"
                try context.save()
            }
        }
        let count = try await MigrationChecks.with(kit, KitMemo.schema()) { container in
            try await container.read { try $0.count(for: FetchRequest<KitMemo.Memo>()) }
        }
        try kit.expectEqual(count, 4, "memos after reopening")
        // The old entity name no longer opens the store (it is at version 2 now, as Memo).
        let error = try kit.expectStrataError(
            "opening the renamed store with Note at version 2",
            sync: {
                _ = try kit.open(schema: MigrationModels.schema(KitV1.self, version: 2))
            })
        guard case .schemaMismatch(2, 2, let differences) = error else {
            throw kit.fail("opening the renamed store with Note at version 2: expected schemaMismatch, got \(error)")
        }
        try kit.expectEqual(
            differences.map(\.description).sorted(), ["entity `Memo` was removed", "entity `Note` was added"],
            "the differences")
    }

    /// An ID encoded (`Codable`) before Note became Memo, and the history of the commits made
    /// before, resolve after the rename: the IDs name Memo, and a history filter on Memo keeps them.
    static func renamedIDs(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let encoded = try await MigrationChecks.with(kit, MigrationModels.schema(KitV1.self, version: 1)) { container in
            let id = try await container.read { context in
                try kit.first(
                    context.fetch(FetchRequest<KitV1.Note>(predicate: #Predicate { $0.title == "Dune" })),
                    "notes titled Dune"
                ).objectID
            }
            return try JSONEncoder().encode(id)
        }
        let id = try JSONDecoder().decode(ObjectID.self, from: encoded)
        try await MigrationChecks.with(kit, KitMemo.schema()) { container in
            let title = try await container.read { try $0.existingObject(with: id, as: KitMemo.Memo.self).title }
            try kit.expectEqual(title, "Dune", "the memo of an ID encoded before the rename")
            let history = try await container.history(after: .beginning, entities: [KitMemo.Memo.self])
            let changes = history.flatMap(\.changes)
            try kit.expectEqual(changes.count, 3, "history changes of Memo, made while it was Note")
            try kit.expect(
                changes.allSatisfy { $0.objectID.entityName == "Memo" && $0.changedProperties.contains("title") },
                "the history's IDs and properties: \(changes.map { "\($0.objectID) \($0.changedProperties)" })")
            let titles = try await container.read { context in
                try changes.map { try context.existingObject(with: $0.objectID, as: KitMemo.Memo.self).title }.sorted()
            }
            try kit.expectEqual(titles, ["Dune", "Solaris", "Ubik"], "the memos the history names")
        }
    }

    /// Version 1 → `KitNoteUnique` (title unique) → `KitMemoUnique` (Note renamed Memo).
    static func renameUnique(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteUnique.schema()) { _ in }
        try await MigrationChecks.with(kit, KitMemoUnique.schema()) { container in
            try await MigrationChecks.expectClash(kit, "Memo", ["title"], "saving a second Dune as a Memo") {
                try await container.performUnitOfWork { context in
                    KitMemoUnique.Memo(context: context).title = "Dune"
                    try context.save()
                }
            }
            try await container.performUnitOfWork { context in
                KitMemoUnique.Memo(context: context).title = "Emma"
                try context.save()
            }
            let found = try await container.read { context in
                try context.fetch(FetchRequest<KitMemoUnique.Memo>(predicate: #Predicate { $0.title == "Ubik" }))
                    .map(\.rank)
            }
            try kit.expectEqual(found, [2], "ranks of memos titled Ubik")
        }
    }
}
