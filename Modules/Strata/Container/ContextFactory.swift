import StrataStorage

/// Something that hands out fresh background contexts: what domain services depend on.
///
/// Services take a `ContextFactory`, never an engine or a container type, so the same
/// service code runs on every engine and in tests.
///
/// ```swift
/// struct AccountService {
///     let contexts: any ContextFactory
///
///     func rename(_ id: ObjectID, to name: String) async throws {
///         let context = contexts.newBackgroundContext()
///         try await context.perform {
///             try context.existingObject(with: id, as: Account.self).name = name
///             try context.save()
///         }
///     }
/// }
/// ```
public protocol ContextFactory: Sendable {
    /// A new, empty context with its own serial queue. Make one per unit of work.
    func newBackgroundContext() -> ObjectContext
}
