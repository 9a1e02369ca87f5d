import Foundation
import Strata

/// Inferred attribute changes on a `Note` store made by `KitV1` (title, rank, body?): each keeps
/// the rows, and stored values (read through predicates, which see what is stored, not the
/// declared defaults objects fall back on) are the ones the change promises.
enum MigrationAttributeChecks {
    static let all: [ConformanceCheck] = [
        check("an optional attribute is added: rows kept, nil stored, new values saved", addOptional),
        check("an attribute with a default is added: existing rows hold the default", addWithDefault),
        check("an attribute is removed: the other values kept, its data gone, saves work", remove),
        check("an attribute renamed through originalName keeps its values", rename),
        check("an indexed attribute renamed keeps its index working", renameIndexed),
        check("attributes that swap names through originalName trade their values", swapNames),
        check("renames that pass a name along keep every value under its new name", passNamesAlong),
        check("an index is added, then removed: filtered and sorted fetches stay right", addAndRemoveIndex),
        check(
            "a unique constraint over clashing rows is refused with the clash named; the store is unchanged",
            uniqueClash),
        check("a unique constraint is added, then removed: it holds, then no longer", uniqueAddedAndRemoved),
        check("a required attribute becomes optional: values kept, nil can be saved", requiredToOptional),
        check("an optional attribute becomes required with a default: nulls get the default", optionalToRequired),
        check(
            "a unique optional attribute made required, whose default two nulls would share, is refused naming them",
            uniqueFillClash),
    ]

    static func check(
        _ name: String, _ body: @escaping @Sendable (ConformanceHarness) async throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck(MigrationChecks.group, name, body)
    }

