import Dispatch
import Foundation
public import Ledger
public import Strata
import Synchronization

/// The article's anti-pattern, kept here on purpose so the two can be measured side by side.
/// Do not copy it.
///
/// A `@MainActor` service with one long-lived context that every call reuses, used the way a
/// `viewContext` is: synchronously, from the main actor. Strata never runs a context on the
/// main thread, so the nearest equivalent is to hold the main actor until the shared context
/// has finished the work (`performAndWait`). For the main actor the effect is the same as
/// doing the work on it: nothing else runs there, the heartbeat included, until the whole unit
/// of work is done. Mapping and sorting the results also happen on the main actor.
@MainActor
public final class MainActorLedger {
    private let context: ObjectContext

    /// A service over one shared context of `container`.
    public init(container: PersistentContainer) {
        context = container.newBackgroundContext(named: "shared")
    }

    /// The same work as `TransactionService.transfer`, on the shared context.
    public func transfer(from sourceURI: String, to targetURI: String, amount: Int64, note: String) throws {
        try performAndWait { context in
            let source = try Self.account(sourceURI, in: context)
            let target = try Self.account(targetURI, in: context)
            for (account, delta) in [(source, -amount), (target, amount)] {
                let transaction = Transaction(context: context)
                transaction.amount = delta
                transaction.note = note
                try account.post(transaction)
            }
            try context.save()
        }
    }

    /// The same work as `TransactionService.transactions(for:)`: the article's fetch, run again
    /// every time, as a screen's fetch is each time it loads. (Reading the account's relationship
    /// instead would, after the first call, answer from the shared context's objects without
    /// reading the store, and the two variants would no longer do the same work.)
    public func transactions(for accountURI: String) throws -> [TransactionRecord] {
        let records = try performAndWait { context in
            let accountID = try Self.account(accountURI, in: context).objectID
            let request = FetchRequest<Transaction>(predicate: #Predicate { $0.$account == accountID })
            return try context.fetch(request).map {
                TransactionRecord(
                    id: $0.objectID.uriString, accountID: accountURI, amount: $0.amount, note: $0.note, date: $0.date,
                    runningBalance: $0.runningBalance)
            }
        }
        return records.sorted { $0.date > $1.date }
    }

    /// Runs `body` on the shared context and keeps the main actor waiting until it is done.
    /// The account a URI string names (the service API takes URI strings).
    nonisolated private static func account(_ uri: String, in context: ObjectContext) throws -> Account {
        guard let url = URL(string: uri) else { throw StrataError.invalidURI(uri, reason: .malformed) }
        return try context.existingObject(with: context.managedObjectID(forURIRepresentation: url), as: Account.self)
    }

    private func performAndWait<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> T) throws -> T {
        let context = self.context
        let handoff = Handoff<T>()
        Task.detached {
            do {
                handoff.finish(.success(try await context.perform { try body(context) }))
            } catch {
                handoff.finish(.failure(error))
            }
        }
        return try handoff.wait()
    }
}

/// A result handed from a task to a thread that blocks for it.
private final class Handoff<T: Sendable>: Sendable {
    private let result = Mutex<Result<T, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ outcome: Result<T, any Error>) {
        result.withLock { $0 = outcome }
        done.signal()
    }

    func wait() throws -> T {
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
