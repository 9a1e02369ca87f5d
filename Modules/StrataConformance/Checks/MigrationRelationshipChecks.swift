import Foundation
import Strata

/// Inferred relationship changes on a library store made by `KitLibrary` (books, authors,
/// covers and tags, unrelated): each kind is added (rows kept, links saved and read back),
/// then removed (rows kept, and the links gone for good); an entity renamed through
/// `originalEntityName` keeps its many-to-many links.
enum MigrationRelationshipChecks {
    static let all: [ConformanceCheck] = [
        MigrationAttributeChecks.check("a one-to-one relationship is added, then removed", oneToOne),
        MigrationAttributeChecks.check("a one-to-many relationship is added, then removed", oneToMany),
        MigrationAttributeChecks.check("a many-to-many relationship is added, then removed", manyToMany),
        MigrationAttributeChecks.check("an entity renamed through originalEntityName keeps its links", renameLinked),
    ]

    /// Makes the main store with `KitLibrary` at `version`: books Dune and Emma, authors
    /// Herbert and Austen, covers red and blue, tags classic and scifi.
    static func seedLibrary(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.with(kit, KitLibrary.schema()) { container in
            try await container.performUnitOfWork { context in
                for title in ["Dune", "Emma"] { KitLibrary.Book(context: context).title = title }
                for name in ["Herbert", "Austen"] { KitLibrary.Author(context: context).name = name }
                for color in ["red", "blue"] { KitLibrary.Cover(context: context).color = color }
                for label in ["classic", "scifi"] { KitLibrary.Tag(context: context).label = label }
                try context.save()
            }
        }
    }

    /// Every row of the library at `version` with `KitLibrary`'s shape, after saving one more
    /// of each entity (so that every table still takes writes).
    static func libraryRows(_ kit: ConformanceHarness, version: Int) async throws -> [String] {
        try await MigrationChecks.with(kit, MigrationModels.schema(KitLibrary.self, version: version)) { container in
            try await container.performUnitOfWork { context in
                KitLibrary.Book(context: context).title = "Ubik"
                KitLibrary.Author(context: context).name = "Dick"
                KitLibrary.Cover(context: context).color = "green"
                KitLibrary.Tag(context: context).label = "new"
                try context.save()
            }
            return try await container.read { context in
                let books = try context.fetch(FetchRequest<KitLibrary.Book>()).map(\.title).sorted()
                let authors = try context.fetch(FetchRequest<KitLibrary.Author>()).map(\.name).sorted()
                let covers = try context.fetch(FetchRequest<KitLibrary.Cover>()).map(\.color).sorted()
                let tags = try context.fetch(FetchRequest<KitLibrary.Tag>()).map(\.label).sorted()
                return books + authors + covers + tags
            }
        }
    }

    static let rowsAfterRemoval = [
        "Dune", "Emma", "Ubik", "Austen", "Dick", "Herbert", "blue", "green", "red", "classic", "new", "scifi",
    ]