    static func addOptional(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitV2.schema()) { container in
            let (lines, nils) = try await container.read { context in
                let notes = try context.fetch(FetchRequest<KitV2.Note>(sortBy: [SortDescriptor(\.title)]))
                let nils = try context.count(for: FetchRequest<KitV2.Note>(predicate: #Predicate { $0.summary == nil }))
                return (notes.map { "\($0.title) \($0.rank) \($0.body ?? "nil") \($0.summary ?? "nil")" }, nils)
            }
            try kit.expectEqual(
                lines, ["Dune 3 sand nil", "Solaris 1 nil nil", "Ubik 2 spray nil"], "notes after the migration")
            try kit.expectEqual(nils, 3, "notes whose stored summary is nil")
            try await container.performUnitOfWork { context in
                let note = KitV2.Note(context: context)
                note.title = "Emma"
                note.summary = "a match"
                try context.save()
            }
        }
        let summarized = try await MigrationChecks.with(kit, KitV2.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<KitV2.Note>(predicate: #Predicate { $0.summary == "a match" }))
                    .map(\.title)
            }
        }
        try kit.expectEqual(summarized, ["Emma"], "notes with a summary, after reopening")
    }

    static func addWithDefault(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteShelved.schema()) { container in
            let (lines, unsorted) = try await container.read { context in
                let notes = try context.fetch(FetchRequest<KitNoteShelved.Note>(sortBy: [SortDescriptor(\.title)]))
                let unsorted = try context.fetch(
                    FetchRequest<KitNoteShelved.Note>(
                        predicate: #Predicate { $0.shelf == "unsorted" }, sortBy: [SortDescriptor(\.title)]))
                return (notes.map { "\($0.title) \($0.rank) \($0.body ?? "nil")" }, unsorted.map(\.title))
            }
            try kit.expectEqual(lines, MigrationChecks.v1Lines, "notes after the migration")
            try kit.expectEqual(unsorted, ["Dune", "Solaris", "Ubik"], "notes whose stored shelf is the default")
            try await container.performUnitOfWork { context in
                let note = KitNoteShelved.Note(context: context)
                note.title = "Emma"
                note.shelf = "read"
                try context.save()
            }
            let read = try await container.read { context in
                try context.fetch(FetchRequest<KitNoteShelved.Note>(predicate: #Predicate { $0.shelf == "read" }))
                    .map(\.title)
            }
            try kit.expectEqual(read, ["Emma"], "notes on the shelf `read`")
        }
    }

    static func remove(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteUnranked.schema()) { container in
            try await container.performUnitOfWork { context in
                KitNoteUnranked.Note(context: context).title = "Emma"
                try context.save()
            }
            let lines = try await container.read { context in
                try context.fetch(FetchRequest<KitNoteUnranked.Note>(sortBy: [SortDescriptor(\.title)])).map {
                    "\($0.title) \($0.body ?? "nil")"
                }
            }
            try kit.expectEqual(lines, ["Dune sand", "Emma nil", "Solaris nil", "Ubik spray"], "notes after removal")
        }
        // Bringing `rank` back (version 3) adds a new column: the old ranks are gone.
        let zeros = try await MigrationChecks.with(kit, MigrationModels.schema(KitV1.self, version: 3)) { container in
            try await container.read { context in
                try context.count(for: FetchRequest<KitV1.Note>(predicate: #Predicate { $0.rank == 0 }))
            }
        }
        try kit.expectEqual(zeros, 4, "notes with rank 0 once rank is added again")
    }

    static func rename(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        // V3 renames `body` to `text` (and adds the optional `summary`).
        try await MigrationChecks.with(kit, KitV3.schema()) { container in
            let (lines, sandy) = try await container.read { context in
                let notes = try context.fetch(FetchRequest<KitV3.Note>(sortBy: [SortDescriptor(\.title)]))
                let sandy = try context.fetch(FetchRequest<KitV3.Note>(predicate: #Predicate { $0.text == "sand" }))
                return (notes.map { "\($0.title) \($0.rank) \($0.text ?? "nil")" }, sandy.map(\.title))
            }
            try kit.expectEqual(lines, MigrationChecks.v1Lines, "notes after renaming body to text")
            try kit.expectEqual(sandy, ["Dune"], "notes whose text is `sand`")
            try await container.performUnitOfWork { context in
                let note = KitV3.Note(context: context)
                note.title = "Emma"
                note.text = "letters"
                try context.save()
            }
        }
        let texts = try await MigrationChecks.with(kit, KitV3.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<KitV3.Note>(sortBy: [SortDescriptor(\.title)])).map { $0.text ?? "nil" }
            }
        }
        try kit.expectEqual(texts, ["sand", "letters", "nil", "spray"], "texts after reopening")
    }

    /// `title` was `body` and `body` was `title`: before renames were taken together, both were
    /// ignored and every value stayed where it was.
    static func swapNames(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let read: @Sendable (PersistentContainer) async throws -> [String] = { container in
            try await container.read { context in
                let notes = try context.fetch(FetchRequest<KitNoteSwapped.Note>(sortBy: [SortDescriptor(\.rank)]))
                let solaris = try context.fetch(
                    FetchRequest<KitNoteSwapped.Note>(predicate: #Predicate { $0.body == "Solaris" }))
                return notes.map { "\($0.title ?? "nil") \($0.rank) \($0.body ?? "nil")" }
                    + solaris.map { "\($0.rank)" }
            }
        }
        let expected = ["nil 1 Solaris", "spray 2 Ubik", "sand 3 Dune", "1"]
        try await MigrationChecks.with(kit, KitNoteSwapped.schema()) { container in
            try kit.expectEqual(try await read(container), expected, "notes after title and body swap names")
            try await container.performUnitOfWork { context in
                let note = KitNoteSwapped.Note(context: context)
                note.title = "letters"
                note.rank = 4
                note.body = "Emma"
                try context.save()
            }
        }
        let reopened = try await MigrationChecks.with(kit, KitNoteSwapped.schema(), read)
        try kit.expectEqual(
            reopened, ["nil 1 Solaris", "spray 2 Ubik", "sand 3 Dune", "letters 4 Emma", "1"], "notes after reopening")
    }

    /// `summary` was `body`, and `body` was `title`: before, `title`'s rename was ignored (its new
    /// name was taken), so the titles were dropped and `body` added empty.
    static func passNamesAlong(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let lines = try await MigrationChecks.with(kit, KitNotePassedAlong.schema()) { container in
            try await container.read { context in
                let notes = try context.fetch(
                    FetchRequest<KitNotePassedAlong.Note>(sortBy: [SortDescriptor(\.body)]))
                let sandy = try context.fetch(
                    FetchRequest<KitNotePassedAlong.Note>(predicate: #Predicate { $0.summary == "sand" }))
                return notes.map { "\($0.body) \($0.rank) \($0.summary ?? "nil")" } + sandy.map(\.body)
            }
        }
        try kit.expectEqual(lines, MigrationChecks.v1Lines + ["Dune"], "notes after body became summary and title body")
    }

    /// Version 1 → `KitNoteIndexed` (title indexed) → `KitNoteHeading` (title renamed heading).
    static func renameIndexed(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteIndexed.schema()) { _ in }
        try await MigrationChecks.with(kit, KitNoteHeading.schema()) { container in
            try await container.performUnitOfWork { context in
                KitNoteHeading.Note(context: context).heading = "Emma"
                try context.save()
            }
            let (exact, range) = try await container.read { context in
                let exact = try context.fetch(
                    FetchRequest<KitNoteHeading.Note>(predicate: #Predicate { $0.heading == "Solaris" })
                ).map(\.rank)
                let range = try context.fetch(
                    FetchRequest<KitNoteHeading.Note>(
                        predicate: #Predicate { $0.heading >= "E" && $0.heading < "V" },
                        sortBy: [SortDescriptor(\.heading, order: .reverse)])
                ).map(\.heading)
                return (exact, range)
            }
            try kit.expectEqual(exact, [1], "ranks of notes headed Solaris")
            try kit.expectEqual(range, ["Ubik", "Solaris", "Emma"], "headings in [E, V)")
        }
    }

    /// Titles by a filter and an order that an index on `title` serves.
    static func indexedReads(_ container: PersistentContainer) async throws -> [String] {
        try await container.read { context in
            let exact = try context.fetch(
                FetchRequest<KitV1.Note>(predicate: #Predicate { $0.title == "Solaris" })
            ).map(\.title)
            let range = try context.fetch(
                FetchRequest<KitV1.Note>(
                    predicate: #Predicate { $0.title >= "E" && $0.title < "V" },
                    sortBy: [SortDescriptor(\.title, order: .reverse)])
            ).map(\.title)
            return exact + ["|"] + range
        }
    }

    static func addAndRemoveIndex(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteIndexed.schema()) { container in
            try await container.performUnitOfWork { context in
                KitNoteIndexed.Note(context: context).title = "Emma"
                try context.save()
            }
            let (exact, range) = try await container.read { context in
                let exact = try context.fetch(
                    FetchRequest<KitNoteIndexed.Note>(predicate: #Predicate { $0.title == "Solaris" })
                ).map(\.rank)
                let range = try context.fetch(
                    FetchRequest<KitNoteIndexed.Note>(
                        predicate: #Predicate { $0.title >= "E" && $0.title < "V" },
                        sortBy: [SortDescriptor(\.title, order: .reverse)])
                ).map(\.title)
                return (exact, range)
            }
            try kit.expectEqual(exact, [1], "ranks of notes titled Solaris, with the index")
            try kit.expectEqual(range, ["Ubik", "Solaris", "Emma"], "titles in [E, V), with the index")
        }
        let reads = try await MigrationChecks.with(kit, MigrationModels.schema(KitV1.self, version: 3)) { container in
            try await container.performUnitOfWork { context in
                KitV1.Note(context: context).title = "Solaris"
                try context.save()
            }
            return try await indexedReads(container)
        }
        try kit.expectEqual(
            reads, ["Solaris", "Solaris", "|", "Ubik", "Solaris", "Solaris", "Emma"], "titles once the index is removed"
        )
    }

    static func uniqueClash(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let keys = try await MigrationChecks.with(kit, KitV1.schema()) { container in
            try await container.performUnitOfWork { context in
                let dune = try kit.first(
                    context.fetch(FetchRequest<KitV1.Note>(predicate: #Predicate { $0.title == "Dune" })), "Dune")
                let twin = KitV1.Note(context: context)
                twin.title = "Dune"
                twin.rank = 9
                try context.save()
                return [dune.objectID.primaryKey, twin.objectID.primaryKey].compactMap { $0 }.sorted()
            }
        }
        try kit.expectEqual(keys.count, 2, "the two Dunes' keys")
        let error = try await MigrationChecks.expectClash(
            kit, "Note", ["title"], "adding a unique title over two Dunes"
        ) {
            _ = try kit.open(schema: KitNoteUnique.schema())
        }
        // The refusal reads as a migration's, and its cause names the rows and the value they share.
        try kit.expect(
            error.description.contains("cannot be added") && error.description.contains("previous model version"),
            "the refusal says the migration cannot add the constraint: \(error)")
        try kit.expect(
            error.native?.message.hasPrefix("rows \(keys[0]) and \(keys[1]) of Note hold the same title (") == true
                && error.native?.message.contains("Dune") == true,
            "the refusal's cause names rows \(keys[0]) and \(keys[1]) and their title: \(error)")
        try kit.expectEqual(
            try await MigrationChecks.readV1Notes(kit), ["Dune 3 sand", "Dune 9 nil", "Solaris 1 nil", "Ubik 2 spray"],
            "notes at version 1 after the refused migration")
    }

    static func uniqueAddedAndRemoved(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteUnique.schema()) { container in
            try await MigrationChecks.expectClash(kit, "Note", ["title"], "saving a second Dune after the migration") {
                try await container.performUnitOfWork { context in
                    KitNoteUnique.Note(context: context).title = "Dune"
                    try context.save()
                }
            }
            try await container.performUnitOfWork { context in
                KitNoteUnique.Note(context: context).title = "Emma"
                try context.save()
            }
        }
        let titles = try await MigrationChecks.with(kit, MigrationModels.schema(KitV1.self, version: 3)) { container in
            try await container.performUnitOfWork { context in
                KitV1.Note(context: context).title = "Dune"
                try context.save()
            }
            return try await container.read { context in
                try context.fetch(FetchRequest<KitV1.Note>(sortBy: [SortDescriptor(\.title)])).map(\.title)
            }
        }
        try kit.expectEqual(
            titles, ["Dune", "Dune", "Emma", "Solaris", "Ubik"], "titles once the constraint is removed")
    }

    static func requiredToOptional(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteOptionalTitle.schema()) { container in
            try await container.performUnitOfWork { context in
                let note = KitNoteOptionalTitle.Note(context: context)
                note.title = nil
                note.rank = 7
                try context.save()
            }
            let (titles, untitled) = try await container.read { context in
                let titles = try context.fetch(
                    FetchRequest<KitNoteOptionalTitle.Note>(sortBy: [SortDescriptor(\.rank)])
                ).map { $0.title ?? "nil" }
                let untitled = try context.fetch(
                    FetchRequest<KitNoteOptionalTitle.Note>(predicate: #Predicate { $0.title == nil })
                ).map(\.rank)
                return (titles, untitled)
            }
            try kit.expectEqual(titles, ["Solaris", "Ubik", "Dune", "nil"], "titles by rank")
            try kit.expectEqual(untitled, [7], "ranks of untitled notes")
        }
    }

    static func optionalToRequired(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        try await MigrationChecks.with(kit, KitNoteRequiredBody.schema()) { container in
            let (bodies, filled) = try await container.read { context in
                let bodies = try context.fetch(
                    FetchRequest<KitNoteRequiredBody.Note>(sortBy: [SortDescriptor(\.title)])
                ).map(\.body)
                let filled = try context.fetch(
                    FetchRequest<KitNoteRequiredBody.Note>(predicate: #Predicate { $0.body == "(empty)" })
                ).map(\.title)
                return (bodies, filled)
            }
            try kit.expectEqual(bodies, ["sand", "(empty)", "spray"], "bodies after the migration")
            try kit.expectEqual(filled, ["Solaris"], "notes whose stored body is the default")
        }
    }

    static func uniqueFillClash(_ kit: ConformanceHarness) async throws {
        let nulls = try await MigrationChecks.with(kit, KitNoteUniqueBody.schema()) { container in
            try await container.performUnitOfWork { context in
                var nulls: [KitNoteUniqueBody.Note] = []
                for (title, body) in [("Dune", "sand"), ("Solaris", nil), ("Ubik", "spray"), ("Emma", nil)] {
                    let note = KitNoteUniqueBody.Note(context: context)
                    note.title = title
                    note.body = body
                    if body == nil { nulls.append(note) }
                }
                try context.save()
                return nulls.compactMap(\.objectID.primaryKey).sorted()
            }
        }
        try kit.expectEqual(nulls.count, 2, "the keys of the two notes without a body")
        let error = try await MigrationChecks.expectClash(
            kit, "Note", ["body"], "making the unique body required over two nulls"
        ) {
            _ = try kit.open(schema: KitNoteRequiredUniqueBody.schema())
        }
        try kit.expect(
            error.native?.message.hasPrefix("rows \(nulls[0]) and \(nulls[1]) of Note hold the same body (") == true
                && error.native?.message.contains("(empty)") == true,
            "the refusal's cause names rows \(nulls[0]) and \(nulls[1]) and the default they would share: \(error)")
        let bodies = try await MigrationChecks.with(kit, KitNoteUniqueBody.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<KitNoteUniqueBody.Note>(sortBy: [SortDescriptor(\.title)])).map {
                    "\($0.title) \($0.body ?? "nil")"
                }
            }
        }
        try kit.expectEqual(
            bodies, ["Dune sand", "Emma nil", "Solaris nil", "Ubik spray"], "the notes at version 1 after the refusal")
    }
}
