import Foundation
import Strata
import StrataStorage
import Testing

/// An engine selects rows for any offset and limit a plan carries — negative, zero, `Int.max`,
/// `Int.min` — without trapping, and returns exactly the rows the window names.
@Suite("extreme fetch windows")
struct ExtremeFetchWindowTests {
    static let numbers = [Int.min, -1, 0, 1, 2, 4, Int.max - 1, Int.max]

    /// The window computed without any arithmetic that can overflow.
    static func expected(_ rows: [Int64], offset: Int, limit: Int?) -> [Int64] {
        let skipped = offset <= 0 ? rows[...] : rows.dropFirst(min(offset, rows.count))
        guard let limit else { return Array(skipped) }
        return Array(skipped.prefix(max(limit, 0)))
    }

    @Test("every fetch shape with offsets and limits near Int.max and below zero", arguments: EngineKind.allCases)
    func extremeWindows(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        try await container.performUnitOfWork { context in
            for index in 0..<5 {
                let account = Account(context: context)
                account.name = "account \(4 - index)"
                account.note = index % 2 == 0 ? "even" : nil
            }
            try context.save()
        }
        let engine = try store.configuration.open(TestModels.schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let everything = try reader.rows(for: FetchPlan(entity: 0))
        let byKey = everything.map(\.key)
        let nameColumn = try #require(
            TestModels.schema.storeSchema.entities[0].columns.firstIndex { $0.name == "name" })
        let byName = everything.sorted { a, b in
            StoredValue.order(a.values[nameColumn], b.values[nameColumn]) == .orderedAscending
        }.map(\.key)
        #expect(byKey.count == 5)
        var checked = 0
        for offset in Self.numbers {
            for limit in [nil] + Self.numbers.map(Optional.some) {
                for sorted in [false, true] {
                    for filtered in [false, true] {
                        let plan = FetchPlan(
                            entity: 0, filter: filtered ? .isNotNull(column: nameColumn) : nil,
                            sort: sorted ? [SortKey(column: nameColumn, ascending: true)] : [], limit: limit,
                            offset: offset)
                        let want = Self.expected(sorted ? byName : byKey, offset: offset, limit: limit)
                        let got = try reader.rows(for: plan).map(\.key)
                        var streamed: [Int64] = []
                        try reader.forEachRow(for: plan) { streamed.append($0.key) }
                        #expect(
                            got == want,
                            "rows(for:) offset \(offset) limit \(String(describing: limit)) sorted \(sorted)")
                        #expect(
                            streamed == want,
                            "forEachRow offset \(offset) limit \(String(describing: limit)) sorted \(sorted)")
                        if let estimate = reader.expectedRowCount(for: plan) {
                            #expect(estimate >= 0 && estimate <= 5)
                        }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == Self.numbers.count * (Self.numbers.count + 1) * 4)
    }

    @Test(
        "through a context a negative offset or limit is refused with misuse; Int.max gives the rows of that window",
        arguments: EngineKind.allCases)
    func contextWindows(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        try await container.performUnitOfWork { context in
            for index in 0..<3 {
                let account = Account(context: context)
                account.name = "account \(index)"
            }
            try context.save()
        }
        let context = container.newBackgroundContext()
        let refused: [(String, FetchRequest<Account>)] = [
            ("offset -1", FetchRequest(fetchOffset: -1)),
            ("offset Int.min", FetchRequest(fetchOffset: Int.min)),
            ("limit -1", FetchRequest(fetchLimit: -1)),
            ("limit Int.min", FetchRequest(fetchLimit: Int.min)),
        ]
        // The body runs on the context's queue, outside the test's task: it reports what it saw
        // and the test records issues afterwards.
        let outcomes = try await context.perform {
            () throws -> (wrong: [String], pastEnd: Int, fromSecond: [String], counted: Int) in
            var wrong: [String] = []
            for (label, request) in refused {
                for call in ["fetch", "count"] {
                    do {
                        if call == "fetch" {
                            _ = try context.fetch(request)
                        } else {
                            _ = try context.count(for: request)
                        }
                        wrong.append("\(call) with \(label) gave rows")
                    } catch StrataError.misuse {
                        continue
                    } catch {
                        wrong.append("\(call) with \(label) threw \(String(reflecting: error))")
                    }
                }
            }
            let sorted = [SortDescriptor(\Account.name)]
            return (
                wrong,
                try context.fetch(FetchRequest<Account>(sortBy: sorted, fetchOffset: Int.max)).count,
                try context.fetch(FetchRequest<Account>(sortBy: sorted, fetchLimit: Int.max, fetchOffset: 1)).map(
                    \.name),
                try context.count(for: FetchRequest<Account>(fetchLimit: Int.max, fetchOffset: Int.max))
            )
        }
        #expect(outcomes.wrong.isEmpty, "expected StrataError.misuse: \(outcomes.wrong)")
        #expect(outcomes.pastEnd == 0)
        #expect(outcomes.fromSecond == ["account 1", "account 2"])
        #expect(outcomes.counted == 0)
    }
}
