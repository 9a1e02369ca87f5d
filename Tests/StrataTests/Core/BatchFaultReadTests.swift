import Foundation
import Strata
import StrataTestSupport
import Testing

/// Batch faulting and prefetching read the store once per relationship for a whole fetch
/// result, where one fault per object reads it once per object. Counted at the engine's reader,
/// through the fault-injecting wrapper around the real engine (the conformance kit checks that
/// the members are the same).
@Suite("batch faulting: reads per relationship")
struct BatchFaultReadTests {
    static let accounts = 12

    /// Twelve accounts, each with two entries and linked to both of two tags.
    static func seed(_ container: PersistentContainer) async throws {
        try await container.performUnitOfWork { context in
            let tags = (0..<2).map { number -> Tag in
                let tag = Tag(context: context)
                tag.label = "t\(number)"
                return tag
            }
            for number in 0..<accounts {
                let account = Account(context: context)
                account.name = "a\(number)"
                for entryNumber in 0..<2 {
                    let entry = Entry(context: context)
                    entry.memo = "a\(number)e\(entryNumber)"
                    entry.account = account
                }
                for tag in tags { account.tags.insert(tag) }
            }
            try context.save()
        }
    }

    /// A seeded store of `kind`, and a container on it whose engine calls `faults` counts (the
    /// store is returned so that its files outlive the container).
    static func seededStore(
        _ kind: EngineKind
    ) async throws -> (TestStore, PersistentContainer, FaultController) {
        let store = try TestStore(kind)
        try await seed(store.open())
        let faults = FaultController()
        let container = try PersistentContainer(
            schema: TestModels.schema, engine: .faultInjecting(store.configuration, faults: faults))
        return (store, container, faults)
    }

    /// The engine reads `body` makes, and what it returns.
    static func reads<T: Sendable>(
        _ container: PersistentContainer, _ faults: FaultController,
        _ body: @escaping @Sendable (ObjectContext, () -> Int) throws -> T
    ) async throws -> T {
        let context = container.newBackgroundContext()
        return try await context.perform {
            let start = faults.storeCalls
            return try body(context) { faults.storeCalls - start }
        }
    }

    @Test(
        "faulting a to-many on one result of a fetch reads it for every result at once", arguments: EngineKind.allCases)
    func batchFault(kind: EngineKind) async throws {
        let (store, container, faults) = try await Self.seededStore(kind)
        defer { withExtendedLifetime(store) {} }
        let (afterFetch, afterFirst, afterAll, members) = try await Self.reads(container, faults) { context, reads in
            let accounts = try context.fetch(FetchRequest<Account>())
            let afterFetch = reads()
            _ = accounts[5].entries.count
            let afterFirst = reads()
            let members = accounts.reduce(0) { $0 + $1.entries.count + $1.tags.count }
            return (afterFetch, afterFirst, reads(), members)
        }
        // Every count includes the snapshot's start (`makeReader`).
        #expect(afterFetch == 2, "\(kind): the snapshot and the fetch")
        #expect(afterFirst == 3, "\(kind): the first entries fault reads every account's entries")
        // The tags: one pass over the join, then a lookup per tag not yet in the context (two).
        #expect(afterAll == 6, "\(kind): every other account's entries come loaded; the tags take three reads")
        #expect(members == Self.accounts * 4)
    }

    @Test(
        "with unsaved changes to the target, a fault reads its own object's members only, merged",
        arguments: EngineKind.allCases)
    func faultWithPendingChanges(kind: EngineKind) async throws {
        let (store, container, faults) = try await Self.seededStore(kind)
        defer { withExtendedLifetime(store) {} }
        let (faultReads, memos) = try await Self.reads(container, faults) { context, reads in
            let accounts = try context.fetch(FetchRequest<Account>())
            let a5 = try #require(accounts.first { $0.name == "a5" })
            let entry = Entry(context: context)
            entry.memo = "unsaved"
            entry.account = a5
            let before = reads()
            let memos = a5.entries.map(\.memo)
            return (reads() - before, memos)
        }
        // A batch would have to merge the unsaved entry owner by owner: one read per account.
        #expect(faultReads == 1, "\(kind): the faulted account's entries only")
        #expect(memos == ["a5e0", "a5e1", "unsaved"], "\(kind)")
    }

    @Test(
        "prefetching reads each relationship once; faulting objects one by one reads once per object",
        arguments: EngineKind.allCases)
    func prefetchAndOneByOne(kind: EngineKind) async throws {
        let (store, container, faults) = try await Self.seededStore(kind)
        defer { withExtendedLifetime(store) {} }
        let (prefetchReads, afterUse) = try await Self.reads(container, faults) { context, reads in
            let request = FetchRequest<Account>(relationshipKeyPathsForPrefetching: [\.entries, \.tags])
            let accounts = try context.fetch(request)
            let prefetchReads = reads()
            _ = accounts.reduce(0) { $0 + $1.entries.count + $1.tags.count }
            return (prefetchReads, reads())
        }
        #expect(prefetchReads == 6, "\(kind): the snapshot, the fetch, the entries, the join and the two tags")
        #expect(afterUse == 6, "\(kind): using them reads nothing more")
        let oneByOne = try await Self.reads(container, faults) { context, reads in
            let ids = try context.fetch(FetchRequest<Account>()).map(\.objectID)
            context.reset()
            let start = reads()
            for id in ids { _ = try context.existingObject(with: id, as: Account.self).entries.count }
            return reads() - start
        }
        #expect(oneByOne == 1 + Self.accounts * 2, "\(kind): a new snapshot, then a lookup and a fault per account")
    }
}
