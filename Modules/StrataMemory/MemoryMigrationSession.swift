import StrataStorage
import Synchronization

/// The opening "transaction" of an in-memory store: a copy of its state that migration steps and
/// custom stages change, which the open keeps only when everything succeeded.
final class MemoryMigrationSession: StoreMigrationSession {
    /// The working copy, shared with the stages' transaction engines.
    let working: MemoryWorkingState

    /// A session over a copy of `state`.
    init(state: MemoryState) {
        working = MemoryWorkingState(state)
    }

    func apply(_ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress) throws(StrataError)
    {
        try working.state.withLock { (state) throws(StrataError) in
            try state.migrate(plan, to: schema, progress: progress)
        }
    }

    func transactionEngine(for schema: StoreSchema) throws(StrataError) -> any StorageEngine {
        let layout = working.state.withLock { $0.schema }
        guard layout.entities == schema.entities, layout.joins == schema.joins else {
            throw .misuse(
                "a migration stage asked for an engine laid out as version \(schema.version), "
                    + "but the store is laid out as version \(layout.version)")
        }
        return MemoryTransactionEngine(working: working)
    }
}

/// A state being changed by an open, behind a lock so that engines over it are `Sendable`.
final class MemoryWorkingState: Sendable {
    /// The state.
    let state: Mutex<MemoryState>

    /// Holds `state`.
    init(_ state: MemoryState) {
        self.state = Mutex(state)
    }
}
