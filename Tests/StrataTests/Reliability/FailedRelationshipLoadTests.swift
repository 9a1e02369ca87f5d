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
        // Nothing was written, and the same context reads the relationship in its next body.
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
