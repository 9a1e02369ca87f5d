import Foundation
import Strata
import StrataTestSupport
import Testing

/// `count(for:)` inside a unit of work with unsaved changes: the store counts, and the context's
/// new objects are added when they are its only changes to the entity; stored rows it changed or
/// deleted send the count down the slow path. Either way the count is what the fetch returns.
@Suite("count with unsaved changes")
struct UnsavedCountTests {
    /// One kind of unsaved change made before the counts.
    enum Change: String, CaseIterable, Sendable {
        case inserts, insertsThenOneDeleted, insertsWithEntries, storedUpdated, storedDeleted, storedEntryMoved
    }

    /// The counts under test and what the fetch returns for the same requests.
    struct Counts: Equatable, CustomStringConvertible {
        var counted: [Int] = []
        var fetched: [Int] = []
        var description: String { "counted \(counted), fetched \(fetched)" }
    }

    @Test(
        "count agrees with the fetch under every kind of unsaved change",
        arguments: EngineKind.allCases, Change.allCases)
    func countAgreesWithFetch(kind: EngineKind, change: Change) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let accountID = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "stored"
            account.balance = 10
            for amount in [5, 15, 25] as [Int64] {
                let entry = Entry(context: context)
                entry.amount = amount
                entry.account = account
            }
            let other = Account(context: context)
            other.name = "other"
            other.balance = 50
            try context.save()
            return account.objectID
        }

        let counts = try await container.performUnitOfWork { context in
            let account = try context.existingObject(with: accountID, as: Account.self)
            switch change {
            case .inserts:
                for (name, balance) in [("new 1", 20), ("new 2", 5)] as [(String, Int64)] {
                    let new = Account(context: context)
                    new.name = name
                    new.balance = balance
                }
            case .insertsThenOneDeleted:
                let kept = Account(context: context)
                kept.name = "kept"
                kept.balance = 30
                let dropped = Account(context: context)
                dropped.name = "dropped"
                dropped.balance = 40
                context.delete(dropped)
            case .insertsWithEntries:
                for amount in [1, 35] as [Int64] {
                    let entry = Entry(context: context)
                    entry.amount = amount
                    entry.account = account
                }
            case .storedUpdated:
                account.balance = 100
                let entry = try context.fetch(FetchRequest<Entry>(predicate: #Predicate { $0.amount == 25 }))[0]
                entry.amount = 2
            case .storedDeleted:
                let entry = try context.fetch(FetchRequest<Entry>(predicate: #Predicate { $0.amount == 15 }))[0]
                context.delete(entry)
                let new = Account(context: context)
                new.name = "new"
                new.balance = 60
            case .storedEntryMoved:
                let other = try context.fetch(FetchRequest<Account>(predicate: #Predicate { $0.name == "other" }))[0]
                let entry = try context.fetch(FetchRequest<Entry>(predicate: #Predicate { $0.amount == 5 }))[0]
                entry.account = other
            }
            let accounts: [FetchRequest<Account>] = [
                FetchRequest(),
                FetchRequest(predicate: #Predicate { $0.balance > 12 }),
                FetchRequest(predicate: #Predicate { $0.balance > 12 }, fetchLimit: 1),
                FetchRequest(predicate: #Predicate { $0.balance >= 0 }, fetchOffset: 1),
            ]
            let entries: [FetchRequest<Entry>] = [
                FetchRequest(),
                FetchRequest(predicate: #Predicate { $0.$account == accountID }),
                FetchRequest(predicate: #Predicate { $0.$account == accountID && $0.amount > 10 }),
                FetchRequest(predicate: #Predicate { $0.amount < 10 }, fetchLimit: 2, fetchOffset: 1),
            ]
            var counts = Counts()
            for request in accounts {
                counts.counted.append(try context.count(for: request))
                counts.fetched.append(try context.fetch(request).count)
            }
            for request in entries {
                counts.counted.append(try context.count(for: request))
                counts.fetched.append(try context.fetch(request).count)
            }
            return counts
        }
        #expect(counts.counted == counts.fetched, "\(change): \(counts)")
        let expected: [Change: [Int]] = [
            // accounts: all, balance > 12, the same with limit 1, all but one; entries: all,
            // the stored account's, theirs above 10, below 10 after skipping one (at most two).
            .inserts: [4, 2, 1, 3, 3, 3, 2, 0],
            .insertsThenOneDeleted: [3, 2, 1, 2, 3, 3, 2, 0],
            .insertsWithEntries: [2, 1, 1, 1, 5, 5, 3, 1],
            .storedUpdated: [2, 2, 1, 1, 3, 3, 1, 1],
            .storedDeleted: [3, 2, 1, 2, 2, 2, 1, 0],
            .storedEntryMoved: [2, 1, 1, 1, 3, 2, 2, 0],
        ]
        #expect(counts.counted == expected[change], "\(change): \(counts)")
    }
}
