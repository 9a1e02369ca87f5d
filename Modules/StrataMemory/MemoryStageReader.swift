import StrataStorage

/// The reader a migration stage's engine (``MemoryTransactionEngine``) hands out: it reads the
/// open's working state as it is at each call, so it sees the stage's own commits made after it,
/// as a reader inside the durable engines' migration transaction does; and it refuses every call
/// once it or the stage's engine is closed.
///
/// ```swift
/// let reader = try stageEngine.makeReader()
/// try stageEngine.commit(changes)
/// let rows = try reader.rows(for: FetchPlan(entity: 0))  // includes `changes`
/// ```
///
/// Lifetime rule: valid only inside the stage's closure, like the engine it came from.
final class MemoryStageReader: StoreReader {
    private let engine: MemoryTransactionEngine
    private var isClosed = false

    /// A reader of `engine`'s working state.
    init(engine: MemoryTransactionEngine) {
        self.engine = engine
    }

    /// A snapshot reader of the working state now.
    /// - Throws: `.misuse` once this reader or the stage's engine is closed.
    private func current() throws(StrataError) -> MemoryReader {
        if isClosed { throw .misuse("this store reader was closed; make a new one") }
        return MemoryReader(state: try engine.workingState())
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        try current().row(entity: entity, key: key)
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        try current().rows(for: plan)
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        try current().forEachRow(for: plan, body)
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        try current().count(entity: entity, filter: filter)
    }

    func expectedRowCount(for plan: FetchPlan) -> Int? {
        (try? current())?.expectedRowCount(for: plan)
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        try current().linkedKeys(join: join, from: side, key: key)
    }

    func close() {
        isClosed = true
    }
}
