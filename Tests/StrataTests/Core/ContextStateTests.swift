import Foundation
import Strata
import Testing

@Suite("context state: rollback, reset, permanent IDs, constraints")
struct ContextStateTests {
    @Test("rollback discards inserts, updates and deletes; reset forgets everything", arguments: EngineKind.allCases)
    func rollbackAndReset(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let id = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "Kept"
            account.balance = 5
            try context.save()
            return account.objectID
        }
        let context = container.newBackgroundContext()
        let outcome = try await context.perform {
            let account = try context.existingObject(with: id, as: Account.self)
            account.balance = 99
            Account(context: context).name = "Dropped"
            let sets = (context.insertedObjects.count, context.updatedObjects.count)
            context.rollback()
            let afterRollback = (account.balance, context.hasChanges, try context.count(for: FetchRequest<Account>()))
            context.delete(account)
            let deletedCount = context.deletedObjects.count
            context.rollback()
            let undeleted = !account.isDeleted && !context.hasChanges
            context.reset()
            let reloaded = try context.existingObject(with: id, as: Account.self)
            return (sets.0, sets.1, afterRollback.0, afterRollback.1, afterRollback.2, deletedCount, undeleted, reloaded !== account, reloaded.balance)
        }
        #expect(outcome.0 == 1 && outcome.1 == 1)
        #expect(outcome.2 == 5 && outcome.3 == false && outcome.4 == 1)
        #expect(outcome.5 == 1 && outcome.6)
        #expect(outcome.7 && outcome.8 == 5)
    }

    @Test("obtainPermanentIDs gives unsaved objects their final IDs", arguments: EngineKind.allCases)
    func permanentIDsBeforeSave(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let (before, early, after) = try await context.perform {
            let account = Account(context: context)
            account.name = "Early"
            let before = account.objectID
            try context.obtainPermanentIDs(for: [account])
            let early = account.objectID
            #expect(try context.existingObject(with: early) === account)
            try context.save()
            return (before, early, account.objectID)
        }
        #expect(before.isTemporary && !early.isTemporary)
        #expect(early == after)
    }

    @Test("compound unique constraints hold in the context and in the store", arguments: EngineKind.allCases)
    func compoundUniqueness(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        try await container.performUnitOfWork { context in
            for number in 1...3 {
                let seat = Seat(context: context)
                seat.row = "A"
                seat.number = number
                seat.holder = "h\(number)"
            }
            let other = Seat(context: context)
            other.row = "B"
            other.number = 1
            try context.save()
        }
        for sameSave in [true, false] {
            let context = container.newBackgroundContext()
            let error = await #expect(throws: StrataError.self) {
                try await context.perform {
                    let seat = Seat(context: context)
                    seat.row = "C"
                    seat.number = 1
                    let clash = Seat(context: context)
                    clash.row = sameSave ? "C" : "A"
                    clash.number = 1
                    try context.save()
                }
            }
            #expect(error == .constraintViolation(entity: "Seat", attributes: ["row", "number"]))
        }
        let check = container.newBackgroundContext()
        let rows = try await check.perform {
            try check.fetch(FetchRequest<Seat>(predicate: #Predicate { $0.holder == "h2" || $0.row == "B" }, sortBy: [SortDescriptor(\.row)])).map { "\($0.row)\($0.number)" }
        }
        #expect(rows == ["A2", "B1"])
    }
}
