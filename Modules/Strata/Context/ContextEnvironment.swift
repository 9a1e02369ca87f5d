import Foundation
import StrataStorage

/// What every context of one container shares: the store, the schema, the event hook, the
/// unit-of-work gate, the history hub and the store's identifier.
///
/// A container makes one and hands the same instance to each context it makes, so that a fresh
/// context takes one reference instead of copying the schema (a struct of a dozen references)
/// and retaining each of the others, and lets go of one reference when it is freed. Making and
/// freeing a context is the fixed cost of the context-per-operation pattern.
final class ContextEnvironment: Sendable {
    let engine: any StorageEngine
    let schema: Schema
    /// The container's event hook; nil (the usual case) reports nothing.
    let instrumentation: Instrumentation?
    /// Where `performUnitOfWork` attempts of the container enter; nil for a context of no
    /// container (its units of work are not ordered).
    let unitOfWorkGate: UnitOfWorkGate?
    /// Where saves record their history; nil for contexts that record none.
    let changeHub: ChangeHub?
    /// The store's UUID, read from the engine once.
    let storeIdentifier: UUID

    init(
        engine: any StorageEngine, schema: Schema, instrumentation: Instrumentation?,
        unitOfWorkGate: UnitOfWorkGate?, changeHub: ChangeHub?
    ) {
        self.engine = engine
        self.schema = schema
        self.instrumentation = instrumentation
        self.unitOfWorkGate = unitOfWorkGate
        self.changeHub = changeHub
        self.storeIdentifier = engine.storeIdentifier
    }
}
