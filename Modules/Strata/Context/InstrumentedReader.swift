import StrataStorage

/// A store reader that reports every call to an ``Instrumentation`` hook, with its duration, and
/// forwards it to the engine's reader. A context wraps its snapshot in one only when its
/// container has a hook, so a store without one reads through the engine's reader directly.
final class InstrumentedReader: StoreReader {
    private let base: any StoreReader
    private let hook: Instrumentation
    private let schema: Schema

    init(_ base: any StoreReader, hook: Instrumentation, schema: Schema) {
        self.base = base
        self.hook = hook
        self.schema = schema
    }

    private func name(_ entity: Int) -> String? {
        entity >= 0 && entity < schema.models.count ? schema.models[entity].name : nil
    }

    private func joinName(_ join: Int) -> String? {
        let joins = schema.storeSchema.joins
        return join >= 0 && join < joins.count ? joins[join].name : nil
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        try hook.timed(
            .lookup, entity: name(entity), count: { $0 == nil ? 0 : 1 },
            {
                try base.row(entity: entity, key: key)
            })
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        try hook.timed(.fetch, entity: name(plan.entity), count: { $0.count }, { try base.rows(for: plan) })
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        var rows = 0
        try hook.timed(
            .fetch, entity: name(plan.entity), count: { _ in rows },
            {
                try base.forEachRow(for: plan) { row in
                    rows += 1
                    try body(row)
                }
            })
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        try hook.timed(.count, entity: name(entity), count: { $0 }, { try base.count(entity: entity, filter: filter) })
    }

    func aggregate(_ plan: AggregatePlan) throws -> [AggregateRow] {
        try hook.timed(.aggregate, entity: name(plan.entity), count: { $0.count }, { try base.aggregate(plan) })
    }

    func expectedRowCount(for plan: FetchPlan) -> Int? {
        base.expectedRowCount(for: plan)
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        try hook.timed(
            .links, entity: joinName(join), count: { $0.count },
            {
                try base.linkedKeys(join: join, from: side, key: key)
            })
    }

    func forEachLink(join: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void) throws {
        var links = 0
        try hook.timed(
            .links, entity: joinName(join), count: { _ in links },
            {
                try base.forEachLink(join: join, from: side, keys: keys) { key, other in
                    links += 1
                    try body(key, other)
                }
            })
    }

    func close() {
        base.close()
    }
}
