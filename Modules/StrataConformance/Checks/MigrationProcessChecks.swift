import Foundation
import Strata

/// A process still running the old model while another process migrates the store: its writes
/// are refused with `.storeNewerThanModel` and write nothing, whether it inserts (new keys) or
/// updates, and however warm it is (keys reserved, connections open).
enum MigrationProcessChecks {
    static let all: [ConformanceCheck] = [
        MigrationAttributeChecks.check(
            """
            a write by a process still on the old model after another process migrated the store gets \
            storeNewerThanModel and writes nothing
            """, oldModelWriteAfterMigration)
    ]

    static func oldModelWriteAfterMigration(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.seedNotes(kit)
        let old = try kit.open(schema: KitV1.schema())
        defer { old.close() }
        // A save before the migration: this process now holds reserved keys and open connections,
        // and a context holding a note it read.
        let editor = old.newBackgroundContext()
        let dune = try await editor.perform {
            let note = KitV1.Note(context: editor)
            note.title = "Before"
            try editor.save()
            let request = FetchRequest<KitV1.Note>(predicate: #Predicate { $0.title == "Dune" })
            return try editor.fetch(request).map(\.objectID)
        }
        try kit.expectEqual(dune.count, 1, "notes titled Dune")
        try await migrateInPeer(kit)
        let refused = StrataError.storeNewerThanModel(storeVersion: 2, modelVersion: 1)
        let insert = try await kit.expectStrataError("an insert by the old model") {
            try await old.performUnitOfWork(retries: .none) { context in
                let note = KitV1.Note(context: context)
                note.title = "After"
                note.rank = 9
                try context.save()
            }
        }
        try kit.expectEqual(insert, refused, "the old model's insert")
        let update = try await kit.expectStrataError("an update by the old model") {
            try await editor.perform {
                try editor.existingObject(with: dune[0], as: KitV1.Note.self).rank = 99
                try editor.save()
            }
        }
        try kit.expectEqual(update, refused, "the old model's update")
        let stored = try await MigrationChecks.with(kit, KitNoteShelved.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<KitNoteShelved.Note>(sortBy: [SortDescriptor(\.title)])).map {
                    "\($0.title) \($0.rank) \($0.shelf)"
                }
            }
        }
        try kit.expectEqual(
            stored, ["Before 0 unsorted", "Dune 3 unsorted", "Solaris 1 unsorted", "Ubik 2 unsorted"],
            "the migrated notes after the old model's writes")
    }

    /// Has the conformance peer open the main store with `KitNoteShelved` (version 2, a
    /// required `shelf` with a default), which migrates it, and waits for it to finish.
    static func migrateInPeer(_ kit: ConformanceHarness) async throws {
        try await kit.inOtherOpener(["migrate", "--store", kit.configuration.location.path], "the migrating peer") {
            try peerMigrates(engine: $0)
        }
    }

    /// The peer's side of ``migrateInPeer(_:)``: opens the store with `KitNoteShelved`.
    static func peerMigrates(engine: EngineConfiguration) throws {
        try PersistentContainer(schema: KitNoteShelved.schema(), engine: engine).close()
    }
}
