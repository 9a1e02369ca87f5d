import Foundation
import Testing

@testable import Strata

/// The walled files' safe APIs check their preconditions in release builds too: a wrong index
/// or a wrong class stops the program instead of reading a neighbour's memory.
@Suite("walled rooms")
struct WalledRoomTests {
    @Test(
        "an index past an object's value slots stops the program instead of reading the next object's",
        arguments: EngineKind.allCases)
    func slotIndexPastTheRun(kind: EngineKind) async {
        await #expect(processExitsWith: .failure) { [kind = kind as EngineKind] in
            let store = try TestStore(kind)
            let container = try store.open()
            let context = container.newBackgroundContext()
            try await context.perform {
                // Two objects claim adjacent runs of the same arena block: without the check,
                // the first's slot `count` is the second's slot 0, and the read succeeds.
                let first = Account(context: context)
                _ = Account(context: context)
                let values = first.values
                _ = values[values.count]
            }
        }
    }

    @Test("a fetch's objects reinterpreted as another entity class stop the program", arguments: EngineKind.allCases)
    func exactCastOfAnotherClass(kind: EngineKind) async {
        await #expect(processExitsWith: .failure) { [kind = kind as EngineKind] in
            let store = try TestStore(kind)
            let container = try store.open()
            let context = container.newBackgroundContext()
            try await context.perform {
                let account: ManagedObject = Account(context: context)
                let entries = ExactCast.array([account], as: Entry.self)
                print(entries.count)
            }
        }
    }

    @Test(
        "value slots read and write in place, and the same run is seen through every path",
        arguments: EngineKind.allCases)
    func slotsReadAndWrite(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            let first = Account(context: context)
            let second = Account(context: context)
            first.name = "first"
            second.name = "second"
            #expect(first.values.count == second.values.count)
            #expect(first.values.contains(.text("first")))
            #expect(!first.values.contains(.text("second")))
            try context.save()
            first.name = "renamed"
            #expect(first.committedValues?.contains(.text("first")) == true)
            #expect(first.values.contains(.text("renamed")))
            context.rollback()
            #expect(first.name == "first")
            #expect(second.name == "second")
        }
    }
}
