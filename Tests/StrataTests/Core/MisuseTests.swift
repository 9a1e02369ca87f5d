import Foundation
import Strata
import Testing

/// Objects cannot leave `perform`: its result must be `Sendable` and `ManagedObject` is not,
/// so `let a: Account = try await context.perform { … }` does not compile. That half is a
/// compile-time property; these tests cover the run-time half.
@Suite("misuse checks")
struct MisuseTests {
    @Test("throwing context APIs outside perform throw misuse", arguments: EngineKind.allCases)
    func throwingAPIsThrow(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let error = #expect(throws: StrataError.self) { _ = try context.fetch(FetchRequest<Account>()) }
        guard case .misuse(let message, _)? = error else {
            Issue.record("expected misuse, got \(String(describing: error))")
            return
        }
        #expect(message.contains("ObjectContext.fetch(_:)"))
        #expect(throws: StrataError.self) { try context.save() }
    }

    @Test("touching an object outside perform stops the program with a message naming the call")
    func objectOutsidePerformTraps() async {
        await #expect(processExitsWith: .failure) {
            let store = try TestStore(.sqlite)
            let container = try store.open()
            let context = container.newBackgroundContext()
            let leaked = LeakBox()
            try await context.perform {
                let account = Account(context: context)
                leaked.set(account)
            }
            _ = leaked.account?.name
        }
    }

    @Test("inserting outside perform stops the program")
    func insertOutsidePerformTraps() async {
        await #expect(processExitsWith: .failure) {
            let store = try TestStore(.sqlite)
            let container = try store.open()
            container.newBackgroundContext().insert(Account())
        }
    }

    @Test("passing an object to another context stops the program")
    func objectFromAnotherContextTraps() async {
        await #expect(processExitsWith: .failure) {
            let store = try TestStore(.sqlite)
            let container = try store.open()
            let first = container.newBackgroundContext()
            let second = container.newBackgroundContext()
            let leaked = LeakBox()
            try await first.perform { leaked.set(Account(context: first)) }
            try await second.perform { second.delete(leaked.account!) }
        }
    }
}

/// Smuggles an object out of `perform` the only way the compiler allows: an unchecked box.
/// Used to prove the run-time check catches what the type system was told to ignore.
final class LeakBox: @unchecked Sendable {
    private(set) var account: Account?
    func set(_ account: Account) { self.account = account }
}
