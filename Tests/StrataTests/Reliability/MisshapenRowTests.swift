import Foundation
import Strata
import Testing

/// An engine that breaks the contract by returning rows of the wrong length gets a typed error
/// from every path that turns rows into objects, never an object that reads past its values.
@Suite("misshapen rows")
struct MisshapenRowTests {
    @Test("rows one value short or long give storeCorrupt from streamed and in-memory fetches and from lookups", arguments: EngineKind.allCases)
    func misshapenRows(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let ids = try await Self.seed(store.open())
        for change in [-1, 1] {
            let container = try PersistentContainer(schema: TestModels.schema, engine: .misshaping(store.configuration, by: change))
            let context = container.newBackgroundContext()
            let errors = try await context.perform {
                var errors: [String] = []
                func expectCorrupt(_ what: String, _ body: () throws -> Void) {
                    do {
                        try body()
                        errors.append("\(what): no error")
                    } catch StrataError.storeCorrupt {
                    } catch {
                        errors.append("\(what): \(error)")
                    }
                }
                expectCorrupt("lookup") { _ = try context.existingObject(with: ids.entry, as: Entry.self) }
                expectCorrupt("fetch") { _ = try context.fetch(FetchRequest<Account>()) }
                // With an unsaved entry, a fetch of entries merges the store's rows with it in memory.
                Entry(context: context).memo = "unsaved"
                expectCorrupt("fetch merged with unsaved objects") { _ = try context.fetch(FetchRequest<Entry>()) }
                return errors
            }
            #expect(errors.isEmpty, "\(kind), rows \(change > 0 ? "one value long" : "one value short"): \(errors)")
        }
    }

    static func seed(_ container: PersistentContainer) async throws -> (account: ObjectID, entry: ObjectID) {
        let context = container.newBackgroundContext()
        return try await context.perform {
            let account = Account(context: context)
            account.name = "Checking"
            let entry = Entry(context: context)
            entry.memo = "a memo long enough for the heap"
            entry.account = account
            try context.save()
            return (account.objectID, entry.objectID)
        }
    }
}

extension EngineConfiguration {
    /// `base`, with every row its readers return made `change` values longer (negative: shorter).
    fileprivate static func misshaping(_ base: EngineConfiguration, by change: Int) -> EngineConfiguration {
        EngineConfiguration(name: "\(base.name)+misshapen", location: base.location) { schema in
            MisshapingEngine(base: try base.open(schema), change: change)
        }
    }
}

private final class MisshapingEngine: StorageEngine {
    let base: any StorageEngine
    let change: Int

    init(base: any StorageEngine, change: Int) {
        self.base = base
        self.change = change
    }

    var storeIdentifier: UUID { base.storeIdentifier }
    var schemaVersion: Int { base.schemaVersion }
    func makeReader() throws -> any StoreReader { MisshapingReader(base: try base.makeReader(), change: change) }
    func commit(_ changes: ChangeSet) throws { try base.commit(changes) }
    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> { try base.allocateKeys(entity: entity, count: count) }
    func close() { base.close() }
}

private final class MisshapingReader: StoreReader {
    let base: any StoreReader
    let change: Int

    init(base: any StoreReader, change: Int) {
        self.base = base
        self.change = change
    }

    func misshape(_ row: StoredRow) -> StoredRow {
        var row = row
        if change < 0 { row.values.removeLast(min(-change, row.values.count)) }
        if change > 0 { row.values.append(contentsOf: repeatElement(.integer(7), count: change)) }
        return row
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? { try base.row(entity: entity, key: key).map(misshape) }
    func rows(for plan: FetchPlan) throws -> [StoredRow] { try base.rows(for: plan).map(misshape) }
    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        try base.forEachRow(for: plan) { try body(misshape($0)) }
    }
    func count(entity: Int, filter: Filter?) throws -> Int { try base.count(entity: entity, filter: filter) }
    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        try base.linkedKeys(join: join, from: side, key: key)
    }
    func close() { base.close() }
}
