import Foundation
import StrataStorage

/// Everything an in-memory store holds, as one value.
///
/// The store keeps the current state under its lock; a reader copies it (rows, lookups, unique
/// indexes and history are ``PersistentTree``s, whose nodes never change, so that costs a few
/// reference counts) and reads that snapshot for as long as it lives, whatever commits later. A
/// commit changes a copy, which copies only the paths to the entries it writes, and the store
/// swaps it in only when every check passed: that is the whole of atomicity and isolation here.
struct MemoryState: Sendable {
    /// The store's identifier, made when the store was created.
    let identifier: UUID
    /// The layout of ``tables`` and ``joins``: the schema the store was created or last migrated
    /// with. Its version is the store's schema version.
    var schema: StoreSchema
    /// The recorded schema, as JSON (``StrataStorage/RecordedSchema/jsonText()``); nil for a store
    /// made with a hand-built schema that records none.
    var recordedJSON: String?
    /// Grows with every migration: an engine opened before one refuses to read or write.
    var generation = 0
    /// The rows, one table per entity of ``schema``.
    var tables: [MemoryTable]
    /// Per entity, the last primary key handed out.
    var lastKeys: [Int64]
    /// The links, one per join of ``schema``.
    var joins: [MemoryJoin]
    /// The persistent history, by token.
    var history = PersistentTree<Int64, HistoryTransaction>()
    /// The last history token handed out (survives trimming).
    var lastToken: Int64 = 0
    /// Named history cursors.
    var cursors: [String: Int64] = [:]

    /// A new, empty store laid out as `schema`.
    /// - Throws: `.invalidSchema` when the recorded schema cannot be written as JSON.
    init(schema: StoreSchema) throws(StrataError) {
        identifier = UUID()
        self.schema = schema
        recordedJSON = try schema.recorded?.jsonText()
        tables = schema.entities.map(MemoryTable.init)
        lastKeys = Array(repeating: 0, count: schema.entities.count)
        joins = Array(repeating: MemoryJoin(), count: schema.joins.count)
    }

    /// The entity numbered `number`.
    /// - Throws: `.misuse` for a number the schema does not have.
    func entity(_ number: Int) throws(StrataError) -> EntitySchema {
        guard number >= 0, number < schema.entities.count else {
            throw .misuse("entity \(number) is not in the store schema (\(schema.entities.count) entities)")
        }
        return schema.entities[number]
    }

    /// Checks that the join numbered `number` exists.
    /// - Throws: `.misuse` for a number the schema does not have.
    func checkJoin(_ number: Int) throws(StrataError) {
        guard number >= 0, number < schema.joins.count else {
            throw .misuse("join \(number) is not in the store schema (\(schema.joins.count) joins)")
        }
    }

    /// Reserves `count` keys of entity `number`.
    /// - Throws: `.misuse` for an unknown entity or a negative count; `.storeFull` past `Int64.max`.
    mutating func allocateKeys(entity number: Int, count: Int) throws(StrataError) -> Range<Int64> {
        let entity = try entity(number)
        guard count >= 0 else {
            throw .misuse("cannot allocate \(count) keys of \(entity.name): the count is negative")
        }
        let last = lastKeys[number]
        let (end, overflow) = last.addingReportingOverflow(Int64(count))
        guard !overflow else {
            throw .storeFull("\(entity.name) has used every primary key up to \(Int64.max); no key is left")
        }
        lastKeys[number] = end
        return (last + 1)..<(end + 1)
    }
}
