public import Strata

/// The models of the migration crash test: a version-1 store of ``MigrationCrash/rowCount``
/// items that a child process migrates to version 2 while the test kills it.
///
/// Every row's contents follow from its number, so a reopened store can be checked row by row
/// at either version. Two version 2s: ``MigrationCrashV2`` (inferred: an optional attribute
/// added with a non-null default, which rewrites every row on every engine) and
/// ``MigrationCrashV2Staged`` (a rename, a required attribute with a default, and a custom stage
/// whose `didMigrate` sets a value on every row).
public enum MigrationCrash {
    /// How many items the version-1 store holds.
    public static let rowCount = 20_000
    /// The value of ``MigrationCrashV2/Item/label`` that the migration writes into every row.
    public static let label = "migrated"

    /// The title of item `number`.
    public static func title(_ number: Int) -> String { "item \(number) " + String(repeating: "x", count: number % 17) }
    /// The note of item `number`: set on even numbers only.
    public static func note(_ number: Int) -> String? { number.isMultiple(of: 2) ? "note \(number)" : nil }
    /// The score the staged migration's `didMigrate` gives item `number`.
    public static func score(_ number: Int) -> Int { number * 3 + 1 }

    /// The two ways to version 2 that the test runs.
    public enum Target: String, CaseIterable, Sendable {
        /// ``MigrationCrashV2``, by inference.
        case inferred
        /// ``MigrationCrashV2Staged``, through ``StagedPlan``.
        case staged

        /// The version-2 schema.
        public func schema() throws -> Schema {
            switch self {
            case .inferred: try MigrationCrashV2.schema()
            case .staged: try MigrationCrashV2Staged.schema()
            }
        }

        /// The migration plan the child opens with (nil: inference alone).
        public var plan: (any MigrationPlan.Type)? {
            switch self {
            case .inferred: nil
            case .staged: StagedPlan.self
            }
        }
    }

    /// Version 1 to ``MigrationCrashV2Staged`` through one custom stage that scores every item.
    public enum StagedPlan: MigrationPlan {
        /// Version 1, then the staged version 2.
        public static var schemas: [any VersionedSchema.Type] { [MigrationCrashV1.self, MigrationCrashV2Staged.self] }
        /// One custom stage; its `didMigrate` sets ``MigrationCrashV2Staged/Item/score`` on every row.
        public static var stages: [MigrationStage] {
            [
                .custom(
                    from: MigrationCrashV1.self, to: MigrationCrashV2Staged.self, willMigrate: nil,
                    didMigrate: { context in
                        for item in try context.fetch(FetchRequest<MigrationCrashV2Staged.Item>()) {
                            item.score = MigrationCrash.score(item.number)
                        }
                        try context.save()
                    })
            ]
        }
    }
}

/// Version 1: items with a number, a title and an optional note.
public enum MigrationCrashV1: VersionedSchema {
    /// 1.
    public static let version = 1
    /// ``Item``.
    public static var models: [ManagedObject.Type] { [Item.self] }

    /// One row of the version-1 store.
    public final class Item: ManagedObject {
        override public class var entityName: String { "Item" }
        /// 0 to ``MigrationCrash/rowCount`` − 1.
        @Attribute(.unique) public var number = 0
        /// ``MigrationCrash/title(_:)``.
        @Attribute public var title = ""
        /// ``MigrationCrash/note(_:)``.
        @Attribute public var note: String?
    }
}

/// Version 2 by inference: ``Item/label`` added, optional with a non-null default, so the
/// migration writes it into every existing row.
public enum MigrationCrashV2: VersionedSchema {
    /// 2.
    public static let version = 2
    /// ``Item``.
    public static var models: [ManagedObject.Type] { [Item.self] }

    /// One row of the migrated store.
    public final class Item: ManagedObject {
        override public class var entityName: String { "Item" }
        /// Unchanged.
        @Attribute(.unique) public var number = 0
        /// Unchanged.
        @Attribute public var title = ""
        /// Unchanged.
        @Attribute public var note: String?
        /// New: ``MigrationCrash/label`` in every migrated row (nil would mean a row the migration missed).
        @Attribute public var label: String? = MigrationCrash.label
    }
}

/// Version 2 through ``MigrationCrash/StagedPlan``: `title` renamed to ``Item/name``,
/// ``Item/label`` added as in ``MigrationCrashV2``, and ``Item/score`` added with a default of 0
/// that the custom stage's `didMigrate` sets on every row.
public enum MigrationCrashV2Staged: VersionedSchema {
    /// 2.
    public static let version = 2
    /// ``Item``.
    public static var models: [ManagedObject.Type] { [Item.self] }

    /// One row of the migrated store.
    public final class Item: ManagedObject {
        override public class var entityName: String { "Item" }
        /// Unchanged.
        @Attribute(.unique) public var number = 0
        /// Version 1's `title`, renamed.
        @Attribute(originalName: "title") public var name = ""
        /// Unchanged.
        @Attribute public var note: String?
        /// New, as in ``MigrationCrashV2``.
        @Attribute public var label: String? = MigrationCrash.label
        /// New: ``MigrationCrash/score(_:)``, set by the custom stage.
        @Attribute public var score = 0
    }
}

extension Duration {
    /// The duration in whole nanoseconds: how the migration crash test passes a kill delay to the
    /// crash writer (`--kill-after-ns`) and how the writer reports its timing.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
