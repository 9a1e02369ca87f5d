import Foundation
import Strata

// Models of `MigrationEntityStoreTests`: each version of a store is its own set of classes.

/// Library v1: Person 1—n Book, Genre n—n Person; renamed to Writer in v2.
final class MEPerson: ManagedObject {
    override class var entityName: String { "Person" }
    @Attribute(.unique) var name = ""
    @Relationship(inverse: \MEBookOfPerson.author) var books: RelatedObjects<MEBookOfPerson>
    @Relationship(inverse: \MEGenreOfPerson.people) var genres: RelatedObjects<MEGenreOfPerson>
}

final class MEBookOfPerson: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
    @Relationship var author: MEPerson?
}

final class MEGenreOfPerson: ManagedObject {
    override class var entityName: String { "Genre" }
    @Attribute var label = ""
    @Relationship var people: RelatedObjects<MEPerson>
}

/// Library v2: `Person` renamed `Writer` (its join and unique index are renamed with it).
final class MEWriter: ManagedObject {
    override class var entityName: String { "Writer" }
    @Attribute(.unique) var name = ""
    @Relationship(inverse: \MEBookOfWriter.author) var books: RelatedObjects<MEBookOfWriter>
    @Relationship(inverse: \MEGenreOfWriter.people) var genres: RelatedObjects<MEGenreOfWriter>
}

final class MEBookOfWriter: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
    @Relationship var author: MEWriter?
}

final class MEGenreOfWriter: ManagedObject {
    override class var entityName: String { "Genre" }
    @Attribute var label = ""
    @Relationship var people: RelatedObjects<MEWriter>
}

/// An entity added next to `RSNote`, then removed.
final class MELabel: ManagedObject {
    override class var entityName: String { "Label" }
    @Attribute var text = ""
}

/// `Note` whose title is indexed.
final class MENoteIndexedTitle: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute(.indexed) var title = ""
}

/// `Edition` without, then with, a unique constraint over (title, year).
final class MEEdition: ManagedObject {
    override class var entityName: String { "Edition" }
    @Attribute var title = ""
    @Attribute var year: Int64 = 0
}

final class MEUniqueEdition: ManagedObject {
    override class var entityName: String { "Edition" }
    override class var indexes: [EntityIndex] { [.unique(\MEUniqueEdition.title, \MEUniqueEdition.year)] }
    @Attribute var title = ""
    @Attribute var year: Int64 = 0
}

/// Author and Book without a relationship (v1 and v3), and with `Book.author` (v2).
final class MEPlainAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
}

final class MEPlainBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
}

final class MELinkedAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
    @Relationship(inverse: \MELinkedBook.author) var books: RelatedObjects<MELinkedBook>
}

final class MELinkedBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
    @Relationship var author: MELinkedAuthor?
}

/// Book and Shelf without (v1, v3) and with (v2, v4) a many-to-many relationship.
final class MEShelf: ManagedObject {
    override class var entityName: String { "Shelf" }
    @Attribute var label = ""
}

final class MEShelvedBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
    @Relationship(inverse: \MEBookShelf.books) var shelves: RelatedObjects<MEBookShelf>
}

final class MEBookShelf: ManagedObject {
    override class var entityName: String { "Shelf" }
    @Attribute var label = ""
    @Relationship var books: RelatedObjects<MEShelvedBook>
}

/// `Note` with twelve indexed attributes: a version in the middle of a plan that needs more
/// LMDB databases than the first and last versions.
final class MEWideNote: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = ""
    @Attribute(.indexed) var a1: Int64?
    @Attribute(.indexed) var a2: Int64?
    @Attribute(.indexed) var a3: Int64?
    @Attribute(.indexed) var a4: Int64?
    @Attribute(.indexed) var a5: Int64?
    @Attribute(.indexed) var a6: Int64?
    @Attribute(.indexed) var a7: Int64?
    @Attribute(.indexed) var a8: Int64?
    @Attribute(.indexed) var a9: Int64?
    @Attribute(.indexed) var a10: Int64?
    @Attribute(.indexed) var a11: Int64?
    @Attribute(.indexed) var a12: Int64?
}
