import StrataStorage

/// A commit's writes as a list of statements, sent to the server several at a time in one
/// round trip (libpq's pipeline mode) by ``PostgresEngine/run(_:session:)``, in order.
///
/// Each statement's parameters are made only when its pipeline is sent, so a commit of
/// 1,000,000 rows holds the encoded arrays of one pipeline at a time, not of the whole commit.
struct PostgresWritePlan {
    /// One statement and what its result must show.
    struct Step {
        let sql: String
        /// Makes the statement's parameters (binary arrays, built when the step is sent).
        let parameters: () -> [PGParameter]
        /// The rows the statement must affect; nil for any count (inserts, links, savepoints).
        let expectedRows: Int?
        /// The entity and the verb a short count's message names.
        let entity: String
        let verb: String
        /// The savepoint group (an index into ``groups``) the statement belongs to, if any.
        let group: Int?
    }

    /// An entity's batched updates under a savepoint: when a batch clashes on a unique index,
    /// they are rolled back to the savepoint and the rows updated one by one in the change
    /// set's order (``PostgresEngine/run(_:session:)``).
    struct UpdateGroup {
        let table: PostgresTableLayout
        let rows: [RowWrite]
        /// The index of the group's `RELEASE SAVEPOINT` step: the first step after it runs next.
        var release = 0
    }

    private(set) var steps: [Step] = []
    private(set) var groups: [UpdateGroup] = []
    /// The group the steps added now belong to.
    private var openGroup: Int?

    /// Adds a statement whose result must report `expectedRows` affected rows (nil: any).
    mutating func add(
        _ sql: String, expectedRows: Int? = nil, entity: String = "", verb: String = "",
        _ parameters: @escaping () -> [PGParameter] = { [] }
    ) {
        steps.append(
            Step(
                sql: sql, parameters: parameters, expectedRows: expectedRows, entity: entity, verb: verb,
                group: openGroup))
    }

    /// Adds `savepoint`'s statement, then the steps `body` adds, then its release, as one group
    /// that falls back to `rows` updated one by one.
    mutating func addUpdateGroup(
        savepoint: String, table: PostgresTableLayout, rows: [RowWrite], _ body: (inout PostgresWritePlan) -> Void
    ) {
        precondition(openGroup == nil, "update groups do not nest")
        groups.append(UpdateGroup(table: table, rows: rows))
        openGroup = groups.count - 1
        add("SAVEPOINT \(savepoint)")
        body(&self)
        add("RELEASE SAVEPOINT \(savepoint)")
        groups[groups.count - 1].release = steps.count - 1
        openGroup = nil
    }
}
