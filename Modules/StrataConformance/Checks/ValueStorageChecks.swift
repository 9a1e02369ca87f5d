import Foundation
import Strata
import StrataStorage

/// Every object keeps its own column values, however many a context holds: the core packs them
/// side by side, and engines hand out rows whose storage they reuse for the next row.
enum ValueStorageChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Fetch semantics",
            "thousands of fetched and looked-up objects each keep their own values through changes and rollback",
            manyObjects),
        ConformanceCheck(
            "Fetch semantics", "a row the engine handed out keeps its values while the engine reads more",
            rowsStayTheCallers),
    ]

    /// Enough accounts that their values span several of the core's value blocks.
    static let count = 1_500

    struct Expected: Sendable, Equatable {
        let name: String
        let balance: Int64
        let note: String?
    }

    static func expected(_ index: Int) -> Expected {
        Expected(
            name: "account number \(index) with a long name",
            balance: Int64(index * 7 - 3_000),
            note: index % 3 == 0 ? nil : "a note long enough for the heap, \(index)")
    }

    static func seed(_ container: PersistentContainer) async throws -> [ObjectID] {
        let context = container.newBackgroundContext()
        return try await context.perform {
            var accounts: [KitAccount] = []
            for index in 0..<count {
                let account = KitAccount(context: context)
                let values = expected(index)
                account.name = values.name
                account.balance = values.balance
                account.note = values.note
                accounts.append(account)
            }
            try context.save()
            return accounts.map(\.objectID)
        }
    }

    static func manyObjects(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let ids = try await seed(container)
        let context = container.newBackgroundContext()
        let failures = try await context.perform {
            var failures: [String] = []
            func check(_ account: KitAccount, _ index: Int, _ what: String) {
                let actual = Expected(name: account.name, balance: account.balance, note: account.note)
                if actual != expected(index) { failures.append("\(what) \(index): \(actual)") }
            }
            let fetched = try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.balance)]))
            guard fetched.count == count else { return ["fetched \(fetched.count) of \(count)"] }
            for (index, account) in fetched.enumerated() { check(account, index, "fetched") }
            // Change one object in the middle: its neighbours keep their values.
            let middle = count / 2
            fetched[middle].balance = -1
            fetched[middle].note = "changed"
            for index in [middle - 1, middle + 1] { check(fetched[index], index, "neighbour") }
            if fetched[middle].balance != -1 || fetched[middle].note != "changed" {
                failures.append("the change did not stick")
            }
            context.rollback()
            for (index, account) in fetched.enumerated() { check(account, index, "after rollback") }
            return failures
        }
        try kit.expect(failures.isEmpty, "values of a fetch: \(failures.prefix(5))")
        // Lookups one by one, in a scattered order, in a context that fetched nothing.
        let order = (0..<count).map { ($0 * 7_919) % count }
        let lookups = container.newBackgroundContext()
        let misses = try await lookups.perform {
            var misses: [Int] = []
            var held: [KitAccount] = []
            for index in order {
                let account = try lookups.existingObject(with: ids[index], as: KitAccount.self)
                held.append(account)
                if Expected(name: account.name, balance: account.balance, note: account.note) != expected(index) {
                    misses.append(index)
                }
            }
            for (position, account) in held.enumerated() where account.name != expected(order[position]).name {
                misses.append(order[position])
            }
            return misses
        }
        try kit.expect(misses.isEmpty, "values of looked-up objects: \(misses.prefix(5))")
    }

    static func rowsStayTheCallers(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let ids = try await seed(container)
        let keys = ids.prefix(3).compactMap(\.primaryKey)
        let storeSchema = KitModels.schema.storeSchema
        guard let account = storeSchema.entities.first(where: { $0.name == "Account" }) else {
            throw kit.fail("the kit schema has no Account entity")
        }
        let engine = try kit.configuration.open(storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let held = try keys.map { try reader.row(entity: account.number, key: $0) }
        for (row, key) in zip(held, keys) {
            try kit.expectEqual(row?.key, key, "the key of a row held across later lookups")
            try kit.expectEqual(
                row, try reader.row(entity: account.number, key: key), "a held row against a fresh lookup")
        }
        try kit.expect(Set(held.compactMap { $0?.values }).count == keys.count, "each held row has its own values")
        var streamed: [StoredRow] = []
        try reader.forEachRow(for: FetchPlan(entity: account.number)) { streamed.append($0) }
        try kit.expectEqual(streamed.count, count, "rows streamed")
        try kit.expectEqual(Set(streamed.map(\.values)).count, count, "every kept streamed row has its own values")
    }
}
