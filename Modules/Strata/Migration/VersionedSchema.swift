/// One version of a schema, frozen: its number and the model classes it had.
///
/// Keep each shipped version's classes, unchanged, in their own namespace, as SwiftData's
/// `VersionedSchema` does; a ``MigrationPlan`` lists them in order. A class that did not change
/// between two versions can be listed by both.
///
/// ```swift
/// enum LibraryV1: VersionedSchema {
///     static let version = 1
///     static var models: [ManagedObject.Type] { [Book.self] }
///
///     final class Book: ManagedObject {
///         @Attribute var title = ""
///     }
/// }
/// ```
///
/// Entity names come from the class names without their namespace (`LibraryV1.Book` is `Book`),
/// so each version's classes name the same entities.
public protocol VersionedSchema {
    /// The schema version: at least 1, and higher for each later version.
    static var version: Int { get }
    /// The model classes of this version.
    static var models: [ManagedObject.Type] { get }
}

extension VersionedSchema {
    /// The ``Schema`` of this version.
    ///
    /// ```swift
    /// let container = try PersistentContainer(schema: try LibraryV2.schema(), engine: .sqlite(at: url))
    /// ```
    /// - Throws: ``StrataStorage/StrataError/invalidSchema(_:)`` when the classes cannot form a schema.
    public static func schema() throws(StrataError) -> Schema {
        try Schema(version: version, models)
    }
}
