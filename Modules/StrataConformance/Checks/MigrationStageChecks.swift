import Foundation
import Strata
import Synchronization

/// Staged plans: a custom stage sees the old objects before the change and fills the new
/// attribute after it; a store several versions behind runs every stage from its own version
/// on, in order, in one open.
enum MigrationStageChecks {
    static let all: [ConformanceCheck] = [
        MigrationAttributeChecks.check(
            "a custom stage reads the old objects, then fills a new attribute", customStage),
        MigrationAttributeChecks.check(
            "a store three versions behind runs every stage in order, in one open", skippedVersions),
        MigrationAttributeChecks.check("a store runs only the stages from its own version on", laterStart),
        MigrationAttributeChecks.check(
            "progress never goes back while two added columns are filled over 6,000 rows", progressOverSteps),
    ]

    /// Opens the main store with `schema` and `plan`, with a fresh log bound, and returns what
    /// the stages recorded and the progress reports.
    static func migrate(
        _ kit: ConformanceHarness, _ schema: Schema, plan: any MigrationPlan.Type
    ) throws -> (log: [String], progress: [MigrationProgress]) {
        let log = KitMigrationLog()
        let reports = Mutex<[MigrationProgress]>([])
        try KitMigrationLog.during(log) {
            let container = try PersistentContainer(
                schema: schema, migrationPlan: plan, engine: kit.configuration,
                progress: { report in reports.withLock { $0.append(report) } })
            container.close()
        }
        return (log.recorded, reports.withLock { $0 })
    }

    /// The `KitV4` notes as "title rank text summary", sorted by title.
    static func v4Lines(_ kit: ConformanceHarness) async throws -> [String] {
        try await MigrationChecks.with(kit, KitV4.schema(), plan: KitPlanToV4.self) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<KitV4.Note>(sortBy: [SortDescriptor(\.title)])).map {
                    "\($0.title) \($0.rank) \($0.text ?? "nil") \($0.summary ?? "nil")"
                }
            }
        }
    }

    static func customStage(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let (log, _) = try migrate(kit, KitV2.schema(), plan: KitPlanToV2.self)
        try kit.expectEqual(
            log, ["1→2 will: Dune 3, Solaris 1, Ubik 2", "1→2 did: 3 notes"], "what the stage's closures recorded")
        let (summaries, filled) = try await MigrationChecks.with(kit, KitV2.schema()) { container in
            try await container.read { context in
                let notes = try context.fetch(FetchRequest<KitV2.Note>(sortBy: [SortDescriptor(\.title)]))
                let filled = try context.count(
                    for: FetchRequest<KitV2.Note>(predicate: #Predicate { $0.summary == "About Dune" }))
                return (notes.map { $0.summary ?? "nil" }, filled)
            }
        }
        try kit.expectEqual(summaries, ["About Dune", "About Solaris", "About Ubik"], "summaries after the stage")
        try kit.expectEqual(filled, 1, "notes whose stored summary is `About Dune`")
        // Opening again runs nothing.
        let (again, progress) = try migrate(kit, KitV2.schema(), plan: KitPlanToV2.self)
        try kit.expectEqual(again, [], "closures run by a second open")
        try kit.expectEqual(progress.count, 0, "progress reports of a second open")
    }

    static func skippedVersions(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let (log, progress) = try migrate(kit, KitV4.schema(), plan: KitPlanToV4.self)
        try kit.expectEqual(
            log,
            ["1→2 will: Dune 3, Solaris 1, Ubik 2", "1→2 did: 3 notes", "3→4 will: 3 notes", "3→4 did: 3 notes"],
            "the closures run, in order")
        try kit.expectEqual(
            try await v4Lines(kit),
            ["Dune #3 sand About Dune", "Solaris #1 nil About Solaris", "Ubik #2 spray About Ubik"],
            "notes at version 4")
        try kit.expect(!progress.isEmpty, "a migration through three stages reports progress")
        try kit.expect(
            progress.allSatisfy { $0.storeVersion == 1 && $0.modelVersion == 4 && $0.stageCount == 3 },
            "every report says 1 → 4 in 3 stages: \(progress)")
        let fractions = progress.map(\.fractionCompleted)
        try kit.expect(fractions == fractions.sorted(), "progress never goes back: \(fractions)")
        try kit.expectEqual(fractions.last, 1, "the last report's fraction")
    }

    /// Enough rows that an engine filling a column in batches (PostgreSQL: 5,000 a statement)
    /// reports each added column's rows from 0 again.
    static func progressOverSteps(_ kit: ConformanceHarness) async throws {
        let seeded = try kit.open(schema: MigrationModels.schema(KitV1.self, version: 1))
        try await seeded.performUnitOfWork { context in
            for number in 0..<6_000 { KitV1.Note(context: context).title = "note \(number)" }
            try context.save()
        }
        seeded.close()
        let reports = Mutex<[MigrationProgress]>([])
        let container = try PersistentContainer(
            schema: try KitNoteShelvedTwice.schema(), migrationPlan: nil,
            engine: kit.configuration, progress: { report in reports.withLock { $0.append(report) } })
        defer { container.close() }
        let fractions = reports.withLock { $0 }.map(\.fractionCompleted)
        try kit.expect(fractions == fractions.sorted(), "progress went back: \(fractions)")
        try kit.expectEqual(fractions.last, 1, "the last report's fraction")
        let shelved = try await container.read { context in
            try context.count(
                for: FetchRequest<KitNoteShelvedTwice.Note>(
                    predicate: #Predicate { $0.shelf == "unsorted" && $0.colour == "grey" }))
        }
        try kit.expectEqual(shelved, 6_000, "notes with both defaults")
        // The history of Note asked with the version 1 class names the class to pass instead.
        do {
            _ = try await container.history(after: .beginning, entities: [KitV1.Note.self])
            throw kit.fail("history of a class of another schema version was read")
        } catch StrataError.misuse(let message, _) {
            try kit.expect(
                message.contains("KitNoteShelvedTwice.Note") && message.contains("another schema version"),
                "the message does not name the class to pass: \(message)")
        }
    }

    static func laterStart(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.with(kit, KitV2.schema()) { container in
            try await container.performUnitOfWork { context in
                let note = KitV2.Note(context: context)
                note.title = "Emma"
                note.rank = 5
                note.body = "letters"
                note.summary = "by hand"
                try context.save()
            }
        }
        let (log, _) = try migrate(kit, KitV4.schema(), plan: KitPlanToV4.self)
        try kit.expectEqual(log, ["3→4 will: 1 notes", "3→4 did: 1 notes"], "the closures run from version 2")
        try kit.expectEqual(try await v4Lines(kit), ["Emma #5 letters by hand"], "notes at version 4")
    }
}
