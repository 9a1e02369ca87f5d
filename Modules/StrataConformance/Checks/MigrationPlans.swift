import Foundation
import Strata
import Synchronization

/// What a migration's closures did, for the check that runs it.
///
/// A plan's stages are static, and an engine may run them on a thread of its own (LMDB runs its
/// write transactions on a writer thread), so the closures find the log through a global slot
/// that ``during(_:_:)`` fills for one open at a time. The task-local ``inOpeningTask`` is only
/// read, to see whether the closures run in the task that opens the store, as documented.
final class KitMigrationLog: Sendable {
    /// True inside ``during(_:_:)``'s task.
    @TaskLocal static var inOpeningTask = false

    /// Serializes the opens that use a log.
    private static let gate = NSLock()
    private static let active = Mutex<KitMigrationLog?>(nil)

    private let entries = Mutex<[String]>([])
    private let ranks = Mutex<[String: Int]>([:])
    private let tasks = Mutex<[Bool]>([])

    /// What the closures recorded, in order.
    var recorded: [String] { entries.withLock { $0 } }

    /// For each closure that called ``noteTask()``, whether it ran in the opening task.
    var ranInOpeningTask: [Bool] { tasks.withLock { $0 } }

    /// Runs `body` (an open) with `log` as the log the closures write to.
    static func during<T>(_ log: KitMigrationLog, _ body: () throws -> T) rethrows -> T {
        gate.lock()
        defer { gate.unlock() }
        active.withLock { $0 = log }
        defer { active.withLock { $0 = nil } }
        return try $inOpeningTask.withValue(true) { try body() }
    }

    private static var current: KitMigrationLog? { active.withLock { $0 } }

    static func record(_ entry: String) {
        current?.entries.withLock { $0.append(entry) }
    }

    /// Notes whether the calling closure runs in the opening task.
    static func noteTask() {
        let inTask = inOpeningTask
        current?.tasks.withLock { $0.append(inTask) }
    }

    /// Keeps a rank read before a stage for its `didMigrate`.
    static func keep(rank: Int, of title: String) {
        current?.ranks.withLock { $0[title] = rank }
    }

    static func rank(of title: String) -> Int? {
        current?.ranks.withLock { $0[title] }
    }
}

/// An error of the kit's own, thrown by a failing custom stage.
struct KitStageError: Error, Equatable {
    let detail: String
}

enum KitStages {
    /// 1→2: `willMigrate` reads the version 1 notes; `didMigrate` fills the new `summary`.
    static let summaries = MigrationStage.custom(
        from: KitV1.self, to: KitV2.self,
        willMigrate: { context in
            KitMigrationLog.noteTask()
            let notes = try context.fetch(FetchRequest<KitV1.Note>(sortBy: [SortDescriptor(\.title)]))
            KitMigrationLog.record("1→2 will: " + notes.map { "\($0.title) \($0.rank)" }.joined(separator: ", "))
        },
        didMigrate: { context in
            KitMigrationLog.noteTask()
            let notes = try context.fetch(FetchRequest<KitV2.Note>())
            for note in notes { note.summary = "About \(note.title)" }
            KitMigrationLog.record("1→2 did: \(notes.count) notes")
        })

    /// 3→4: `rank` becomes a `String`: kept before the change, written back as text after it.
    static let textRanks = MigrationStage.custom(
        from: KitV3.self, to: KitV4.self,
        willMigrate: { context in
            let notes = try context.fetch(FetchRequest<KitV3.Note>())
            for note in notes { KitMigrationLog.keep(rank: note.rank, of: note.title) }
            KitMigrationLog.record("3→4 will: \(notes.count) notes")
        },
        didMigrate: { context in
            let notes = try context.fetch(FetchRequest<KitV4.Note>())
            for note in notes { note.rank = KitMigrationLog.rank(of: note.title).map { "#\($0)" } ?? "?" }
            try context.save()
            KitMigrationLog.record("3→4 did: \(notes.count) notes")
        })
}

/// Versions 1 and 2, with the custom stage between them.
enum KitPlanToV2: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [KitV1.self, KitV2.self] }
    static var stages: [MigrationStage] { [KitStages.summaries] }
}

/// Versions 1 to 4: custom, lightweight (a rename), custom (a type change).
enum KitPlanToV4: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [KitV1.self, KitV2.self, KitV3.self, KitV4.self] }
    static var stages: [MigrationStage] {
        [KitStages.summaries, .lightweight(from: KitV2.self, to: KitV3.self), KitStages.textRanks]
    }
}

/// Versions 1 and 2 with a stage that writes, saves, then throws in `didMigrate`.
enum KitFailingPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [KitV1.self, KitV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                from: KitV1.self, to: KitV2.self,
                willMigrate: { context in
                    for note in try context.fetch(FetchRequest<KitV1.Note>()) { note.title += " (edited)" }
                    try context.save()
                    KitMigrationLog.record("will saved")
                },
                didMigrate: { context in
                    for note in try context.fetch(FetchRequest<KitV2.Note>()) { note.summary = "half done" }
                    try context.save()
                    KitMigrationLog.record("did saved, throwing")
                    throw KitStageError(detail: "the stage gave up")
                })
        ]
    }
}
