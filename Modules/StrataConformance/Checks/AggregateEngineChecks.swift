import Foundation
import Strata
import StrataStorage

/// The engine's set-based reads: `StoreReader.aggregate(_:)` must give exactly what
/// `AggregateAccumulator` (the reference semantics) gives over the rows of `rows(for:)`: the same
/// groups in the same order, the same values of the same storage class, the same overflow error.
enum AggregateEngineChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Aggregates",
            "the reference fold gives the hand-computed groups, orders and values of a small case",
            handComputed),
        ConformanceCheck(
            "Aggregates",
            """
            aggregate(_:) equals the reference fold for every function, grouping (none, one and two columns, \
            nullable text, reference) and filter, over nulls, negatives, reals, non-ASCII texts and no rows
            """,
            matchesReference),
        ConformanceCheck(
            "Aggregates",
            """
            an integer sum past Int64 is the reference's .validation error, an average of it is not, and a filter \
            that leaves it out is not
            """,
            sumOverflow),
        ConformanceCheck(
            "Aggregates",
            """
            aggregate(_:) equals the reference over group values that run together, control bytes, empty \
            against null, -0.0 against 0.0, 300 groups, sums of texts and blobs, and an empty entity
            """,
            keyEdges),
    ]

    // MARK: Data

    /// Texts whose byte order differs from other orders: case, a combining accent against the
    /// precomposed letter, scripts past U+07FF, the empty text and U+0000.
    static let texts = ["a", "B", "é", "e\u{301}", "Ω", "日本", "", "a\u{0}b", "z", "a"]

    /// Reals that add exactly in any order, so that a sum does not depend on the scan's order.
    static func real(_ index: Int) -> Double { Double((index * 7) % 13 - 6) * 0.25 }

    /// Seeds samples (every column kind, nulls and equal groups), accounts and their entries (a
    /// reference column, with an account that has none and entries with none), and members
    /// whose `org` sums past `Int64` among the admins only.
    static func seed(_ container: PersistentContainer) async throws {
        try await container.performUnitOfWork { context in
            for index in 0..<24 {
                let sample = KitSample(context: context)
                sample.flag = index % 3 == 0
                sample.int = index % 4
                sample.int64 = Int64((index * 37) % 23) - 11
                sample.double = real(index)
                sample.text = texts[index % texts.count]
                sample.data = Data([UInt8(index % 5), 0xFF])
                sample.optionalInt64 = index % 5 == 0 ? nil : Int64(index * 1_000_003) * (index % 2 == 0 ? 1 : -1)
                sample.optionalDouble = index % 4 == 1 ? nil : real(index + 3)
                sample.optionalText = index % 6 == 2 ? nil : texts[(index * 5) % texts.count]
                sample.optionalFlag = index % 7 == 0 ? nil : index % 2 == 0
            }
            var accounts: [KitAccount] = []
            for (index, name) in ["north", "south", "east", "idle"].enumerated() {
                let account = KitAccount(context: context)
                account.name = name
                account.balance = Int64(index * 10)
                accounts.append(account)
            }
            for index in 0..<15 {
                let entry = KitEntry(context: context)
                entry.amount = Int64(index * index) - 40
                entry.memo = texts[(index * 3) % texts.count]
                entry.account = index % 5 == 4 ? nil : accounts[index % 3]
            }
            for (org, isAdmin) in [(Int.max - 5, true), (10, true), (3, false), (-4, false)] {
                let member = KitMember(context: context)
                member.org = org
                member.name = "member \(org)"
                member.isAdmin = isAdmin
            }
            try context.save()
        }
    }

    /// Entity and column numbers of the kit's store schema, by name.
    struct Columns {
        let schema: StoreSchema
        let kit: ConformanceHarness

        func entity(_ name: String) throws -> EntitySchema {
            guard let entity = schema.entities.first(where: { $0.name == name }) else {
                throw kit.fail("the kit schema has no \(name) entity")
            }
            return entity
        }

        func column(_ entity: EntitySchema, _ name: String) throws -> Int {
            guard let index = entity.columns.firstIndex(where: { $0.name == name }) else {
                throw kit.fail("\(entity.name) has no column \(name)")
            }
            return index
        }
    }

    /// The reference result: `AggregateAccumulator` over the rows of `rows(for:)`.
    static func reference(
        _ plan: AggregatePlan, _ reader: any StoreReader
    ) throws -> Result<[AggregateRow], StrataError> {
        let rows = try reader.rows(for: FetchPlan(entity: plan.entity, filter: plan.filter))
        var accumulator = AggregateAccumulator(plan)
        do throws(StrataError) {
            for row in rows { try accumulator.add(row.values) }
            return .success(try accumulator.checkedRows())
        } catch {
            return .failure(error)
        }
    }

    /// The engine's result, its `StrataError` kept as a value.
    static func engineResult(
        _ plan: AggregatePlan, _ reader: any StoreReader
    ) throws -> Result<[AggregateRow], StrataError> {
        do {
            return .success(try reader.aggregate(plan))
        } catch let error as StrataError {
            return .failure(error)
        }
    }

    /// Checks that the engine's result equals the reference, value for value and class for
    /// class (`StoredValue`'s `==` tells `.integer(0)` from `.real(0)`).
    static func expectReference(_ plan: AggregatePlan, _ reader: any StoreReader, _ kit: ConformanceHarness) throws {
        let expected = try reference(plan, reader)
        let actual = try engineResult(plan, reader)
        switch (actual, expected) {
        case (.success(let got), .success(let want)):
            try kit.expectEqual(got.count, want.count, "number of groups for \(plan)")
            for (index, (row, wanted)) in zip(got, want).enumerated() {
                try kit.expectEqual(row.group, wanted.group, "group \(index) for \(plan)")
                try kit.expectEqual(row.values, wanted.values, "values of group \(index) \(wanted.group) for \(plan)")
            }
        case (.failure(let got), .failure(let want)):
            try kit.expectEqual(got, want, "the error for \(plan)")
        default:
            throw kit.fail("aggregate(_:) for \(plan): expected \(expected), got \(actual)")
        }
    }

    // MARK: Checks

    static func handComputed(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let names = Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let member = try names.entity("Member")
        let org = try names.column(member, "org")
        let isAdmin = try names.column(member, "isAdmin")
        let entry = try names.entity("Entry")
        let amount = try names.column(entry, "amount")
        let memo = try names.column(entry, "memo")
        let engine = try kit.configuration.open(KitModels.schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }

        // The members that are not admins: org 3 and -4.
        let members = AggregatePlan(
            entity: member.number, filter: .compare(column: isAdmin, .equal, .integer(0)),
            functions: [
                .count, .countValues(column: org), .sum(column: org), .minimum(column: org), .maximum(column: org),
                .average(column: org),
            ])
        let expected = [
            AggregateRow(
                group: [], values: [.integer(2), .integer(2), .integer(-1), .integer(-4), .integer(3), .real(-0.5)])
        ]
        try kit.expectEqual(try reference(members, reader).get(), expected, "reference fold over two members")
        try kit.expectEqual(try reader.aggregate(members), expected, "aggregate(_:) over two members")

        // No rows: one group without grouping (count 0, sum 0, the rest null), none with it.
        let none = AggregatePlan(
            entity: member.number, filter: .constant(false),
            functions: [.count, .sum(column: org), .minimum(column: org), .average(column: org)])
        let empty = [AggregateRow(group: [], values: [.integer(0), .integer(0), .null, .null])]
        try kit.expectEqual(try reference(none, reader).get(), empty, "reference fold over no rows")
        try kit.expectEqual(try reader.aggregate(none), empty, "aggregate(_:) over no rows")
        var grouped = none
        grouped.groupBy = [isAdmin]
        try kit.expectEqual(try reference(grouped, reader).get(), [], "reference fold over no rows, grouped")
        try kit.expectEqual(try reader.aggregate(grouped), [], "aggregate(_:) over no rows, grouped")

        // Entry memos by UTF-8 bytes: the amounts are i² - 40 for i in 0..<15, the memo of i is
        // texts[3i mod 10]. Groups "" (i 2, 12: -36, 104), "B" (i 7: 9), "a" (i 0, 3, 10, 13:
        // -40, -31, 60, 129), "a\0b" (i 9: 41), "e\u{301}" (i 1, 11: -39, 81), "z" (i 6: -4),
        // "é" (i 4, 14: -24, 156), "Ω" (i 8: 24), "日本" (i 5: -15).
        let byMemo = AggregatePlan(
            entity: entry.number, groupBy: [memo], functions: [.count, .sum(column: amount), .maximum(column: amount)])
        let memos: [AggregateRow] = [
            ("", 2, 68, 104), ("B", 1, 9, 9), ("a", 4, 118, 129), ("a\u{0}b", 1, 41, 41), ("e\u{301}", 2, 42, 81),
            ("z", 1, -4, -4), ("é", 2, 132, 156), ("Ω", 1, 24, 24), ("日本", 1, -15, -15),
        ].map { AggregateRow(group: [.text($0.0)], values: [.integer($0.1), .integer($0.2), .integer($0.3)]) }
        try kit.expectEqual(try reference(byMemo, reader).get(), memos, "reference fold by memo")
        try kit.expectEqual(try reader.aggregate(byMemo), memos, "aggregate(_:) by memo")
    }

    static func matchesReference(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let names = Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let sample = try names.entity("Sample")
        let entry = try names.entity("Entry")
        let s = { (name: String) throws -> Int in try names.column(sample, name) }
        let flag = try s("flag")
        let int = try s("int")
        let int64 = try s("int64")
        let double = try s("double")
        let text = try s("text")
        let data = try s("data")
        let optionalInt64 = try s("optionalInt64")
        let optionalDouble = try s("optionalDouble")
        let optionalText = try s("optionalText")
        let optionalFlag = try s("optionalFlag")
        let amount = try names.column(entry, "amount")
        let memo = try names.column(entry, "memo")
        let account = try names.column(entry, "account")

        func every(_ column: Int, numeric: Bool = true) -> [AggregateFunction] {
            numeric
                ? [
                    .countValues(column: column), .sum(column: column), .minimum(column: column),
                    .maximum(column: column), .average(column: column),
                ]
                : [.countValues(column: column), .minimum(column: column), .maximum(column: column)]
        }
        let sampleFunctions: [AggregateFunction] =
            [.count] + every(int64) + every(double) + every(optionalInt64) + every(optionalDouble) + every(flag)
            + every(optionalFlag) + every(text, numeric: false) + every(optionalText, numeric: false)
            + every(data, numeric: false)
        let sampleFilters: [Filter?] = [
            nil,
            .compare(column: int64, .greaterThan, .integer(0)),
            .isNull(column: optionalText),
            .isNotNull(column: optionalDouble),
            .hasPrefix(column: text, prefix: "a"),
            .contains(column: text, substring: "\u{0}"),
            .or([.compare(column: double, .lessThan, .real(0)), .isIn(column: int, values: [.integer(3)])]),
            .not(.compare(column: optionalText, .equal, .text("é"))),
            .constant(false),
        ]
        let sampleGroupings: [[Int]] = [
            [], [optionalText], [text], [flag], [optionalFlag], [double], [optionalText, int], [int, optionalFlag],
            [data], [optionalInt64],
        ]
        let entryFunctions: [AggregateFunction] = [.count] + every(amount) + every(memo, numeric: false)
        let entryFilters: [Filter?] = [
            nil, .isNull(column: account), .compare(column: amount, .lessThanOrEqual, .integer(0)), .constant(false),
        ]
        let entryGroupings: [[Int]] = [[], [account], [memo], [account, memo], [memo, account]]

        var plans: [AggregatePlan] = []
        for filter in sampleFilters {
            for groupBy in sampleGroupings {
                plans.append(
                    AggregatePlan(entity: sample.number, filter: filter, groupBy: groupBy, functions: sampleFunctions))
            }
        }
        for filter in entryFilters {
            for groupBy in entryGroupings {
                plans.append(
                    AggregatePlan(entity: entry.number, filter: filter, groupBy: groupBy, functions: entryFunctions))
            }
        }
        // One function at a time, and a plan of no functions (groups alone).
        for function in sampleFunctions {
            plans.append(AggregatePlan(entity: sample.number, groupBy: [optionalText], functions: [function]))
        }
        // Narrow plans: filters on texts and blobs that nothing else reads (an engine that decodes
        // only the columns a plan uses must still decode the filter's).
        let narrow: [(Filter, [Int], [AggregateFunction])] = [
            (.hasPrefix(column: text, prefix: "a"), [flag], [.count, .sum(column: int64)]),
            (.compare(column: optionalText, .greaterThan, .text("a")), [], [.average(column: double)]),
            (.contains(column: text, substring: "\u{0}"), [], [.count]),
            (.isNull(column: optionalText), [int], [.count, .minimum(column: int64)]),
            (.isNotNull(column: optionalText), [int], [.count, .maximum(column: double)]),
            (.compare(column: data, .lessThan, .blob(Data([2, 0xFF]))), [], [.sum(column: double)]),
            (
                .isIn(column: text, values: [.text("é"), .text("Ω")]), [optionalFlag],
                [.countValues(column: optionalInt64)]
            ),
        ]
        for (filter, groupBy, functions) in narrow {
            plans.append(AggregatePlan(entity: sample.number, filter: filter, groupBy: groupBy, functions: functions))
        }
        plans.append(AggregatePlan(entity: sample.number, groupBy: [optionalText, flag], functions: []))
        plans.append(AggregatePlan(entity: sample.number, functions: []))

        let engine = try kit.configuration.open(KitModels.schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        try kit.expectEqual(try reader.count(entity: sample.number, filter: nil), 24, "samples stored")
        for plan in plans { try expectReference(plan, reader, kit) }
    }

    static func sumOverflow(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let names = Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let member = try names.entity("Member")
        let org = try names.column(member, "org")
        let isAdmin = try names.column(member, "isAdmin")
        let engine = try kit.configuration.open(KitModels.schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let overflow = StrataError.validation([
            ValidationIssue(
                entity: String(member.number), property: String(org), message: AggregateAccumulator.sumOverflowMessage)
        ])
        let throwing: [AggregatePlan] = [
            AggregatePlan(entity: member.number, functions: [.sum(column: org)]),
            AggregatePlan(
                entity: member.number, groupBy: [isAdmin], functions: [.maximum(column: org), .sum(column: org)]),
            AggregatePlan(
                entity: member.number, filter: .compare(column: isAdmin, .equal, .integer(1)),
                functions: [.sum(column: org)]),
            // Two summed integer columns: the error still names the one that overflows.
            AggregatePlan(entity: member.number, functions: [.sum(column: isAdmin), .sum(column: org)]),
        ]
        for plan in throwing {
            guard case .failure(let error) = try engineResult(plan, reader) else {
                throw kit.fail("aggregate(_:) for \(plan) did not report the overflow")
            }
            try kit.expectEqual(error, overflow, "the overflow error for \(plan)")
            try expectReference(plan, reader, kit)
        }
        // An average divides the exact sum: it never overflows, also next to a sum that fits.
        let averages: [AggregatePlan] = [
            AggregatePlan(entity: member.number, functions: [.count, .average(column: org)]),
            AggregatePlan(entity: member.number, functions: [.sum(column: isAdmin), .average(column: org)]),
            AggregatePlan(entity: member.number, groupBy: [isAdmin], functions: [.average(column: org)]),
        ]
        for plan in averages {
            guard case .success(let rows) = try engineResult(plan, reader) else {
                throw kit.fail("aggregate(_:) for \(plan) failed: an average of an integer sum past Int64 is a number")
            }
            try kit.expect(
                rows.allSatisfy { $0.values.allSatisfy { !$0.isNull } }, "every average of \(plan) is a number: \(rows)"
            )
            try expectReference(plan, reader, kit)
        }
        // Without the admins the sum is small; min and max never overflow.
        let fine: [AggregatePlan] = [
            AggregatePlan(
                entity: member.number, filter: .compare(column: isAdmin, .equal, .integer(0)),
                groupBy: [isAdmin], functions: [.sum(column: org), .average(column: org)]),
            AggregatePlan(
                entity: member.number, groupBy: [isAdmin],
                functions: [.minimum(column: org), .maximum(column: org), .countValues(column: org)]),
        ]
        for plan in fine { try expectReference(plan, reader, kit) }
        try kit.expectEqual(
            try reader.aggregate(fine[1]).map(\.values),
            [[.integer(-4), .integer(3), .integer(2)], [.integer(10), .integer(Int64(Int.max - 5)), .integer(2)]],
            "min, max and count per admin flag")
    }
}
