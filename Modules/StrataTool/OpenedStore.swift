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

    /// Refuses a store whose file structure is damaged (`StoreInspection.structuralProblems`), before
    /// anything reads it through its engine: reading a damaged LMDB page can stop the process.
    /// - Throws: ``ToolError/storeFailed(_:)`` naming the first problem; the errors of the check.
    static func requireSoundStructure(_ inspection: StoreInspection, _ doing: String) throws(ToolError) {
        let problems = try structuralProblems(inspection)
        guard let first = problems.first else { return }
        let more = problems.count > 1 ? ", and \(problems.count - 1) more" : ""
        throw .storeFailed(
            """
            \(inspection.location) has damaged pages (\(first)\(more)); nothing was \(doing). Run `strata verify` \
            on it for the list, and restore it from a backup
            """)
    }

    /// The problems of the store file's own structure (`StoreInspection.structuralProblems`),
    /// with the check's errors as the tool's.
    static func structuralProblems(_ inspection: StoreInspection) throws(ToolError) -> [String] {
        do {
            return try inspection.structuralProblems()
        } catch {
            throw ToolError.from(error)
        }
    }

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
        var limit = 1
        while true {
            let page = try engine.history(after: after, limit: limit)
            for transaction in page { try body(transaction) }
            guard let last = page.last, page.count == limit else { return }
            after = last.token
            limit = Self.nextPageSize(after: page)
        }
    }

    /// The most history changes a page of transactions is meant to hold in memory.
    static let changesPerPage = 50_000

    /// How many transactions to read next: about ``changesPerPage`` changes at the last page's
    /// size per transaction, from 1 to 1,000, so that a history of a few huge transactions (a
    /// batch import) is read one at a time and one of many small ones a thousand at a time.
    static func nextPageSize(after page: [HistoryTransaction]) -> Int {
        let changes = page.reduce(0) { $0 + max($1.changes.count, 1) }
        let perTransaction = max(changes / max(page.count, 1), 1)
        return min(max(changesPerPage / perTransaction, 1), 1_000)
    }
}
