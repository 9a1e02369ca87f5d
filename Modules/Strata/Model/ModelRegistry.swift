import Foundation
import StrataStorage

/// The process-wide cache of entity models, one per model class.
///
/// Building a model builds every class its relationships reach, resolves their relationships
/// (`resolveRelations(of:pending:)`, in `ModelRegistry+Relations.swift`) and only then
/// publishes them all, so that no published model has an unresolved relationship.
enum ModelRegistry {
    /// The registry's tables, guarded by one recursive lock (building a model evaluates key
    /// paths on prototypes, which asks the registry again).
    private final class Tables: @unchecked Sendable {
        let lock = NSRecursiveLock()
        /// Published models; never removed (``ModelReference`` relies on it).
        var models: [ObjectIdentifier: EntityModel] = [:]
        /// Models being built (published or not), so prototypes can reach related prototypes.
        var building: [ObjectIdentifier: EntityModel] = [:]
    }

    private static let tables = Tables()
    private static var lock: NSRecursiveLock { tables.lock }
    /// Read and written only under ``lock``.
    private static var models: [ObjectIdentifier: EntityModel] {
        get { tables.models }
        _modify { yield &tables.models }
    }
    /// Read and written only under ``lock``.
    private static var building: [ObjectIdentifier: EntityModel] {
        get { tables.building }
        _modify { yield &tables.building }
        set { tables.building = newValue }
    }

    /// The prototype of a related class, for evaluating key paths that go through a to-one
    /// relationship on a prototype. Nil when the class has no model yet.
    static func prototype(for type: ManagedObject.Type) -> ManagedObject? {
        withLock { (models[ObjectIdentifier(type)] ?? building[ObjectIdentifier(type)])?.prototype }
    }

    static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// The published model for a class, building it (and every class its relationships
    /// reach) on first use.
    static func model(for type: ManagedObject.Type) throws(StrataError) -> EntityModel {
        do {
            return try withLock {
                if let model = models[ObjectIdentifier(type)] { return model }
                var pending: [EntityModel] = []
                defer { building = [:] }
                let model = try build(type, pending: &pending)
                var index = 0
                while index < pending.count {
                    try resolveRelations(of: pending[index], pending: &pending)
                    index += 1
                }
                for candidate in pending {
                    candidate.markPublished()
                    models[ObjectIdentifier(candidate.type)] = candidate
                }
                return model
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw .invalidSchema(String(describing: error))
        }
    }

    /// The model of `type`: the published one, one already pending in this build, or a new one,
    /// which joins `pending` (its relationships still to be resolved). Under ``lock``.
    static func build(_ type: ManagedObject.Type, pending: inout [EntityModel]) throws -> EntityModel {
        if let model = models[ObjectIdentifier(type)] ?? pending.first(where: { $0.type == type }) { return model }
        let model = try EntityModel(type: type)
        pending.append(model)
        building[ObjectIdentifier(type)] = model
        return model
    }
}
