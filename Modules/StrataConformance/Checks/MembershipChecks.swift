import Foundation
import Strata

/// Membership predicates (`constants.contains($0.attribute)`) with more constants than SQLite's
/// default parameter limit (32,766): every engine must return the same rows as plain Swift,
/// with and without `!`, sorting, limits and offsets.
enum MembershipChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Fetch semantics", "40,000 names in a membership predicate select the right rows", names),
        ConformanceCheck(
            "Fetch semantics", "40,000 integers in a membership predicate select the right rows", integers),
    ]

    /// How many constants each predicate holds: past SQLite's default limit of 32,766.
    static let constantCount = 40_000

    struct Row: Sendable, Equatable {
        let key: Int64
        let name: String
        let balance: Int64
    }

    /// 120 accounts, named `member-<n>` with balances `n * 1_000_003 - 150_000_000`. Few rows,
    /// because an engine may test each row against every constant.
    static func seed(_ container: PersistentContainer) async throws -> [Row] {
        try await container.performUnitOfWork { context in
            let accounts = (0..<120).map { n in
                let account = KitAccount(context: context)
                account.name = "member-\(n)"
                account.balance = Int64(n) * 1_000_003 - 150_000_000
                return account
            }
            try context.save()
            return accounts.map { Row(key: $0.objectID.primaryKey!, name: $0.name, balance: $0.balance) }
        }
    }

    /// Fetches keys and counts for one request and compares them with `expected`.
    static func expect(
        _ kit: ConformanceHarness, _ container: PersistentContainer, _ label: String,
        _ request: FetchRequest<KitAccount>, _ expected: [Row]
    ) async throws {
        let (keys, count) = try await container.read { context in
            (try context.fetch(request).map { $0.objectID.primaryKey! }, try context.count(for: request))
        }
        try kit.expectEqual(keys, expected.map(\.key), "keys for \(label)")
        try kit.expectEqual(count, expected.count, "count for \(label)")
    }

    static func names(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let rows = try await seed(container)
        // Every third stored name, among 40,000 constants; "member-1" differs from "member-10" byte-wise.
        let names = (0..<constantCount).map { $0.isMultiple(of: 3) && $0 < 120 ? "member-\($0)" : "absent-\($0)" }
        let wanted = Set(names)
        let members = rows.filter { wanted.contains($0.name) }
        try kit.expect(members.count == 40, "the seed selects 40 members, got \(members.count)")
        try await expect(
            kit, container, "names.contains(name)", FetchRequest(predicate: #Predicate { names.contains($0.name) }),
            members)
        try await expect(
            kit, container, "!names.contains(name), sorted by balance descending, offset 7 limit 50",
            FetchRequest(
                predicate: #Predicate { !names.contains($0.name) },
                sortBy: [SortDescriptor(\.balance, order: .reverse)], fetchLimit: 50, fetchOffset: 7),
            Array(rows.filter { !wanted.contains($0.name) }.sorted { $0.balance > $1.balance }.dropFirst(7).prefix(50)))
        try await expect(
            kit, container, "names.contains(name) && balance > 0, sorted by name",
            FetchRequest(
                predicate: #Predicate { names.contains($0.name) && $0.balance > 0 }, sortBy: [SortDescriptor(\.name)]),
            members.filter { $0.balance > 0 }.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) })
    }

    static func integers(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let rows = try await seed(container)
        // Every fifth stored balance, among 40,000 constants around them.
        let balances: [Int64] = (0..<Int64(constantCount)).map { n in
            n.isMultiple(of: 5) && n < 120 ? n * 1_000_003 - 150_000_000 : n * 1_000_003 - 150_000_001
        }
        let wanted = Set(balances)
        let members = rows.filter { wanted.contains($0.balance) }
        try kit.expect(members.count == 24, "the seed selects 24 members, got \(members.count)")
        try await expect(
            kit, container, "balances.contains(balance)",
            FetchRequest(predicate: #Predicate { balances.contains($0.balance) }), members)
        try await expect(
            kit, container, "!balances.contains(balance), limit 20 offset 80 (past the end)",
            FetchRequest(predicate: #Predicate { !balances.contains($0.balance) }, fetchLimit: 20, fetchOffset: 80),
            Array(rows.filter { !wanted.contains($0.balance) }.dropFirst(80).prefix(20)))
        try await expect(
            kit, container, "balances.contains(balance) sorted by balance descending, limit 9",
            FetchRequest(
                predicate: #Predicate { balances.contains($0.balance) },
                sortBy: [SortDescriptor(\.balance, order: .reverse)], fetchLimit: 9),
            Array(members.sorted { $0.balance > $1.balance }.prefix(9)))
    }
}
