import Foundation
import StrataStorage
import Synchronization

/// The engine a custom migration stage's closures get: it reads and writes the open's working
/// state, so its commits are kept only if the whole open succeeds. A failed commit changes
/// nothing (a commit works on a copy). It runs no set writes.
final class MemoryTransactionEngine: StorageEngine {
    private let working: MemoryWorkingState
    private let closed = Atomic<Bool>(false)
    let storeIdentifier: UUID
    let schemaVersion: Int

    init(working: MemoryWorkingState) {
        self.working = working
        (storeIdentifier, schemaVersion) = working.state.withLock { ($0.identifier, $0.schema.version) }
    }

    private func checkOpen() throws(StrataError) {
        if closed.load(ordering: .acquiring) {
            throw .misuse("this migration stage's engine was closed; use it only inside the stage's closure")
        }
    }

    /// A reader that reads the working state at each call, so it sees this stage's later
    /// commits (``MemoryStageReader``), and refuses once this engine is closed.
    func makeReader() throws -> any StoreReader {
        try checkOpen()
        return MemoryStageReader(engine: self)
    }

    /// The working state as it is now.
    /// - Throws: `.misuse` once this engine is closed.
    func workingState() throws(StrataError) -> MemoryState {
        try checkOpen()
        return working.state.withLock { $0 }
    }

    func commit(_ changes: ChangeSet) throws {
        try checkOpen()
        try working.state.withLock { (state) throws(StrataError) in _ = try state.commit(changes, setWrites: false) }
    }

    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        try checkOpen()
        return try working.state.withLock { (state) throws(StrataError) in
            try state.allocateKeys(entity: entity, count: count)
        }
    }

    func close() {
        closed.store(true, ordering: .releasing)
    }
}
