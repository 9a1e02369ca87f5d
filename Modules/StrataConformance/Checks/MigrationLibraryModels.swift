import Foundation
import Strata

// The migration group's library shapes, for relationship changes: `Book`, `Author`, `Cover` and
// `Tag`, first unrelated, then with one kind of relationship each (one-to-one Book–Cover,
// one-to-many Author–Book, many-to-many Book–Tag).

/// No relationships.
enum KitLibrary: VersionedSchema {
    static let version = 1
    static var models: [ManagedObject.Type] { [Book.self, Author.self, Cover.self, Tag.self] }

    final class Book: ManagedObject {
        @Attribute var title = ""
    }

    final class Author: ManagedObject {
        @Attribute var name = ""
    }

    final class Cover: ManagedObject {
        @Attribute var color = ""
    }

    final class Tag: ManagedObject {
        @Attribute var label = ""
    }
}

/// One-to-one: `Book.cover` ↔ `Cover.book` (to-one both ways).
enum KitLibraryCovers: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Book.self, KitLibrary.Author.self, Cover.self, KitLibrary.Tag.self] }

    final class Book: ManagedObject {
        @Attribute var title = ""
        @Relationship(inverse: \Cover.book) var cover: Cover?
    }

    final class Cover: ManagedObject {
        @Attribute var color = ""
        @Relationship var book: Book?
    }
}

/// One-to-many: `Author.books` (to-many) ↔ `Book.author` (to-one).
enum KitLibraryAuthors: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Book.self, Author.self, KitLibrary.Cover.self, KitLibrary.Tag.self] }

    final class Book: ManagedObject {
        @Attribute var title = ""
        @Relationship var author: Author?
    }

    final class Author: ManagedObject {
        @Attribute var name = ""
        @Relationship(inverse: \Book.author) var books: RelatedObjects<Book>
    }
}

/// `KitLibraryAuthors` with another delete rule on `Author.books`.
enum KitLibraryAuthorsCascade: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Book.self, Author.self, KitLibrary.Cover.self, KitLibrary.Tag.self] }

    final class Book: ManagedObject {
        @Attribute var title = ""
        @Relationship var author: Author?
    }

    final class Author: ManagedObject {
        @Attribute var name = ""
        @Relationship(inverse: \Book.author, deleteRule: .cascade) var books: RelatedObjects<Book>
    }
}

/// `KitLibraryAuthors` with the same relationship names made many-to-many (a kind change:
/// only a custom stage can do it).
enum KitLibraryCoauthors: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Book.self, Author.self, KitLibrary.Cover.self, KitLibrary.Tag.self] }

    final class Book: ManagedObject {
        @Attribute var title = ""
        @Relationship var author: RelatedObjects<Author>
    }

    final class Author: ManagedObject {
        @Attribute var name = ""
        @Relationship(inverse: \Book.author) var books: RelatedObjects<Book>
    }
}

/// Many-to-many: `Book.tags` ↔ `Tag.books`.
enum KitLibraryTags: VersionedSchema {
    static let version = 2
    static var models: [ManagedObject.Type] { [Book.self, KitLibrary.Author.self, KitLibrary.Cover.self, Tag.self] }

    final class Book: ManagedObject {
        @Attribute var title = ""
        @Relationship(inverse: \Tag.books) var tags: RelatedObjects<Tag>
    }

    final class Tag: ManagedObject {
        @Attribute var label = ""
        @Relationship var books: RelatedObjects<Book>
    }
}

/// `KitLibraryTags` with `Tag` renamed `Label` (inferred from `originalEntityName`): the links stay.
enum KitLibraryLabels: VersionedSchema {
    static let version = 3
    static var models: [ManagedObject.Type] { [Book.self, KitLibrary.Author.self, KitLibrary.Cover.self, Label.self] }

    final class Book: ManagedObject {
        @Attribute var title = ""
        @Relationship(inverse: \Label.books) var tags: RelatedObjects<Label>
    }

    final class Label: ManagedObject {
        override class var originalEntityName: String? { "Tag" }
        @Attribute var label = ""
        @Relationship var books: RelatedObjects<Book>
    }
}
