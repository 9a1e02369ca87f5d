import Foundation
import StrataStorage

/// A store opened from its recorded schema alone: what it records, the engine's schema built from
/// it, and the engine, open as a container opens it (with the store's own schema, so nothing is
/// migrated or recorded).
final class OpenedStore {
    let inspection: StoreInspection
    let record: StoreRecord
    let recorded: RecordedSchema
    let schema: StoreSchema
    let engine: any HistoryStore

    /// Opens the store `inspection` reaches.
    /// - Throws: ``ToolError/missingStore(_:)`` when nothing is there; ``ToolError/schemaUnreadable(_:)``
    ///   for a store without a usable recorded schema; the engine's errors as ``ToolError``s.
    init(_ inspection: StoreInspection) throws(ToolError) {
        self.inspection = inspection
        record = try Self.readRecord(inspection)
        guard let json = record.recordedJSON else {
            throw .schemaUnreadable(
                """
                the store records no schema (it was made before Strata recorded schemas): open it once with the \
                application that made it, which records it
                """)
        }
        do {
            recorded = try RecordedSchema(jsonText: json, path: inspection.location)
        } catch {
            throw .schemaUnreadable(error.description)
        }
        guard recorded.version == record.schemaVersion else {
            throw .schemaUnreadable(
                "the store is at version \(record.schemaVersion) but its recorded schema says \(recorded.version)")
        }
        schema = try recorded.storeSchema()
        let opened: any StorageEngine
        do {
            opened = try inspection.configuration.open(schema)
        } catch {
            throw ToolError.from(error)
        }
        guard let history = opened as? any HistoryStore else {
            opened.close()
            throw .storeFailed("the \(inspection.engineName) engine keeps no history, which the tool reads")
        }
        engine = history
    }

    deinit { engine.close() }

    /// The store's record, or the tool's error for a missing or foreign one.
    static func readRecord(_ inspection: StoreInspection) throws(ToolError) -> StoreRecord {
        let record: StoreRecord?
        do {
            record = try inspection.readRecord()
        } catch {
            throw ToolError.from(error)
        }
        guard let record else { throw .missingStore(inspection.location) }
        return record
    }

    /// Runs `body` with a reader of one snapshot, closed afterwards.
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try body(reader)
    }

    /// Every history transaction, oldest first, read in pages so memory holds one page at a time.
    func forEachHistoryTransaction(_ body: (HistoryTransaction) throws -> Void) throws {
        var after: Int64 = 0
        while true {
            let page = try engine.history(after: after, limit: 1000)
            for transaction in page { try body(transaction) }
            guard let last = page.last, page.count == 1000 else { return }
            after = last.token
        }
    }
}
