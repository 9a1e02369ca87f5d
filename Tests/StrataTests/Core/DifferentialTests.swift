import Foundation
import Strata
import StrataTestSupport
import Testing

/// A seeded random workload (inserts, updates, deletes, relationship changes, fetches with
/// random predicates and sorts) run against every engine; every fetch must return identical
/// results everywhere. A failure names the seed and the step.
@Suite("differential workload across engines")
struct DifferentialTests {
    static let notes: [String?] = [nil, "", "a", "b", "é", "e\u{301}", "😀", "zz", "A", "%_"]
    static let currencies = ["EUR", "USD", "CHF", ""]

    /// One fetch, described by values so it can be rebuilt for each engine.
    struct Query: Sendable, CustomStringConvertible {
        let template: Int
        let number: Int64
        let other: Int64
        let text: String
        let sort: Int
        let limit: Int?
        let offset: Int

        var description: String {
            """
            template \(template) n=\(number) m=\(other) s=\(String(reflecting: text)) sort \(sort) limit \
            \(limit.map(String.init) ?? "nil") offset \(offset)
            """
        }

        var request: FetchRequest<Account> {
            let n = number
            let m = other
            let s = text
            let predicate: Predicate<Account>?
            switch template {
            case 0: predicate = nil
            case 1: predicate = #Predicate { $0.balance > n }
            case 2: predicate = #Predicate { $0.balance >= n && $0.balance < m }
            case 3: predicate = #Predicate { $0.note == nil }
            case 4: predicate = #Predicate { $0.note != s }
            case 5: predicate = #Predicate { $0.name.starts(with: s) }
            case 6: predicate = #Predicate { $0.note == s || $0.balance < n }
            case 7: predicate = #Predicate { !($0.balance > n) && $0.note != nil }
            case 8:
                let set = [s, "EUR"]
                predicate = #Predicate { set.contains($0.currency) }
            case 9: predicate = #Predicate { $0.currency == s }
            default: predicate = #Predicate { ($0.note ?? "") == s }
            }
            let sorts: [[SortDescriptor<Account>]] = [
                [], [SortDescriptor(\.balance)], [SortDescriptor(\.balance, order: .reverse)], [SortDescriptor(\.note)],
                [SortDescriptor(\.currency), SortDescriptor(\.note, order: .reverse)],
                [SortDescriptor(\.name, order: .reverse)],
            ]
            return FetchRequest(predicate: predicate, sortBy: sorts[sort], fetchLimit: limit, fetchOffset: offset)
        }
    }

    /// The comparable outcome of a fetch.
    struct Outcome: Equatable, Sendable {
        let rows: [String]
        let count: Int
    }

    static func run(_ query: Query, on container: PersistentContainer) async throws -> Outcome {
        let context = container.newBackgroundContext()
        let request = query.request
        return try await context.perform {
            let rows = try context.fetch(request).map {
                let note = $0.note.map { String(reflecting: $0) } ?? "nil"
                return
                    "\($0.objectID.primaryKey ?? 0)|\($0.name)|\($0.currency)|\($0.balance)|\(note)|\($0.entries.count)"
            }
            return Outcome(rows: rows, count: try context.count(for: request))
        }
    }

    @Test(
        "every engine returns identical results for a seeded random workload",
        arguments: [UInt64(0x5EED_0001), 0x5EED_0002])
    func identicalResults(seed: UInt64) async throws {
        let stores = try EngineKind.allCases.map { try TestStore($0) }
        let containers = try stores.map { try $0.open() }
        var random = SeededGenerator(seed: seed)
        var nextName = 0
        var liveNames: [String] = []
        let operations = 600
        for step in 0..<operations {
            let choice = Int.random(in: 0..<100, using: &random)
            let name = liveNames.isEmpty ? nil : liveNames[Int.random(in: 0..<liveNames.count, using: &random)]
            let balance = Int64.random(in: -500...500, using: &random)
            let note = Self.notes[Int.random(in: 0..<Self.notes.count, using: &random)]
            let currency = Self.currencies[Int.random(in: 0..<Self.currencies.count, using: &random)]
            if choice < 30 || name == nil {
                nextName += 1
                let newName = "acct-\(nextName)-\(["", "é", "😀"][nextName % 3])"
                liveNames.append(newName)
                for container in containers {
                    try await container.performUnitOfWork { context in
                        let account = Account(context: context)
                        account.name = newName
                        account.balance = balance
                        account.note = note
                        account.currency = currency
                        try context.save()
                    }
                }
            } else if choice < 55, let name {
                for container in containers {
                    try await container.performUnitOfWork { context in
                        let account = try context.fetch(
                            FetchRequest<Account>(predicate: #Predicate { $0.name == name }))[0]
                        account.balance = balance
                        account.note = note
                        try context.save()
                    }
                }
            } else if choice < 65, let name {
                // Add an entry to the account (the deny rule then protects it from deletion).
                for container in containers {
                    try await container.performUnitOfWork { context in
                        let account = try context.fetch(
                            FetchRequest<Account>(predicate: #Predicate { $0.name == name }))[0]
                        let entry = Entry(context: context)
                        entry.amount = balance
                        account.entries.insert(entry)
                        try context.save()
                    }
                }
            } else if choice < 72, let name {
                // Delete the account with its entries, in one save.
                liveNames.removeAll { $0 == name }
                for container in containers {
                    try await container.performUnitOfWork { context in
                        let account = try context.fetch(
                            FetchRequest<Account>(predicate: #Predicate { $0.name == name }))[0]
                        account.entries.allObjects.forEach(context.delete)
                        context.delete(account)
                        try context.save()
                    }
                }
            } else {
                let query = Query(
                    template: Int.random(in: 0...10, using: &random), number: balance,
                    other: balance + Int64.random(in: 0...400, using: &random),
                    text: [note ?? "", currency, "acct-1", "acct", "é"][Int.random(in: 0..<5, using: &random)],
                    sort: Int.random(in: 0..<6, using: &random),
                    limit: Bool.random(using: &random) ? Int.random(in: 0...8, using: &random) : nil,
                    offset: Int.random(in: 0...3, using: &random))
                var outcomes: [Outcome] = []
                for container in containers { outcomes.append(try await Self.run(query, on: container)) }
                for (kind, outcome) in zip(EngineKind.allCases, outcomes).dropFirst() {
                    #expect(
                        outcome == outcomes[0],
                        """
                        seed \(String(seed, radix: 16)) step \(step): \(kind) differs from \
                        \(EngineKind.allCases[0]) for \(query)
                        """
                    )
                }
                #expect(
                    outcomes[0].count == outcomes[0].rows.count,
                    "seed \(String(seed, radix: 16)) step \(step): count differs from fetch for \(query)")
            }
        }
    }
}
