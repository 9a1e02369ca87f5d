import CSQLite
import Foundation
import Strata
import StrataStorage
import StrataTestSupport
import Testing

/// A save that fails at its Nth row write (inside the engine's transaction), for N = 1, 2, …
/// until the save succeeds: every failure leaves the store as it was, the context keeps its
/// unsaved changes, and the next save succeeds.
@Suite("failed-save hygiene")
struct FailedSaveTests {
    /// Everything the store holds, as comparable text.
    static func storeContents(_ container: PersistentContainer) async throws -> [String] {
        let context = container.newBackgroundContext()
        return try await context.perform {
            let accounts = try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map {
                """
                account \($0.name) \($0.balance) \($0.note ?? "nil") entries=\($0.entries.map(\.memo).sorted()) \
                tags=\($0.tags.map(\.label).sorted())
                """
            }
            let entries = try context.fetch(FetchRequest<Entry>(sortBy: [SortDescriptor(\.memo)])).map {
                "entry \($0.memo) \($0.amount) \($0.account?.name ?? "none")"
            }
            let tags = try context.fetch(FetchRequest<Tag>(sortBy: [SortDescriptor(\.label)])).map {
                "tag \($0.label) \($0.accounts.count)"
            }
            return accounts + entries + tags
        }
    }

    static func seed(_ container: PersistentContainer) async throws {
        try await container.performUnitOfWork { context in
            for name in ["A", "B", "C"] {
                let account = Account(context: context)
                account.name = name
                account.balance = 100
            }
            let accounts = try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)]))
            for memo in ["a1", "a2"] {
                let entry = Entry(context: context)
                entry.memo = memo
                entry.amount = 10
                entry.account = accounts[0]
            }
            let tag = Tag(context: context)
            tag.label = "t"
            try context.save()
        }
    }

    /// The unit of work whose save is failed: inserts, updates, a move, a delete and a link.
    static func mutate(_ context: ObjectContext) throws {
        let accounts = try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)]))
        let (a, b, c) = (accounts[0], accounts[1], accounts[2])
        let d = Account(context: context)
        d.name = "D"
        for memo in ["d1", "d2"] {
            let entry = Entry(context: context)
            entry.memo = memo
            entry.amount = 5
            d.entries.insert(entry)
        }
        a.balance -= 30
        b.note = "moved into"
        if let moved = a.entries.allObjects.first(where: { $0.memo == "a1" }) { b.entries.insert(moved) }
        context.delete(c)
        try context.fetch(FetchRequest<Tag>()).first?.accounts.insert(d)
    }

    @Test(
        "a save failing at its Nth write leaves no trace, keeps the context's changes, and saves next time",
        arguments: EngineKind.allCases)
    func failAtEveryWrite(kind: EngineKind) async throws {
        // The expected outcome, from a run without faults.
        let reference = try TestStore(kind)
        let referenceContainer = try reference.open()
        try await Self.seed(referenceContainer)
        try await referenceContainer.performUnitOfWork { context in
            try Self.mutate(context)
            try context.save()
        }
        let expected = try await Self.storeContents(referenceContainer)

        var failures = 0
        for n in 1...100 {
            let store = try TestStore(kind)
            let faults = FaultController()
            let container = try store.open(schema: TestModels.schema, faults: faults)
            try await Self.seed(container)
            let before = try await Self.storeContents(container)
            faults.failWrite(n)
            let context = container.newBackgroundContext()
            let outcome: (failed: Bool, pending: [Int], temporary: Int) = try await context.perform {
                try Self.mutate(context)
                do {
                    try context.save()
                    return (false, [], 0)
                } catch StrataError.io {
                    let pending = [
                        context.insertedObjects.count, context.updatedObjects.count, context.deletedObjects.count,
                    ]
                    return (true, pending, context.insertedObjects.filter(\.objectID.isTemporary).count)
                }
            }
            if !outcome.failed {
                #expect(faults.injectedFailures == 0, "N=\(n): the fault fired but the save reported success")
                #expect(
                    try await Self.storeContents(container) == expected,
                    "N=\(n): the unfaulted save stored the wrong result")
                break
            }
            failures += 1
            #expect(try await Self.storeContents(container) == before, "N=\(n): the failed save changed the store")
            #expect(outcome.pending == [3, 4, 1], "N=\(n): the context lost its unsaved changes: \(outcome.pending)")
            #expect(outcome.temporary == 0, "N=\(n): unsaved objects should keep the permanent IDs reserved for them")
            try Self.checkIntegrity(kind: kind, store: store, container: container)
            // The fault is spent: the same context saves its changes now.
            try await context.perform { try context.save() }
            #expect(
                try await Self.storeContents(container) == expected, "N=\(n): the retried save stored the wrong result")
        }
        print("failed-save hygiene \(kind): \(failures) injected write failures, each rolled back")
        #expect(failures >= 8, "the unit of work should have at least 8 row writes to fail; failed \(failures)")
    }

    @Test("a commit that fails before writing leaves no trace", arguments: EngineKind.allCases)
    func failWholeCommit(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let faults = FaultController()
        let container = try store.open(schema: TestModels.schema, faults: faults)
        try await Self.seed(container)
        let before = try await Self.storeContents(container)
        faults.failCommit()
        await #expect(throws: StrataError.io("injected fault: commit #2 failed before writing anything")) {
            try await container.performUnitOfWork { context in
                try Self.mutate(context)
                try context.save()
            }
        }
        #expect(try await Self.storeContents(container) == before)
        #expect(faults.injectedFailures == 1)
    }

    /// SQLite's integrity check, or a full scan of every entity through a second engine (LMDB
    /// verifies every row's checksum on read; PostgreSQL's and the in-memory engine's rows must
    /// all read and count alike).
    static func checkIntegrity(kind: EngineKind, store: TestStore, container: PersistentContainer) throws {
        switch kind {
        case .sqlite:
            var db: OpaquePointer?
            defer { sqlite3_close(db) }
            try #require(
                sqlite3_open_v2(store.configuration.location.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            try #require(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK)
            try #require(sqlite3_step(statement) == SQLITE_ROW)
            #expect(String(cString: sqlite3_column_text(statement, 0)) == "ok")
        case .lmdb, .postgres, .memory:
            let schema = TestModels.schema.storeSchema
            let engine = try store.configuration.open(schema)
            defer { engine.close() }
            let reader = try engine.makeReader()
            defer { reader.close() }
            for entity in schema.entities {
                let rows = try reader.rows(for: FetchPlan(entity: entity.number))
                #expect(rows.count == (try reader.count(entity: entity.number, filter: nil)))
            }
        }
    }
}
