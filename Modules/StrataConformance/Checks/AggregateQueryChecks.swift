import Foundation
import Strata

/// Aggregates through the object graph's API: typed results, groups by attributes and by a
/// to-one relationship, the same snapshot as the rest of the `perform`, refusal over unsaved
/// changes.
enum AggregateQueryChecks {
    static let group = "Aggregates"

    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            group, "count, sum, minimum, maximum and average, grouped by an attribute and a to-one relationship",
            grouped),
        ConformanceCheck(group, "aggregates over no rows, typed helpers and an overflowing sum", edges),
        ConformanceCheck(
            group,
            """
            an integer sum is exact whatever order its rows come in: only a total past Int64 fails, never an \
            average
            """,
            exactIntegerSums),
        ConformanceCheck(
            group,
            """
            a real sum past the finite range is infinity and one of +infinity and -infinity is NaN, and the \
            perform reads on
            """,
            realSums),
        ConformanceCheck(
            group, "aggregates read the perform's snapshot and refuse while the entity has unsaved changes",
            isolation),
    ]

    /// Two accounts; entries with memos "a"/"b" and amounts.
    static func seed(_ container: PersistentContainer) async throws -> (ObjectID, ObjectID) {
        try await container.performUnitOfWork { context in
            let first = KitAccount(context: context)
            first.name = "first"
            let second = KitAccount(context: context)
            second.name = "second"
            let rows: [(KitAccount?, String, Int64)] = [
                (first, "a", 10), (first, "a", -4), (first, "b", 7), (second, "a", 100), (second, "b", 1),
                (second, "b", 2), (nil, "a", 5),
            ]
            for (account, memo, amount) in rows {
                let entry = KitEntry(context: context)
                entry.account = account
                entry.memo = memo
                entry.amount = amount
            }
            try context.save()
            return (first.objectID, second.objectID)
        }
    }

    static func grouped(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (first, second) = try await seed(container)
        let (byAccount, byBoth) = try await container.read { context in
            let request = FetchRequest<KitEntry>()
            let byAccount = try context.aggregate(
                request, groupedBy: [\.account],
                [.count, .sum(\.amount), .minimum(\.amount), .maximum(\.amount), .average(\.amount)])
            let byBoth = try context.aggregate(
                FetchRequest<KitEntry>(predicate: #Predicate { $0.amount > 0 }), groupedBy: [\.memo, \.account],
                [.sum(\.amount)])
            return (byAccount, byBoth)
        }
        func describe(_ row: AggregateResult) -> String {
            let group = row.group.map {
                $0.objectID.map { $0 == first ? "first" : $0 == second ? "second" : "?" } ?? "nil"
            }
            let values = row.values.map { value in
                value.integer.map(String.init) ?? value.double.map { String(format: "%.3f", $0) } ?? "nil"
            }
            return (group + values).joined(separator: " ")
        }
        try kit.expectEqual(
            byAccount.map(describe),
            ["nil 1 5 5 5 5.000", "first 3 13 -4 10 4.333", "second 3 103 1 100 34.333"],
            "grouped by account (nil first, then by key)")
        let memoRows = byBoth.map { row in
            let account = row.group[1].objectID == first ? "first" : row.group[1].isNil ? "nil" : "second"
            return "\(row.group[0].string ?? "?") \(account) \(row.values[0].integer ?? 0)"
        }
        try kit.expectEqual(
            memoRows, ["a nil 5", "a first 10", "a second 100", "b first 7", "b second 3"],
            "grouped by memo then account, over a predicate")
    }

    static func edges(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let empty = try await container.read { context in
            try context.aggregate(
                FetchRequest<KitEntry>(), [.count, .sum(\.amount), .minimum(\.amount), .average(\.amount)])
        }
        try kit.expectEqual(empty.count, 1, "one group over no rows")
        try kit.expectEqual(empty[0].values[0].integer, 0, "count over no rows")
        try kit.expectEqual(empty[0].values[1].integer, 0, "sum over no rows")
        try kit.expect(empty[0].values[2].isNil && empty[0].values[3].isNil, "minimum and average over no rows are nil")
        let realSum = try await container.read { context in
            try kit.first(context.aggregate(FetchRequest<KitSample>(), [.sum(\.double)]), "aggregate rows").values[0]
        }
        try kit.expectEqual(realSum.double, 0, "the sum of a Double attribute over no rows is a Double 0")
        _ = try await seed(container)
        let (sum, low, high, mean, names) = try await container.read { context in
            (
                try context.sum(\KitEntry.amount, of: FetchRequest()),
                try context.minimum(\KitEntry.memo, of: FetchRequest()),
                try context.maximum(\KitEntry.amount, of: FetchRequest(predicate: #Predicate { $0.memo == "b" })),
                try context.average(\KitEntry.amount, of: FetchRequest(predicate: #Predicate { $0.memo == "zzz" })),
                try context.aggregate(FetchRequest<KitAccount>(), [.maximum(\.name), .count(\.note)])
            )
        }
        try kit.expectEqual(sum, 121, "sum")
        try kit.expectEqual(low, "a", "minimum of a text")
        try kit.expectEqual(high, 7, "maximum over a predicate")
        try kit.expectEqual(mean, nil, "average over no rows")
        try kit.expectEqual(names[0].values[0].string, "second", "maximum name")
        try kit.expectEqual(names[0].values[1].integer, 0, "count of non-nil notes")
        _ = try await container.makeAccount("big1", balance: .max)
        _ = try await container.makeAccount("big2", balance: 1)
        let error = try await kit.expectStrataError("a sum past Int64.max") {
            _ = try await container.read { try $0.sum(\KitAccount.balance, of: FetchRequest()) }
        }
        guard case .validation(let issues) = error, issues.first?.entity == "Account",
            issues.first?.property == "balance"
        else { throw kit.fail("an overflowing sum gives .validation naming Account.balance, not \(error)") }
        // A read: its message does not speak of writing.
        let message = error.description
        guard message.hasPrefix("Aggregate failed"), !message.contains("written") else {
            throw kit.fail("an overflowing sum's message says the aggregate failed, not \(message)")
        }
    }

    static func exactIntegerSums(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        // In key order: a running total passes Int64.max at "x2" and comes back at "x3".
        for (name, balance) in [("x1", Int64.max), ("x2", 1), ("x3", -1), ("y1", .max), ("y2", .max)] {
            _ = try await container.makeAccount(name, balance: balance, note: String(name.prefix(1)))
        }
        let xs = #Predicate<KitAccount> { $0.note == "x" }
        let ys = #Predicate<KitAccount> { $0.note == "y" }
        let (sum, mean, big, grouped) = try await container.read { context in
            (
                try context.sum(\KitAccount.balance, of: FetchRequest(predicate: xs)),
                try context.average(\KitAccount.balance, of: FetchRequest(predicate: xs)),
                try context.average(\KitAccount.balance, of: FetchRequest(predicate: ys)),
                try context.aggregate(
                    FetchRequest<KitAccount>(), groupedBy: [\.note], [.count, .average(\.balance)])
            )
        }
        let max = Int128(Int64.max)
        try kit.expectEqual(sum, .max, "the sum of Int64.max, 1 and -1, in that order")
        try kit.expectEqual(mean, Double(max) / 3, "their average")
        try kit.expectEqual(big, Double(max * 2) / 2, "the average of Int64.max twice (its sum is past Int64)")
        let groups = grouped.map { row in
            "\(row.group[0].string ?? "nil") \(row.values[0].integer ?? -1) \(row.values[1].double ?? 0)"
        }
        try kit.expectEqual(
            groups, ["x 3 \(Double(max) / 3)", "y 2 \(Double(max * 2) / 2)"], "grouped averages, one past Int64")
        let error = try await kit.expectStrataError("a sum whose total is past Int64") {
            _ = try await container.read { try $0.sum(\KitAccount.balance, of: FetchRequest(predicate: ys)) }
        }
        guard case .validation(let issues) = error, issues.first?.property == "balance" else {
            throw kit.fail("a total past Int64 gives .validation naming Account.balance, not \(error)")
        }
    }

    static func realSums(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let samples: [(String, Double)] = [
            ("big", .greatestFiniteMagnitude), ("big", .greatestFiniteMagnitude), ("nan", .infinity),
            ("nan", -.infinity), ("one", 1.5),
        ]
        try await container.performUnitOfWork { context in
            for (text, double) in samples {
                let sample = KitSample(context: context)
                sample.text = text
                sample.double = double
            }
            try context.save()
        }
        let big = #Predicate<KitSample> { $0.text == "big" }
        let nan = #Predicate<KitSample> { $0.text == "nan" }
        // All in one perform: a sum the engine cannot compute must not leave its snapshot unusable.
        let (bigSum, bigMean, nanSum, nanMean, grouped, count) = try await container.read { context in
            (
                try context.sum(\KitSample.double, of: FetchRequest(predicate: big)),
                try context.average(\KitSample.double, of: FetchRequest(predicate: big)),
                try context.sum(\KitSample.double, of: FetchRequest(predicate: nan)),
                try context.average(\KitSample.double, of: FetchRequest(predicate: nan)),
                try context.aggregate(FetchRequest<KitSample>(), groupedBy: [\.text], [.sum(\.double), .count]),
                try context.count(for: FetchRequest<KitSample>())
            )
        }
        try kit.expectEqual(bigSum, .infinity, "the sum of two greatest finite doubles")
        try kit.expectEqual(bigMean, .infinity, "their average (the sum divided by the count)")
        try kit.expect(nanSum.isNaN, "the sum of +infinity and -infinity is NaN, not \(nanSum)")
        try kit.expect(nanMean?.isNaN == true, "their average is NaN, not \(String(describing: nanMean))")
        // (NaN's sign is the engine's: any NaN reads as "nan".)
        let groups = grouped.map { row in
            let sum = row.values[0].double ?? 0
            return "\(row.group[0].string ?? "?") \(sum.isNaN ? "nan" : "\(sum)") \(row.values[1].integer ?? 0)"
        }
        try kit.expectEqual(groups, ["big inf 2", "nan nan 2", "one 1.5 1"], "grouped real sums")
        try kit.expectEqual(count, samples.count, "a count after them in the same perform")
    }

    static func isolation(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await seed(container)
        let context = container.newBackgroundContext(named: "reader")
        let written = DispatchSemaphore(value: 0)
        let (before, after) = try await context.perform {
            let before = try context.sum(\KitEntry.amount, of: FetchRequest())
            Task.detached {
                let writer = container.newBackgroundContext(named: "writer")
                try? await writer.perform {
                    let entry = KitEntry(context: writer)
                    entry.amount = 1_000
                    try writer.save()
                }
                written.signal()
            }
            written.wait()
            return (before, try context.sum(\KitEntry.amount, of: FetchRequest()))
        }
        try kit.expectEqual([before, after], [121, 121], "sums inside one perform, before and after another commit")
        let fresh = try await container.read { try $0.sum(\KitEntry.amount, of: FetchRequest()) }
        try kit.expectEqual(fresh, 1_121, "a fresh context sees the commit")
        let error = try await kit.expectStrataError("aggregating over unsaved changes") {
            try await container.performUnitOfWork { context in
                KitEntry(context: context).amount = 5
                _ = try context.sum(\KitEntry.amount, of: FetchRequest())
            }
        }
        guard case .misuse = error else { throw kit.fail("unsaved changes give .misuse, not \(error)") }
    }
}
