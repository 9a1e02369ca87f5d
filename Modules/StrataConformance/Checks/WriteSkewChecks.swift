import Foundation
import Strata
import Synchronization

/// The isolation level, stated by behaviour: snapshot isolation, the first committer winning on
/// written rows, write skew possible on rows only read — and `requireUnchanged` closing it.
enum WriteSkewChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Isolation",
            """
            write skew: two units of work that read A and B and each write one both commit, rewriting the other \
            unchanged or not
            """,
            writeSkewHappens),
        ConformanceCheck(
            "Isolation", "requireUnchanged turns write skew into a conflict, and the retry keeps the invariant",
            requireUnchangedPrevents),
        ConformanceCheck(
            "Isolation", "requireUnchanged checks without writing, and refuses unsaved, deleted and foreign objects",
            requireUnchangedRules),
    ]

    /// Why a withdrawal was refused: the rule "A + B >= 0" would break.
    struct Refused: Error {}

    /// Withdraws `amount` from `from` if the rule "A + B >= 0" still holds afterwards, reading
    /// both accounts; `meanwhile` runs after the reads and before the save (another writer).
    /// With `rewrite`, the old recipe: assign the read row's value back to it (unchanged).
    static func withdraw(
        _ context: ObjectContext, from: ObjectID, other: ObjectID, amount: Int64, protect: Bool, rewrite: Bool = false,
        meanwhile: () throws -> Void = {}
    ) throws {
        let source = try context.existingObject(with: from, as: KitAccount.self)
        let rest = try context.existingObject(with: other, as: KitAccount.self)
        guard source.balance + rest.balance - amount >= 0 else { throw Refused() }
        if protect { try context.requireUnchanged(rest) }
        if rewrite { rest.balance = rest.balance }
        try meanwhile()
        source.balance -= amount
        try context.save()
    }

    /// A and B with 50 each.
    static func seed(_ container: PersistentContainer) async throws -> (ObjectID, ObjectID) {
        (try await container.makeAccount("A", balance: 50), try await container.makeAccount("B", balance: 50))
    }

    static func balances(_ container: PersistentContainer) async throws -> [Int64] {
        try await container.read {
            try $0.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.balance)
        }
    }

    static func writeSkewHappens(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (a, b) = try await seed(container)
        let context = container.newBackgroundContext()
        try await context.perform {
            try withdraw(context, from: b, other: a, amount: 100, protect: false) {
                try IsolationChecks.commitMeanwhile(kit, container, "the other withdrawal") {
                    try withdraw($0, from: a, other: b, amount: 100, protect: false)
                }
            }
        }
        // Documents the isolation level: each saw A + B = 100 and left it at 0 by its own
        // reading; together they broke the rule, because neither wrote the row it only read.
        try kit.expectEqual(
            try await balances(container), [-50, -50], "balances after two unprotected withdrawals (write skew)")

        // The old recipe, writing the read row back unchanged, does not protect it either: an
        // unchanged value is dropped from the save.
        let (c, d) = (
            try await container.makeAccount("C", balance: 50), try await container.makeAccount("D", balance: 50)
        )
        let other = container.newBackgroundContext()
        try await other.perform {
            try withdraw(other, from: d, other: c, amount: 100, protect: false, rewrite: true) {
                try IsolationChecks.commitMeanwhile(kit, container, "the other withdrawal") {
                    try withdraw($0, from: c, other: d, amount: 100, protect: false, rewrite: true)
                }
            }
        }
        let all = try await balances(container)
        try kit.expectEqual(
            Array(all[2...]), [-50, -50], "C and D after two withdrawals that rewrote the other row unchanged")
    }

    static func requireUnchangedPrevents(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (a, b) = try await seed(container)
        let context = container.newBackgroundContext()
        let conflict = try await context.perform { () -> StrataError? in
            do {
                try withdraw(context, from: b, other: a, amount: 100, protect: true) {
                    try IsolationChecks.commitMeanwhile(kit, container, "the other withdrawal") {
                        try withdraw($0, from: a, other: b, amount: 100, protect: true)
                    }
                }
                return nil
            } catch let error as StrataError {
                return error
            }
        }
        guard case .conflict(let rows)? = conflict else {
            throw kit.fail("the second withdrawal gave \(conflict.map { "\($0)" } ?? "no error"), expected .conflict")
        }
        try kit.expectEqual(rows.map(\.objectID), [a], "the conflict names the row that was required unchanged")
        try kit.expectEqual(try await balances(container), [-50, 50], "balances: the conflicting save wrote nothing")

        // The same race through performUnitOfWork: the retry reads the other's write and refuses.
        let (c, d) = (
            try await container.makeAccount("C", balance: 50), try await container.makeAccount("D", balance: 50)
        )
        let attempts = Atomic<Int>(0)
        var refused = false
        do {
            try await container.performUnitOfWork { context in
                let attempt = attempts.add(1, ordering: .relaxed).newValue
                try withdraw(context, from: d, other: c, amount: 100, protect: true) {
                    guard attempt == 1 else { return }
                    try IsolationChecks.commitMeanwhile(kit, container, "the other withdrawal") {
                        try withdraw($0, from: c, other: d, amount: 100, protect: true)
                    }
                }
            }
        } catch is Refused {
            refused = true
        }
        try kit.expect(refused, "the retry saw C = -50 and refused the withdrawal")
        try kit.expectEqual(attempts.load(ordering: .relaxed), 2, "attempts: the conflict, then the refusal")
        let all = try await balances(container)
        try kit.expectEqual(Array(all[2...]), [-50, 50], "C and D after the retried unit of work: C + D stays >= 0")
    }

    /// Holds an object across a `perform` boundary for the foreign-object case (only its identity is used).
    final class Smuggled: @unchecked Sendable {
        var object: ManagedObject?
    }

    static func requireUnchangedRules(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (a, b) = try await seed(container)

        // A verify does not bump the version: a context that read A before still saves it.
        let earlier = container.newBackgroundContext()
        try await earlier.perform { _ = try earlier.existingObject(with: a, as: KitAccount.self).balance }
        try await container.performUnitOfWork { context in
            try context.requireUnchanged(try context.existingObject(with: a, as: KitAccount.self))
            try context.existingObject(with: b, as: KitAccount.self).balance += 1
            try context.save()
        }
        try await earlier.perform {
            try earlier.existingObject(with: a, as: KitAccount.self).balance += 5
            try earlier.save()
        }
        try kit.expectEqual(try await balances(container), [55, 51], "balances: the verify left A's version alone")

        // A save with only a requirement commits nothing and still conflicts when the row changed.
        let verifier = container.newBackgroundContext()
        let verifyOnly = try await verifier.perform { () -> StrataError? in
            try verifier.requireUnchanged(try verifier.existingObject(with: a, as: KitAccount.self))
            try IsolationChecks.commitMeanwhile(kit, container, "changing A") { context in
                try context.existingObject(with: a, as: KitAccount.self).balance = 60
                try context.save()
            }
            do {
                try verifier.save()
                return nil
            } catch let error as StrataError {
                return error
            }
        }
        guard case .conflict? = verifyOnly else {
            throw kit.fail(
                """
                a save with only requireUnchanged after A changed gave \
                \(verifyOnly.map { "\($0)" } ?? "no error"), expected .conflict
                """
            )
        }

        // Unsaved, deleted and foreign objects are refused with misuse.
        let smuggled = Smuggled()
        let owner = container.newBackgroundContext()
        try await owner.perform { smuggled.object = try owner.existingObject(with: b) }
        let context = container.newBackgroundContext()
        let messages = try await context.perform { () -> [String] in
            let fresh = KitAccount(context: context)
            fresh.name = "fresh"
            let doomed = try context.existingObject(with: b, as: KitAccount.self)
            context.delete(doomed)
            var messages: [String] = []
            for object in [fresh, doomed, smuggled.object!] {
                do {
                    try context.requireUnchanged(object)
                    messages.append("no error")
                } catch StrataError.misuse(let message, _) {
                    messages.append(message)
                }
            }
            return messages
        }
        for (message, word) in zip(messages, ["unsaved", "deleted", "another context"]) {
            try kit.expect(message.contains(word), "requireUnchanged of an object that is \(word): \(message)")
        }
        _ = owner
    }
}
