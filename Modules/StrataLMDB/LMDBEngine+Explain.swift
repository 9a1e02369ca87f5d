import StrataStorage

/// The access path the LMDB planner chose for a fetch: the LMDB counterpart of SQLite's
/// `EXPLAIN QUERY PLAN`, so tests can check that a query uses an index instead of hoping so.
enum LMDBQueryPlan: Equatable, CustomStringConvertible {
    /// No row can match; nothing is read.
    case nothing
    /// A scan of the entity's rows with primary keys in `lower ... upper`.
    case keyScan(lower: Int64, upper: Int64)
    /// Range scans of these index databases (by name), in order; their keys' union is read.
    case indexScan(indexes: [String])

    var description: String {
        switch self {
        case .nothing: "nothing"
        case .keyScan(let lower, let upper): "scan keys \(lower)...\(upper)"
        case .indexScan(let indexes): "index scan of \(indexes.joined(separator: ", "))"
        }
    }
}

extension LMDBEngine {
    /// How a reader would find the candidate rows of `plan` now (internal; for tests): the
    /// candidate scans of a conjunction are raced in a snapshot, as a read races them.
    /// - Throws: `.misuse` for an entity number outside the schema; the snapshot's errors, as
    ///   `StrataError`s (a closed engine, an LMDB failure).
    func explain(_ plan: FetchPlan) throws -> LMDBQueryPlan {
        let entity = try entity(plan.entity)
        let chosen = try withSnapshot { txn in try LMDBFilterPlanner(entity: entity).plan(plan.filter, in: txn) }
        switch chosen {
        case .nothing: return .nothing
        case .scan(let lower, let upper): return .keyScan(lower: lower, upper: upper)
        case .indexes(let scans): return .indexScan(indexes: scans.map(\.index.name))
        }
    }
}