    static func oneToOne(_ kit: ConformanceHarness) async throws {
        try await seedLibrary(kit)
        typealias Book = KitLibraryCovers.Book
        typealias Cover = KitLibraryCovers.Cover
        try await MigrationChecks.with(kit, KitLibraryCovers.schema()) { container in
            let unlinked = try await container.read { context in
                try context.count(for: FetchRequest<Book>(predicate: #Predicate { $0.$cover == nil }))
            }
            try kit.expectEqual(unlinked, 2, "books without a cover after the migration")
            try await container.performUnitOfWork { context in
                let dune = try context.fetch(FetchRequest<Book>(predicate: #Predicate { $0.title == "Dune" }))
                let red = try context.fetch(FetchRequest<Cover>(predicate: #Predicate { $0.color == "red" }))
                dune.first?.cover = red.first
                try context.save()
            }
        }
        let links = try await MigrationChecks.with(kit, KitLibraryCovers.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<Cover>(sortBy: [SortDescriptor(\.color)])).map {
                    "\($0.color):\($0.book?.title ?? "nil")"
                }
            }
        }
        try kit.expectEqual(links, ["blue:nil", "red:Dune"], "covers and their books after reopening")
        try kit.expectEqual(
            try await libraryRows(kit, version: 3), rowsAfterRemoval, "rows once the relationship is removed")
        let readded = try MigrationModels.schema(KitLibraryCovers.self, version: 4)
        let covers = try await MigrationChecks.with(kit, readded) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<Book>()).compactMap { $0.cover?.color }
            }
        }
        try kit.expectEqual(covers, [], "covers once the relationship is added again: the old links are gone")
    }

    static func oneToMany(_ kit: ConformanceHarness) async throws {
        try await seedLibrary(kit)
        typealias Book = KitLibraryAuthors.Book
        typealias Author = KitLibraryAuthors.Author
        try await MigrationChecks.with(kit, KitLibraryAuthors.schema()) { container in
            try await container.performUnitOfWork { context in
                let books = try context.fetch(FetchRequest<Book>(sortBy: [SortDescriptor(\.title)]))
                let authors = try context.fetch(FetchRequest<Author>(sortBy: [SortDescriptor(\.name)]))
                guard books.count == 2, authors.count == 2 else { return }
                books[0].author = authors[1] // Dune → Herbert
                books[1].author = authors[0] // Emma → Austen
                let more = Book(context: context)
                more.title = "Children of Dune"
                more.author = authors[1]
                try context.save()
            }
        }
        let (herbert, byKey) = try await MigrationChecks.with(kit, KitLibraryAuthors.schema()) { container in
            try await container.read { context in
                let herbert = try context.fetch(FetchRequest<Author>(predicate: #Predicate { $0.name == "Herbert" }))
                guard let author = herbert.first else { return ([String](), [String]()) }
                let id = author.objectID
                let byKey = try context.fetch(
                    FetchRequest<Book>(predicate: #Predicate { $0.$author == id }, sortBy: [SortDescriptor(\.title)]))
                return (author.books.map(\.title).sorted(), byKey.map(\.title))
            }
        }
        try kit.expectEqual(herbert, ["Children of Dune", "Dune"], "Herbert's books after reopening")
        try kit.expectEqual(byKey, ["Children of Dune", "Dune"], "books fetched by their author key")
        var expected = rowsAfterRemoval
        expected.insert("Children of Dune", at: 0)
        try kit.expectEqual(try await libraryRows(kit, version: 3), expected, "rows once the relationship is removed")
        let readded = try MigrationModels.schema(KitLibraryAuthors.self, version: 4)
        let linked = try await MigrationChecks.with(kit, readded) { container in
            try await container.read { context in
                try context.count(for: FetchRequest<Book>(predicate: #Predicate { $0.$author != nil }))
            }
        }
        try kit.expectEqual(linked, 0, "books with an author once the relationship is added again")
    }

    /// Links Dune to classic and scifi, Emma to classic, in a `KitLibraryTags`-shaped store.
    static func tagBooks(_ container: PersistentContainer) async throws {
        try await container.performUnitOfWork { context in
            let books = try context.fetch(FetchRequest<KitLibraryTags.Book>(sortBy: [SortDescriptor(\.title)]))
            let tags = try context.fetch(FetchRequest<KitLibraryTags.Tag>(sortBy: [SortDescriptor(\.label)]))
            guard books.count == 2, tags.count == 2 else { return }
            books[0].tags.formUnion(tags)
            books[1].tags.insert(tags[0])
            try context.save()
        }
    }

    static func manyToMany(_ kit: ConformanceHarness) async throws {
        try await seedLibrary(kit)
        typealias Tag = KitLibraryTags.Tag
        try await MigrationChecks.with(kit, KitLibraryTags.schema()) { try await tagBooks($0) }
        let links = try await MigrationChecks.with(kit, KitLibraryTags.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<Tag>(sortBy: [SortDescriptor(\.label)])).map {
                    "\($0.label):" + $0.books.map(\.title).sorted().joined(separator: ",")
                }
            }
        }
        try kit.expectEqual(links, ["classic:Dune,Emma", "scifi:Dune"], "tags and their books after reopening")
        try kit.expectEqual(
            try await libraryRows(kit, version: 3), rowsAfterRemoval, "rows once the relationship is removed")
        let readded = try MigrationModels.schema(KitLibraryTags.self, version: 4)
        let tagged = try await MigrationChecks.with(kit, readded) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<Tag>()).reduce(0) { $0 + $1.books.count }
            }
        }
        try kit.expectEqual(tagged, 0, "links once the relationship is added again: the old links are gone")
    }

    /// The store starts with the many-to-many relationship (made at version 2, not migrated to
    /// it), so that only the rename is inferred.
    static func renameLinked(_ kit: ConformanceHarness) async throws {
        try await MigrationChecks.with(kit, KitLibraryTags.schema()) { container in
            try await container.performUnitOfWork { context in
                for title in ["Dune", "Emma"] { KitLibraryTags.Book(context: context).title = title }
                for label in ["classic", "scifi"] { KitLibraryTags.Tag(context: context).label = label }
                try context.save()
            }
            try await tagBooks(container)
        }
        typealias Label = KitLibraryLabels.Label
        typealias Book = KitLibraryLabels.Book
        try await MigrationChecks.with(kit, KitLibraryLabels.schema()) { container in
            let (labels, books) = try await container.read { context in
                let labels = try context.fetch(FetchRequest<Label>(sortBy: [SortDescriptor(\.label)])).map {
                    "\($0.label):" + $0.books.map(\.title).sorted().joined(separator: ",")
                }
                let books = try context.fetch(FetchRequest<Book>(sortBy: [SortDescriptor(\.title)])).map {
                    "\($0.title):" + $0.tags.map(\.label).sorted().joined(separator: ",")
                }
                return (labels, books)
            }
            try kit.expectEqual(labels, ["classic:Dune,Emma", "scifi:Dune"], "labels and their books after renaming")
            try kit.expectEqual(books, ["Dune:classic,scifi", "Emma:classic"], "books and their labels after renaming")
            try await container.performUnitOfWork { context in
                let emma = try context.fetch(FetchRequest<Book>(predicate: #Predicate { $0.title == "Emma" }))
                let label = Label(context: context)
                label.label = "romance"
                emma.first?.tags.insert(label)
                try context.save()
            }
        }
        let emma = try await MigrationChecks.with(kit, KitLibraryLabels.schema()) { container in
            try await container.read { context in
                try context.fetch(FetchRequest<Book>(predicate: #Predicate { $0.title == "Emma" })).flatMap {
                    $0.tags.map(\.label)
                }.sorted()
            }
        }
        try kit.expectEqual(emma, ["classic", "romance"], "Emma's labels after reopening")
    }
}
