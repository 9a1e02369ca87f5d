import StrataStorage
import Synchronization

/// The entities a context read from the store, recorded while a query observation evaluates
/// its closure: only commits touching one of them can change the result.
final class ReadRegion: Sendable {
    private let entities = Mutex<Set<Int>>([])

    func note(_ entity: Int) {
        entities.withLock { _ = $0.insert(entity) }
    }

    /// The names of the entities read, by the schema's numbering.
    func entityNames(in schema: Schema) -> Set<String> {
        let numbers = entities.withLock { $0 }
        return Set(numbers.compactMap { $0 < schema.models.count ? schema.models[$0].name : nil })
    }
}

/// A store reader that records the entities it reads into a ``ReadRegion`` and forwards
/// everything to the engine's reader.
final class RegionRecordingReader: StoreReader {
    private let base: any StoreReader
    private let region: ReadRegion
    private let joins: [JoinSchema]

    init(_ base: any StoreReader, region: ReadRegion, joins: [JoinSchema]) {
        self.base = base
        self.region = region
        self.joins = joins
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        region.note(entity)
        return try base.row(entity: entity, key: key)
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        region.note(plan.entity)
        return try base.rows(for: plan)
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        region.note(plan.entity)
        try base.forEachRow(for: plan, body)
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        region.note(entity)
        return try base.count(entity: entity, filter: filter)
    }

    func expectedRowCount(for plan: FetchPlan) -> Int? {
        base.expectedRowCount(for: plan)
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        if join >= 0 && join < joins.count {
            region.note(joins[join].leftEntity)
            region.note(joins[join].rightEntity)
        }
        return try base.linkedKeys(join: join, from: side, key: key)
    }

    func forEachLink(join: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void) throws {
        if join >= 0 && join < joins.count {
            region.note(joins[join].leftEntity)
            region.note(joins[join].rightEntity)
        }
        try base.forEachLink(join: join, from: side, keys: keys, body)
    }

    func close() {
        base.close()
    }
}
