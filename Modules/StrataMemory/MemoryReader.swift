import StrataStorage

/// A read snapshot of an in-memory store: the state as it was when the reader was made.
///
/// Holding it costs nothing but the memory of the tree nodes later commits replace (the state is
/// a value made of persistent trees, which commits never change); it never blocks a writer.
final class MemoryReader: StoreReader {
    private var scan: MemoryScan?

    /// A reader of `state`.
    init(state: MemoryState) {
        scan = MemoryScan(state: state)
    }

    private func open() throws(StrataError) -> MemoryScan {
        guard let scan else { throw .misuse("this store reader was closed; make a new one") }
        return scan
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        let state = try open().state
        _ = try state.entity(entity)
        return state.tables[entity].rows[key].map { StoredRow(key: key, version: $0.version, values: $0.values) }
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        try open().rows(for: plan)
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        for row in try open().rows(for: plan) { try body(row) }
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        try open().count(entity: entity, filter: filter)
    }

    func expectedRowCount(for plan: FetchPlan) -> Int? {
        guard plan.filter == nil, let state = scan?.state, plan.entity >= 0, plan.entity < state.tables.count else {
            return nil
        }
        let count = state.tables[plan.entity].rows.count
        return FetchPlan.windowRange(count: count, offset: plan.offset, limit: plan.limit).count
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        let state = try open().state
        try state.checkJoin(join)
        return state.joins[join].linked(to: key, from: side)
    }

    func close() {
        scan = nil
    }
}
