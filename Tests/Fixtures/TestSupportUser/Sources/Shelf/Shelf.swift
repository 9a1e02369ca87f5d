import Foundation
import Strata

/// A book on a shelf: the user's model.
public final class Book: ManagedObject {
    override public class var entityName: String { "Book" }
    @Attribute(.unique) public var title = ""
    @Attribute public var copies: Int64 = 0
}

/// The user's service: adds copies of a book in one unit of work.
public struct Shelf: Sendable {
    public let container: PersistentContainer

    public init(engine: EngineConfiguration) throws {
        container = try PersistentContainer(schema: try Schema(version: 1, [Book.self]), engine: engine)
    }

    /// Adds `count` copies of `title`, creating the book the first time.
    public func add(_ count: Int64, of title: String) async throws {
        try await container.performUnitOfWork { context in
            let book =
                try context.fetch(FetchRequest<Book>(predicate: #Predicate { $0.title == title })).first
                ?? Book(context: context)
            book.title = title
            book.copies += count
            try context.save()
        }
    }

    /// The copies of `title` on the shelf (0 when there is no such book).
    public func copies(of title: String) async throws -> Int64 {
        try await container.performUnitOfWork { context in
            try context.fetch(FetchRequest<Book>(predicate: #Predicate { $0.title == title })).first?.copies ?? 0
        }
    }
}
