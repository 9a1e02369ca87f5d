import Foundation
import Strata

/// `#Predicate` fetches — every filter form, sort, limit, offset and nil handling — against the
/// same selection computed in plain Swift with the documented semantics: binary (Unicode
/// scalar) string order, nil first, ties by primary key.
enum FetchChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Fetch semantics", "predicates, sorts, limits and offsets match a plain-Swift reference", reference),
        ConformanceCheck("Fetch semantics", "fetches include the context's unsaved changes", unsavedChanges),
        ConformanceCheck("Fetch semantics", "relationship-key equality selects the related objects", relationshipKey),
        ConformanceCheck(
            "Fetch semantics", "a sort through a relationship keeps a stored text's descriptor in UTF-8 byte order",
            memorySortKeepsByteOrder),
    ]

    struct Row: Sendable, Equatable {
        let key: Int64
        let name: String
        let currency: String
        let balance: Int64
        let note: String?
    }

    static let names = [
        "alpha", "Alpha", "beta", "", "émile", "e\u{301}mile", "zeta", "😀 smile", "ålborg", "a%b_c", "mid", "Zulu",
    ]
    static let notes: [String?] = [nil, "", "x", "long note", nil, "é", "😀", nil, "a", "b", "c", "nil"]

    /// Binary order of two strings (Unicode scalar order).
    static func binaryLess(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// nil first, then binary.
    static func optionalLess(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): false
        case (nil, _): true
        case (_, nil): false
        case (let a?, let b?): binaryLess(a, b)
        }
    }

    struct Case: Sendable {
        let label: String
        let request: FetchRequest<KitAccount>
        let reference: @Sendable ([Row]) -> [Row]
    }

    static func window(_ rows: [Row], offset: Int = 0, limit: Int? = nil) -> [Row] {
        let start = min(offset, rows.count)
        let end = limit.map { min(start + $0, rows.count) } ?? rows.count
        return Array(rows[start..<end])
    }

    static let cases: [Case] = {
        let byKey: @Sendable ([Row]) -> [Row] = { $0.sorted { $0.key < $1.key } }
        var cases: [Case] = []
        cases.append(Case(label: "all", request: FetchRequest(), reference: byKey))
        cases.append(
            Case(
                label: "balance > 100", request: FetchRequest(predicate: #Predicate { $0.balance > 100 }),
                reference: { byKey($0.filter { $0.balance > 100 }) }))
        cases.append(
            Case(
                label: "balance range, sorted desc, limit 3",
                request: FetchRequest(
                    predicate: #Predicate { $0.balance >= -50 && $0.balance <= 400 },
                    sortBy: [SortDescriptor(\.balance, order: .reverse)], fetchLimit: 3),
                reference: { rows in
                    window(
                        rows.filter { $0.balance >= -50 && $0.balance <= 400 }.sorted {
                            $0.balance != $1.balance ? $0.balance > $1.balance : $0.key < $1.key
                        }, limit: 3)
                }))
        cases.append(
            Case(
                label: "name == empty", request: FetchRequest(predicate: #Predicate { $0.name == "" }),
                reference: { byKey($0.filter { $0.name.utf8.isEmpty }) }))
        cases.append(
            Case(
                label: "name == émile (binary)", request: FetchRequest(predicate: #Predicate { $0.name == "émile" }),
                reference: { byKey($0.filter { $0.name.utf8.elementsEqual("émile".utf8) }) }))
        cases.append(
            Case(
                label: "name < m sorted by name",
                request: FetchRequest(predicate: #Predicate { $0.name < "m" }, sortBy: [SortDescriptor(\.name)]),
                reference: { rows in
                    rows.filter { binaryLess($0.name, "m") }.sorted {
                        $0.name != $1.name ? binaryLess($0.name, $1.name) : $0.key < $1.key
                    }
                }))
        cases.append(
            Case(
                label: "note == nil", request: FetchRequest(predicate: #Predicate { $0.note == nil }),
                reference: { byKey($0.filter { $0.note == nil }) }))
        cases.append(
            Case(
                label: "note != nil", request: FetchRequest(predicate: #Predicate { $0.note != nil }),
                reference: { byKey($0.filter { $0.note != nil }) }))
        cases.append(
            Case(
                label: "note != x (nil included)", request: FetchRequest(predicate: #Predicate { $0.note != "x" }),
                reference: { byKey($0.filter { $0.note.map { !$0.utf8.elementsEqual("x".utf8) } ?? true }) }))
        cases.append(
            Case(
                label: "!(note == empty)", request: FetchRequest(predicate: #Predicate { !($0.note == "") }),
                reference: { byKey($0.filter { $0.note.map { !$0.isEmpty } ?? true }) }))
        cases.append(
            Case(
                label: "contains %b_", request: FetchRequest(predicate: #Predicate { $0.name.contains("%b_") }),
                reference: {
                    byKey(
                        $0.filter {
                            $0.name.utf8.count >= 3 && Array($0.name.utf8).windows(3).contains([0x25, 0x62, 0x5F])
                        })
                }))
        cases.append(
            Case(
                label: "contains mile", request: FetchRequest(predicate: #Predicate { $0.name.contains("mile") }),
                reference: { byKey($0.filter { $0.name.utf8.contains(subsequence: "mile".utf8) }) }))
        cases.append(
            Case(
                label: "starts with e (binary)",
                request: FetchRequest(predicate: #Predicate { $0.name.starts(with: "e") }),
                reference: { byKey($0.filter { $0.name.utf8.starts(with: "e".utf8) }) }))
        cases.append(
            Case(
                label: "starts with empty", request: FetchRequest(predicate: #Predicate { $0.name.starts(with: "") }),
                reference: byKey))
        let members = ["beta", "zeta", "nope", ""]
        cases.append(
            Case(
                label: "membership", request: FetchRequest(predicate: #Predicate { members.contains($0.name) }),
                reference: { byKey($0.filter { row in members.contains { $0.utf8.elementsEqual(row.name.utf8) } }) }))
        cases.append(
            Case(
                label: "or / not",
                request: FetchRequest(predicate: #Predicate { $0.balance < 0 || !($0.currency == "EUR") }),
                reference: { byKey($0.filter { $0.balance < 0 || $0.currency != "EUR" }) }))
        cases.append(
            Case(
                label: "note sorted, nil first, offset 2 limit 4",
                request: FetchRequest(sortBy: [SortDescriptor(\.note)], fetchLimit: 4, fetchOffset: 2),
                reference: { rows in
                    window(
                        rows.sorted { $0.note != $1.note ? optionalLess($0.note, $1.note) : $0.key < $1.key },
                        offset: 2, limit: 4)
                }))
        cases.append(
            Case(
                label: "note sorted descending",
                request: FetchRequest(sortBy: [SortDescriptor(\.note, order: .reverse)]),
                reference: { rows in
                    rows.sorted { $0.note != $1.note ? optionalLess($1.note, $0.note) : $0.key < $1.key }
                }))
        cases.append(
            Case(
                label: "two sort keys",
                request: FetchRequest(sortBy: [SortDescriptor(\.currency), SortDescriptor(\.balance, order: .reverse)]),
                reference: { rows in
                    rows.sorted { ($0.currency, -$0.balance, $0.key) < ($1.currency, -$1.balance, $1.key) }
                }))
        cases.append(
            Case(
                label: "in-memory part (nil-coalescing) with limit",
                request: FetchRequest(
                    predicate: #Predicate { ($0.note ?? "") == "" && $0.balance > -1000 },
                    sortBy: [SortDescriptor(\.balance)], fetchLimit: 3),
                reference: { rows in
                    window(
                        rows.filter { ($0.note ?? "").isEmpty && $0.balance > -1000 }.sorted {
                            ($0.balance, $0.key) < ($1.balance, $1.key)
                        }, limit: 3)
                }))
        cases.append(
            Case(
                label: "computed balanceInCents > 10000, sorted by it descending",
                request: FetchRequest(
                    predicate: #Predicate { $0.balanceInCents > 10_000 },
                    sortBy: [SortDescriptor(\.balanceInCents, order: .reverse)]),
                reference: { rows in
                    rows.filter { $0.balance * 100 > 10_000 }.sorted {
                        $0.balance != $1.balance ? $0.balance > $1.balance : $0.key < $1.key
                    }
                }))
        cases.append(
            Case(
                label: "computed read-only debt < 0, sorted by it",
                request: FetchRequest(predicate: #Predicate { $0.debt < 0 }, sortBy: [SortDescriptor(\.debt)]),
                reference: { rows in
                    rows.filter { -$0.balance < 0 }.sorted {
                        $0.balance != $1.balance ? $0.balance > $1.balance : $0.key < $1.key
                    }
                }))
        cases.append(
            Case(label: "offset past the end", request: FetchRequest(fetchOffset: 100), reference: { _ in [] }))
        cases.append(Case(label: "limit 0", request: FetchRequest(fetchLimit: 0), reference: { _ in [] }))
        return cases
    }()

    static func seed(_ container: PersistentContainer) async throws -> [Row] {
        try await container.performUnitOfWork { context in
            var accounts: [KitAccount] = []
            for (index, name) in names.enumerated() {
                let account = KitAccount(context: context)
                account.name = name
                account.currency = index % 3 == 0 ? "USD" : "EUR"
                account.balance = Int64((index * 137) % 700) - 200
                account.note = notes[index]
                accounts.append(account)
            }
            try context.save()
            return accounts.map {
                Row(
                    key: $0.objectID.primaryKey!, name: $0.name, currency: $0.currency, balance: $0.balance,
                    note: $0.note)
            }
        }
    }

    static func reference(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let rows = try await seed(container)
        for testCase in cases {
            let request = testCase.request
            let (keys, count) = try await container.read { context in
                (try context.fetch(request).map { $0.objectID.primaryKey! }, try context.count(for: request))
            }
            let expected = testCase.reference(rows).map(\.key)
            try kit.expectEqual(keys, expected, "keys fetched for \(testCase.label)")
            try kit.expectEqual(count, expected.count, "count for \(testCase.label)")
        }
    }

    static func unsavedChanges(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await seed(container)
        let (names, count) = try await container.read { context in
            let new = KitAccount(context: context)
            new.name = "newcomer"
            new.balance = 10_000
            let rich = try context.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.balance > 300 }))
            for account in rich where account.name != "newcomer" { account.balance = 0 }
            try context.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == "beta" })).forEach {
                context.delete($0)
            }
            let request = FetchRequest<KitAccount>(
                predicate: #Predicate { $0.balance > 300 || $0.name == "beta" }, sortBy: [SortDescriptor(\.name)])
            return (try context.fetch(request).map(\.name), try context.count(for: request))
        }
        try kit.expectEqual(names, ["newcomer"], "names seen with unsaved changes")
        try kit.expectEqual(count, 1, "count with unsaved changes")
    }

    static func relationshipKey(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        // Account A with entries 0, 2, 4 and account B with 1, 3, 5.
        let accountID = try await RelationshipKeyChecks.seed(container).account
        let amounts = try await container.read { context in
            let id: ObjectID? = accountID
            return try context.fetch(
                FetchRequest<KitEntry>(predicate: #Predicate { $0.$account == id }, sortBy: [SortDescriptor(\.amount)])
            ).map(\.amount)
        }
        try kit.expectEqual(amounts, [0, 2, 4], "amounts of the entries of account A")
    }
}

extension FetchChecks {
    /// A descriptor through a relationship sorts in memory with Foundation; before, every
    /// descriptor beside it did too, so the memos' order followed Swift's string rules (the
    /// composed and decomposed "é" equal) instead of their bytes, as the same descriptor alone gives.
    static func memorySortKeepsByteOrder(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let memos = ["\u{E9}", "f", "e\u{301}"]
        try await container.performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = "A"
            for memo in memos {
                let entry = KitEntry(context: context)
                entry.memo = memo
                entry.account = account
            }
            try context.save()
        }
        let (alone, beside) = try await container.read { context in
            let alone = try context.fetch(FetchRequest<KitEntry>(sortBy: [SortDescriptor(\.memo)])).map(\.memo)
            let beside = try context.fetch(
                FetchRequest<KitEntry>(sortBy: [SortDescriptor(\.account?.name), SortDescriptor(\.memo)])
            ).map(\.memo)
            return (alone, beside)
        }
        let bytes = memos.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        try kit.expectEqual(alone, bytes, "memos sorted by memo")
        try kit.expectEqual(beside, bytes, "memos sorted by the account's name (all equal), then by memo")
    }
}

extension Array where Element == UInt8 {
    func windows(_ size: Int) -> [[UInt8]] {
        guard count >= size else { return [] }
        return (0...(count - size)).map { Array(self[$0..<($0 + size)]) }
    }
}

extension String.UTF8View {
    func contains(subsequence other: String.UTF8View) -> Bool {
        let hay = Array(self)
        let pin = Array(other)
        if pin.isEmpty { return true }
        return hay.windows(pin.count).contains(pin)
    }
}
