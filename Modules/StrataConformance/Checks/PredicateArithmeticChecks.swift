import Foundation
import Strata

/// Integer arithmetic in a predicate is evaluated in memory; an overflow or a zero divisor
/// there throws `.misuse` instead of stopping the program (Foundation's own evaluation traps),
/// and everything else keeps Foundation's results, short-circuits included.
enum PredicateArithmeticChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Fetch semantics",
            "integer arithmetic in a predicate gives Foundation's results, and .misuse where Foundation would trap",
            arithmetic)
    ]

    static func arithmetic(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        for (name, balance) in [("zero", 0), ("five", 5), ("max", Int64.max), ("min", Int64.min)] as [(String, Int64)] {
            _ = try await container.makeAccount(name, balance: balance)
        }
        let (top, bottom) = (Int64.max, Int64.min)
        let doubled: Predicate<KitAccount> = #Predicate {
            $0.balance != top && $0.balance != bottom && $0.balance * 2 > 6
        }
        // The guard on the left keeps the division from ever seeing the zero.
        let divided: Predicate<KitAccount> = #Predicate { $0.balance != 0 && 10 / $0.balance > 1 }
        let odd: Predicate<KitAccount> = #Predicate { $0.balance > 0 && $0.balance % 2 == 1 && $0.balance < 10 }
        let negated: Predicate<KitAccount> = #Predicate {
            $0.balance == 0 || ($0.balance < 10 && $0.balance > bottom && -$0.balance < -4)
        }
        let names = try await container.read { context in
            try [doubled, divided, odd, negated].map { predicate in
                try context.fetch(FetchRequest<KitAccount>(predicate: predicate, sortBy: [SortDescriptor(\.name)])).map(
                    \.name)
            }
        }
        try kit.expectEqual(names, [["five"], ["five"], ["five"], ["five", "zero"]], "arithmetic results")
        let zero: Int64 = 0
        let refused: [(String, Predicate<KitAccount>)] = [
            ("overflows", #Predicate { $0.balance + 1 > 0 }),
            ("overflows", #Predicate { $0.balance - 1 < 0 }),
            ("divides by zero", #Predicate { $0.balance / zero > 0 }),
            ("divides by zero", #Predicate { $0.balance % zero > 0 }),
            ("overflows", #Predicate { -$0.balance > 0 }),
        ]
        for (what, predicate) in refused {
            let error = try await kit.expectStrataError("a predicate that \(what) on a stored row") {
                _ = try await container.read { try $0.count(for: FetchRequest<KitAccount>(predicate: predicate)) }
            }
            guard case .misuse(let message, _) = error, message.contains(what) else {
                throw kit.fail("a predicate that \(what) gives .misuse saying so, not \(error)")
            }
        }
        // Inside a to-many's contains { … } and allSatisfy { … } closures too.
        try await container.performUnitOfWork { context in
            let owner = try kit.first(
                context.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == "five" })), "accounts five")
            for amount in [3, Int64.max] as [Int64] {
                let entry = KitEntry(context: context)
                entry.amount = amount
                entry.account = owner
            }
            try context.save()
        }
        let inClosures: [(String, Predicate<KitAccount>)] = [
            ("contains", #Predicate { $0.entries.contains { $0.amount * 2 > 10 } }),
            ("allSatisfy", #Predicate { $0.entries.allSatisfy { $0.amount + 1 > 0 } }),
        ]
        for (what, predicate) in inClosures {
            let error = try await kit.expectStrataError("an overflow inside \(what) { … }") {
                _ = try await container.read { try $0.count(for: FetchRequest<KitAccount>(predicate: predicate)) }
            }
            guard case .misuse(let message, _) = error, message.contains("overflows") else {
                throw kit.fail("an overflow inside \(what) { … } gives .misuse, not \(error)")
            }
        }
        let small: Predicate<KitAccount> = #Predicate { $0.entries.contains { $0.amount < 5 && $0.amount * 2 == 6 } }
        let found = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(predicate: small)).map(\.name)
        }
        try kit.expectEqual(found, ["five"], "contains { … } with arithmetic behind a guard")

        // An unsaved object's values are judged the same way.
        let unsaved = try await kit.expectStrataError("an overflow on an unsaved object") {
            _ = try await container.read { context in
                let account = KitAccount(context: context)
                account.name = "unsaved"
                account.balance = Int64.max - 1
                return try context.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.balance * 3 > 0 })).count
            }
        }
        guard case .misuse(let message, _) = unsaved, message.contains("overflows") else {
            throw kit.fail("an overflow on an unsaved object gives .misuse, not \(unsaved)")
        }
    }
}
