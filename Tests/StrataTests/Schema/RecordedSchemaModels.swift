import Foundation
import Strata

/// Author 1—n Book (cascade), Book n—n Shelf: every part a recorded schema describes.
final class RSAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute(.unique) var name = ""
    @Attribute var rating = 2.5
    @Relationship(inverse: \RSBook.author, deleteRule: .cascade) var books: RelatedObjects<RSBook>
}

final class RSBook: ManagedObject {
    override class var entityName: String { "Book" }
    override class var indexes: [EntityIndex] { [.unique(\RSBook.title, \RSBook.year)] }
    @Attribute var title = ""
    @Attribute(.indexed) var year: Int64?
    @Attribute var cover = Data([1, 2])
    @Relationship var author: RSAuthor?
    @Relationship(inverse: \RSShelf.books) var shelves: RelatedObjects<RSShelf>
}

final class RSShelf: ManagedObject {
    override class var entityName: String { "Shelf" }
    @Attribute var label = "new"
    @Relationship var books: RelatedObjects<RSBook>
}

/// A one-entity model, `Note`, in two shapes under the same version number.
final class RSNote: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = ""
}

/// `Note` with one more attribute, `isbn`: not optional, default "".
final class RSNoteWithISBN: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = ""
    @Attribute var isbn = ""
}

/// `Note` whose title is optional.
final class RSNoteOptionalTitle: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title: String?
}

enum RecordedSchemaModels {
    static func library(version: Int = 1) throws -> Schema {
        try Schema(version: version, [RSAuthor.self, RSBook.self, RSShelf.self])
    }

    static func note(version: Int = 1) throws -> Schema { try Schema(version: version, [RSNote.self]) }

    static func noteOptionalTitle(version: Int = 1) throws -> Schema {
        try Schema(version: version, [RSNoteOptionalTitle.self])
    }

    static func noteWithISBN(version: Int = 1) throws -> Schema { try Schema(version: version, [RSNoteWithISBN.self]) }
}
