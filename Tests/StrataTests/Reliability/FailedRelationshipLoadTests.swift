import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A relationship read cannot throw, so a load that fails (here: the engine returns rows of the
/// wrong shape, as a damaged store does) must neither stop the process nor pass for an empty
/// relationship: the read answers empty, every later save of the body throws the load's error
/// and writes nothing, and the `perform` throws it even when the body returns.
@Suite("relationships that cannot be loaded")
struct FailedRelationshipLoadTests {
    @Test(
        "a to-many that cannot be loaded fails the save and the perform; the context works afterwards",
        arguments: EngineKind.allCases)
    func toMany(kind: EngineKind) async throws {
        let (store, ids) = try await Self.seeded(kind)
        let faults = FaultController()
        let container = try store.open(schema: TestModels.schema, faults: faults)
        let context = container.newBackgroundContext()
        let seen = Seen()
        let outcome: Result<Void, any Error> = await Result {
            try await context.perform {
                let account = try context.existingObject(with: ids.account, as: Account.self)
                account.note = "changed while its entries were unreadable"
                faults.misshapeRows(by: -1)
                let entries = account.entries.count
                let save: String
                do {
                    try context.save()
                    save = "saved"
                } catch StrataError.storeCorrupt {
                    save = "storeCorrupt"
                } catch {
                    save = "\(error)"
                }
                seen.note("\(entries) \(save)")
            }
        }
        faults.clear()
        // An unreadable relationship reads as empty, and the save after it throws the load's error.
        #expect(seen.value == "0 storeCorrupt", "\(kind)")
        #expect(Self.isStoreCorrupt(outcome), "\(kind): the perform whose body caught the save's error: \(outcome)")
        // The change made beside the failed read stays unsaveable in the context's next body...
        let later: Result<Void, any Error> = await Result { try await context.perform { try context.save() } }
        #expect(Self.isStoreCorrupt(later), "\(kind): a save in a later body, before a rollback: \(later)")
        // ...until a rollback discards it; nothing was written, and the relationship reads again.
        let after = try await context.perform {
            context.rollback()
            let account = try context.existingObject(with: ids.account, as: Account.self)
            return "\(account.entries.count) \(account.note ?? "nil")"
        }
        #expect(after == "1 nil", "\(kind)")
    }

    @Test("a to-one that cannot be loaded reads nil and fails the perform", arguments: EngineKind.allCases)
    func toOne(kind: EngineKind) async throws {
        let (store, ids) = try await Self.seeded(kind)
        let faults = FaultController()
        let container = try store.open(schema: TestModels.schema, faults: faults)
        let context = container.newBackgroundContext()
        let read = Seen()
        let outcome: Result<String, any Error> = await Result {
            try await context.perform {
                let entry = try context.existingObject(with: ids.entry, as: Entry.self)
                faults.misshapeRows(by: 1)
                read.note(entry.account?.name ?? "nil")
                return "returned"
            }
        }
        faults.clear()
        #expect(read.value == "nil", "\(kind)")
        #expect(Self.isStoreCorrupt(outcome), "\(kind): \(outcome)")
    }

    @Test(
        "a delete whose deny rule cannot read the relationship is refused, not applied",
        arguments: EngineKind.allCases)
    func denyRule(kind: EngineKind) async throws {
        let (store, ids) = try await Self.seeded(kind)
        let faults = FaultController()
        let container = try store.open(schema: TestModels.schema, faults: faults)
        let context = container.newBackgroundContext()
        let outcome: Result<Void, any Error> = await Result {
            try await context.perform {
                let account = try context.existingObject(with: ids.account, as: Account.self)
                faults.misshapeRows(by: -1)
                context.delete(account)
                try context.save()
            }
        }
        faults.clear()
        #expect(Self.isStoreCorrupt(outcome), "\(kind): \(outcome)")
        let stored = try await container.performUnitOfWork { [ids] fresh in
            try fresh.existingObject(with: ids.account, as: Account.self).entries.count
        }
        #expect(stored == 1, "\(kind): the account and its entry are still stored")
    }

    @Test(
        "a unit of work that throws a retryable error after its save committed is not run again",
        arguments: EngineKind.allCases)
    func noRetryAfterCommit(kind: EngineKind) async throws {
        let (store, ids) = try await Self.seeded(kind)
        let container = try store.open()
        let runs = Seen()
        let outcome: Result<Void, any Error> = await Result {
            try await container.performUnitOfWork { [ids] context in
                runs.note("\((Int(runs.value ?? "0") ?? 0) + 1)")
                try context.existingObject(with: ids.account, as: Account.self).balance += 10
                try context.save()
                // As a relationship read that meets a busy store after the save would end the body.
                throw StrataError.busy("a read after the save found the store busy")
            }
        }
        guard case .failure(StrataError.busy) = outcome else {
            Issue.record("\(kind): expected the busy error itself, got \(outcome)")
            return
        }
        let balance = try await container.performUnitOfWork { [ids] context in
            try context.existingObject(with: ids.account, as: Account.self).balance
        }
        #expect(runs.value == "1" && balance == 10, "\(kind): \(runs.value ?? "no") runs, balance \(balance)")
    }

    /// What a body saw, read after its `perform` threw.
    final class Seen: Sendable {
        private let state = Mutex<String?>(nil)
        func note(_ text: String) { state.withLock { $0 = text } }
        var value: String? { state.withLock { $0 } }
    }

    static func isStoreCorrupt<T>(_ outcome: Result<T, any Error>) -> Bool {
        if case .failure(StrataError.storeCorrupt) = outcome { return true }
        return false
    }

    /// A store with one account and one entry of it.
    static func seeded(_ kind: EngineKind) async throws -> (TestStore, (account: ObjectID, entry: ObjectID)) {
        let store = try TestStore(kind)
        let ids = try await MisshapenRowTests.seed(store.open())
        return (store, ids)
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call.
    init(_ body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
