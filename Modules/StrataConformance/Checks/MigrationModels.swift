import Foundation
import Strata

// The migration group's frozen model versions. Each namespace is one shape of the model; entity
// names come from the class names without the namespace, so `KitV1.Note` and `KitV2.Note` are
// both `Note`. A class that does not change between two shapes is listed by both. The checks
// use each shape at the version they need (`MigrationModels.schema(_:version:)`).

/// Version 1 of the staged plan, and the base of most inferred checks: one `Note`.
enum KitV1: VersionedSchema {
    static let version = 1
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// Version 2: `Note.summary` added (optional); the plan fills it in a custom stage.
enum KitV2: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
        @Attribute var summary: String?
    }
}

/// Version 3: `Note.body` renamed `text` (inferred from `originalName`).
enum KitV3: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute(originalName: "body") var text: String?
        @Attribute var summary: String?
    }
}

/// Version 4: `Note.rank` became a `String` (a type change: only a custom stage can do it).
enum KitV4: VersionedSchema {
    static let version = 4
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = ""
        @Attribute var text: String?
        @Attribute var summary: String?
    }
}

/// `KitV1` plus an entity, `Shelf`.
enum KitNoteAndShelf: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [KitV1.Note.self, Shelf.self] }

    final class Shelf: ManagedObject {
        @Attribute var label = ""
    }
}

/// `Note` with a required `shelf` that has a default.
enum KitNoteShelved: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
        @Attribute var shelf = "unsorted"
    }
}

/// `Note` with two required attributes that have defaults, `shelf` and `colour`.
enum KitNoteShelvedTwice: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
        @Attribute var shelf = "unsorted"
        @Attribute var colour = "grey"
    }
}

/// `Note` without `rank`.
enum KitNoteUnranked: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var body: String?
    }
}

/// `Note` with `title` indexed.
enum KitNoteIndexed: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute(.indexed) var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// `Note` with `title` unique.
enum KitNoteUnique: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute(.unique) var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// `Note` whose `title` became optional.
enum KitNoteOptionalTitle: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title: String?
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// `Note` whose `body` became required, with a default.
enum KitNoteRequiredBody: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute var body = "(empty)"
    }
}

/// `Note` whose optional `body` is unique (version 1 of the fill-clash check).
enum KitNoteUniqueBody: VersionedSchema {
    static let version = 1
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute(.unique) var body: String?
    }
}

/// `Note` whose unique `body` became required, with a default that every null would take.
enum KitNoteRequiredUniqueBody: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute(.unique) var body = "(empty)"
    }
}

/// `Note` whose `rank` became a `String`, with no stage to convert it.
enum KitNoteTextRank: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = ""
        @Attribute var rank = ""
        @Attribute var body: String?
    }
}

/// `Note` whose `title` has another default.
enum KitNoteTitled: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var title = "untitled"
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// `Note` with its columns declared in another order.
enum KitNoteReordered: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute var rank = 0
        @Attribute var title = ""
        @Attribute var body: String?
    }
}

/// `Note` renamed `Memo` (inferred from `originalEntityName`).
enum KitMemo: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Memo.self] }

    final class Memo: ManagedObject {
        override class var originalEntityName: String? { "Note" }
        @Attribute var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// `KitNoteUnique` renamed `Memo`: its unique constraint must follow the rename.
enum KitMemoUnique: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Memo.self] }

    final class Memo: ManagedObject {
        override class var originalEntityName: String? { "Note" }
        @Attribute(.unique) var title = ""
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// `KitNoteIndexed` with the indexed `title` renamed `heading`: its index must follow the rename.
enum KitNoteHeading: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute(.indexed, originalName: "title") var heading = ""
        @Attribute var rank = 0
        @Attribute var body: String?
    }
}

/// `KitV1`'s `title` and `body` trading names: each keeps the other's values.
enum KitNoteSwapped: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute(originalName: "body") var title: String?
        @Attribute var rank = 0
        @Attribute(originalName: "title") var body: String?
    }
}

/// `KitV1`'s names passed along: `body` becomes `summary`, and `title` takes the name `body`.
enum KitNotePassedAlong: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Note.self] }

    final class Note: ManagedObject {
        @Attribute(originalName: "title") var body = ""
        @Attribute var rank = 0
        @Attribute(originalName: "body") var summary: String?
    }
}

enum MigrationModels {
    /// The schema of `shape` at `version` (a shape can serve as the store's model or the new one).
    static func schema(_ shape: any VersionedSchema.Type, version: Int? = nil) throws -> Schema {
        try Schema(version: version ?? shape.version, shape.models)
    }
}
