import Foundation
import Strata
import StrataTestSupport

/// What `save()` does with what a `validateForSave()` override does, and with objects that
/// `rollback()` or `reset()` made invalid: the values an override leaves are checked like any
/// others, an override cannot save, roll back or reset, and a change to a forgotten object is
/// refused with `.misuse`. Nothing is written in any of these cases.
enum SaveValidationChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Contexts", "a NaN that validateForSave() sets is refused with .validation, and nothing is written",
            nanFromOverride),
        ConformanceCheck(
            "Contexts", "save(), rollback() or reset() inside validateForSave() is refused with .misuse", reentry),
        ConformanceCheck(
            "Contexts", "a change to an object that rollback() or reset() made invalid is refused with .misuse",
            forgottenObjects),
    ]

    static func schema() throws -> Schema { try Schema(version: 1, [KitReading.self]) }

    static func nanFromOverride(_ kit: ConformanceHarness) async throws {
        let container = try kit.open(schema: try schema())
        try await container.write { KitReading(context: $0).label = "good" }
        for label in ["mean of nothing", "spare is NaN", "inserts a NaN"] {
            do {
                try await container.write { KitReading(context: $0).label = label }
                throw kit.fail("a save whose validateForSave() set a NaN (\(label)) succeeded")
            } catch StrataError.validation(let issues) {
                try kit.expect(
                    issues.contains { $0.message.contains("NaN") },
                    "\(label): the issues do not name the NaN: \(issues)")
            }
        }
        // The store holds the first reading only, and every row reads back.
        let labels = try await container.read { context in
            try context.fetch(FetchRequest<KitReading>()).map(\.label)
        }
        try kit.expectEqual(labels, ["good"], "readings after the refused saves")
    }

    static func reentry(_ kit: ConformanceHarness) async throws {
        let container = try kit.open(schema: try schema())
        for (label, call) in [("calls save", "save()"), ("calls rollback", "rollback()"), ("calls reset", "reset()")] {
            do {
                try await container.write { KitReading(context: $0).label = label }
                throw kit.fail("a save whose validateForSave() \(label) succeeded")
            } catch StrataError.misuse(let message, _) {
                try kit.expect(message.contains(call), "\(label): the message does not name \(call): \(message)")
            }
        }
        let count = try await container.read { try $0.count(for: FetchRequest<KitReading>()) }
        try kit.expectEqual(count, 0, "readings written by the refused saves")
    }

    static func forgottenObjects(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Kept", balance: 5)
        let context = container.newBackgroundContext()
        let outcomes = try await context.perform { () -> [String] in
            var outcomes: [String] = []
            func attempt(_ step: String) {
                do {
                    try context.save()
                    outcomes.append("\(step): saved")
                } catch StrataError.misuse(let message, _) where message.contains("rollback() or reset()") {
                    context.rollback()
                } catch {
                    outcomes.append("\(step): \(error)")
                    context.rollback()
                }
            }
            // Fetched, forgotten by reset(), then changed.
            let fetched = try context.existingObject(with: id, as: KitAccount.self)
            context.reset()
            fetched.balance = 42
            attempt("changed after reset()")
            // Inserted, undone by rollback(), then changed.
            let undone = KitAccount(context: context)
            undone.name = "Undone"
            context.rollback()
            undone.balance = 7
            attempt("changed after rollback()")
            // A new entry related to an account whose insert rollback() undid.
            let orphaned = KitAccount(context: context)
            orphaned.name = "Orphaned"
            context.rollback()
            let entry = KitEntry(context: context)
            entry.account = orphaned
            attempt("related after rollback()")
            // The context goes on: a fresh change saves.
            try context.existingObject(with: id, as: KitAccount.self).balance = 6
            try context.save()
            return outcomes
        }
        try kit.expect(outcomes.isEmpty, "saves of changes to forgotten objects: \(outcomes)")
        let (balance, names, entries) = try await container.read { context in
            (
                try context.existingObject(with: id, as: KitAccount.self).balance,
                try context.fetch(FetchRequest<KitAccount>()).map(\.name),
                try context.count(for: FetchRequest<KitEntry>())
            )
        }
        try kit.expectEqual(balance, 6, "the balance (42 from the forgotten object must not be written)")
        try kit.expectEqual(names, ["Kept"], "the accounts")
        try kit.expectEqual(entries, 0, "the entries")
    }
}

extension PersistentContainer {
    /// Runs `body` in a fresh context and saves it.
    fileprivate func write(_ body: @escaping @Sendable (ObjectContext) throws -> Void) async throws {
        let context = newBackgroundContext()
        try await context.perform {
            try body(context)
            try context.save()
        }
    }
}

/// A reading whose `validateForSave()` misbehaves as its label says.
final class KitReading: ManagedObject {
    override class var entityName: String { "Reading" }
    @Attribute var label = ""
    @Attribute var total = 0.0
    @Attribute var count: Int64 = 0
    @Attribute var mean = 0.0
    @Attribute var spare: Double?

    override func validateForSave() throws {
        switch label {
        case "mean of nothing": mean = total / Double(count)
        case "spare is NaN": spare = .nan
        case "inserts a NaN":
            if let context = managedObjectContext {
                let other = KitReading(context: context)
                other.label = "inserted by an override"
                other.total = .nan
            }
        case "calls save": try managedObjectContext?.save()
        case "calls rollback": managedObjectContext?.rollback()
        case "calls reset": managedObjectContext?.reset()
        default: break
        }
    }
}
