import Foundation
import Strata

// Models for MigrationStepStoreTests: one entity name in several shapes, one class per shape.

/// `Note` whose optional title became required, default "untitled".
final class MStNoteTitleDefault: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title = "untitled"
}

/// `Note` with a unique title.
final class MStUniqueNote: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute(.unique) var title = ""
}

/// `Note` whose unique title was renamed `heading`.
final class MStUniqueNoteHeading: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute(.unique) var heading = ""
}

/// `Author` and `Book` without relationships.
final class MStPlainAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
}

final class MStPlainBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
}

/// `Author` 1—n `Book`: a to-one key on Book, a to-many on Author.
final class MStAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
    @Relationship(inverse: \MStBook.author) var books: RelatedObjects<MStBook>
}

final class MStBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
    @Relationship var author: MStAuthor?
}

/// `Tag` without relationships.
final class MStPlainTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute var label = ""
}

/// `Book` n—n `Tag`.
final class MStTaggedBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title = ""
    @Relationship(inverse: \MStTag.books) var tags: RelatedObjects<MStTag>
}

final class MStTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute var label = ""
    @Relationship var books: RelatedObjects<MStTaggedBook>
}

/// Version 1 of the rename model: `Author` 1—n `Book` (unique title) n—n `Tag`.
final class MStRAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
    @Relationship(inverse: \MStRBook.author) var books: RelatedObjects<MStRBook>
}

final class MStRBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute(.unique) var title = ""
    @Relationship var author: MStRAuthor?
    @Relationship(inverse: \MStRTag.books) var tags: RelatedObjects<MStRTag>
}

final class MStRTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute var label = ""
    @Relationship var books: RelatedObjects<MStRBook>
}

/// Version 2 of the rename model: `Book` is now `Novel` (the join becomes `Novel_tags__Tag_books`,
/// still with Novel on the left).
final class MStNAuthor: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
    @Relationship(inverse: \MStNovel.author) var books: RelatedObjects<MStNovel>
}

final class MStNovel: ManagedObject {
    override class var entityName: String { "Novel" }
    @Attribute(.unique) var title = ""
    @Relationship var author: MStNAuthor?
    @Relationship(inverse: \MStNTag.books) var tags: RelatedObjects<MStNTag>
}

final class MStNTag: ManagedObject {
    override class var entityName: String { "Tag" }
    @Attribute var label = ""
    @Relationship var books: RelatedObjects<MStNovel>
}

/// `Note` with an optional title, a required `isbn` and an indexed `shelf`.
final class MStNoteOptionalTitleISBN: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var title: String?
    @Attribute var isbn = ""
    @Attribute(.indexed) var shelf = "new"
}

/// `Note` reshaped at once: a required unique title (default "untitled"), `subtitle` added
/// before it, `isbn` removed, `shelf` (indexed) kept.
final class MStNoteReshaped: ManagedObject {
    override class var entityName: String { "Note" }
    @Attribute var subtitle: String?
    @Attribute(.unique) var title = "untitled"
    @Attribute(.indexed) var shelf = "new"
}

/// `Author` 1—n `Book` whose title became optional (Book is rebuilt with its to-one key).
final class MStAuthorOfLooseBooks: ManagedObject {
    override class var entityName: String { "Author" }
    @Attribute var name = ""
    @Relationship(inverse: \MStLooseBook.author) var books: RelatedObjects<MStLooseBook>
}

final class MStLooseBook: ManagedObject {
    override class var entityName: String { "Book" }
    @Attribute var title: String?
    @Relationship var author: MStAuthorOfLooseBooks?
}
