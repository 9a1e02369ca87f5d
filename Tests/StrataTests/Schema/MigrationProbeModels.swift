import Foundation
import Strata
import Synchronization

// Models of `MigrationProbeTests`: versions a careless client might ship.

/// `Item` v1 → v2 (`a` renamed `b`) → v3 (`b` renamed `c`): renames chained across versions.
enum ProbeItemsV1: VersionedSchema {
    static let version = 1
    static var models: [ManagedObject.Type] { [Item.self] }

    final class Item: ManagedObject {
        @Attribute var a = ""
    }
}

enum ProbeItemsV2: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Item.self] }

    final class Item: ManagedObject {
        @Attribute(originalName: "a") var b = ""
    }
}

enum ProbeItemsV3: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Item.self] }

    final class Item: ManagedObject {
        @Attribute(originalName: "b") var c = ""
    }
}

enum ProbeItemsPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProbeItemsV1.self, ProbeItemsV2.self, ProbeItemsV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(from: ProbeItemsV1.self, to: ProbeItemsV2.self),
            .lightweight(from: ProbeItemsV2.self, to: ProbeItemsV3.self),
        ]
    }
}

/// `Tag` with an optional label, then the same label made unique.
final class ProbeTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute var label: String?
}

final class ProbeUniqueTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute(.unique) var label: String?
}

/// `Score` whose `value` is text in v1 and an integer in v2 (a custom stage's type change).
final class ProbeTextScore: ManagedObject {
    override class var entityName: String { "Score" }
    @Attribute var value = ""
}

final class ProbeIntScore: ManagedObject {
    override class var entityName: String { "Score" }
    @Attribute var value: Int64 = 0
}

/// A plan that lists no version: every open is inferred.
enum ProbeEmptyPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [] }
    static var stages: [MigrationStage] { [] }
}

/// A plan that stops at version 2, for a model at version 3.
enum ProbeItemsShortPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProbeItemsV1.self, ProbeItemsV2.self] }
    static var stages: [MigrationStage] { [.lightweight(from: ProbeItemsV1.self, to: ProbeItemsV2.self)] }
}

/// `Tag` with a unique optional label, then the label made required with a default.
final class ProbeRequiredUniqueTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute(.unique) var label = "none"
}

/// `Tag` with a long label, then the label indexed.
final class ProbeIndexedTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute(.indexed) var label: String?
}

/// `Item` as a pre-release build of version 1 made it: with an extra optional `draft`.
final class ProbeDriftedItem: ManagedObject {
    override class var entityName: String { "Item" }
    @Attribute var a = ""
    @Attribute var draft: String?
}

/// `Item` at version 1 with `a` unique, then a plan whose custom stage to version 2 makes every
/// `b` the same.
enum ProbeClashV1: VersionedSchema {
    static let version = 1
    static var models: [ManagedObject.Type] { [Item.self] }

    final class Item: ManagedObject {
        @Attribute(.unique) var a = ""
    }
}

enum ProbeClashV2: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Item.self] }

    final class Item: ManagedObject {
        @Attribute(.unique, originalName: "a") var b = ""
    }
}

enum ProbeClashPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProbeClashV1.self, ProbeClashV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                from: ProbeClashV1.self, to: ProbeClashV2.self, willMigrate: nil,
                didMigrate: { context in
                    for item in try context.fetch(FetchRequest<ProbeClashV2.Item>()) { item.b = "same" }
                })
        ]
    }
}

/// The store a ``ProbeReentrantPlan`` stage opens again, set by the test around its open.
let probeReentrantStore = Mutex<EngineConfiguration?>(nil)

/// 1→2 with a `didMigrate` that opens the migrating store again, as a careless caller might.
enum ProbeReentrantPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProbeItemsV1.self, ProbeItemsV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                from: ProbeItemsV1.self, to: ProbeItemsV2.self, willMigrate: nil,
                didMigrate: { _ in
                    guard let configuration = probeReentrantStore.withLock({ $0 }) else { return }
                    try PersistentContainer(schema: try ProbeItemsV2.schema(), engine: configuration).close()
                })
        ]
    }
}

/// Person n—n Genre (v1); Person renamed Writer (v2); Writer renamed Author (v3), which moves
/// it to the join's left side (join names order their sides by name).
enum ProbeCastV1: VersionedSchema {
    static let version = 1
    static var models: [ManagedObject.Type] { [Person.self, Genre.self] }

    final class Person: ManagedObject {
        @Attribute var name = ""
        @Relationship(inverse: \Genre.people) var genres: RelatedObjects<Genre>
    }

    final class Genre: ManagedObject {
        @Attribute var label = ""
        @Relationship var people: RelatedObjects<Person>
    }
}

enum ProbeCastV2: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Writer.self, Genre.self] }

    final class Writer: ManagedObject {
        override class var originalEntityName: String? { "Person" }
        @Attribute var name = ""
        @Relationship(inverse: \Genre.people) var genres: RelatedObjects<Genre>
    }

    final class Genre: ManagedObject {
        @Attribute var label = ""
        @Relationship var people: RelatedObjects<Writer>
    }
}

enum ProbeCastV3: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Author.self, Genre.self] }

    final class Author: ManagedObject {
        override class var originalEntityName: String? { "Writer" }
        @Attribute var name = ""
        @Relationship(inverse: \Genre.people) var genres: RelatedObjects<Genre>
    }

    final class Genre: ManagedObject {
        @Attribute var label = ""
        @Relationship var people: RelatedObjects<Author>
    }
}

enum ProbeCastPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProbeCastV1.self, ProbeCastV2.self, ProbeCastV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(from: ProbeCastV1.self, to: ProbeCastV2.self),
            .lightweight(from: ProbeCastV2.self, to: ProbeCastV3.self),
        ]
    }
}

enum ProbeCastPlanToV2: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProbeCastV1.self, ProbeCastV2.self] }
    static var stages: [MigrationStage] { [.lightweight(from: ProbeCastV1.self, to: ProbeCastV2.self)] }
}
