import Foundation
import Strata

/// The edges of batch arithmetic, the same on every engine: arithmetic that gives NaN is refused
/// naming the row, a NaN operand is refused when the batch is staged, and a batch update counts
/// the rows an earlier batch of the same save inserted.
enum BatchArithmeticChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            BatchWriteChecks.group,
            """
            a batch update whose arithmetic gives NaN (infinity minus infinity, zero times infinity) is \
            .validation naming the entity, attribute and row, and writes nothing; a NaN operand is refused at staging
            """,
            notANumber),
        ConformanceCheck(
            BatchWriteChecks.group,
            "a batch update counts the rows an earlier batch of the same save inserted",
            updateCountsInsertedRows),
    ]

    // MARK: NaN

    static func notANumber(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (infinite, zero) = try await container.performUnitOfWork { context in
            let infinite = KitSample(context: context)
            infinite.double = .infinity
            infinite.text = "infinite"
            let zero = KitSample(context: context)
            zero.double = 0
            zero.text = "zero"
            try context.save()
            return (infinite.objectID, zero.objectID)
        }
        func refused(
            _ what: String, row: ObjectID, _ batches: @escaping @Sendable (ObjectContext) throws -> Void
        ) async throws {
            let error = try await kit.expectStrataError(what) {
                try await container.performUnitOfWork { context in
                    try batches(context)
                    try context.save()
                }
            }
            guard case .validation(let issues) = error, issues.count == 1, issues[0].entity == "Sample",
                issues[0].property == "double", issues[0].message.contains("NaN"),
                issues[0].message.contains(row.uriString)
            else { throw kit.fail("\(what): expected .validation naming Sample.double and \(row), got \(error)") }
        }
        // One batch (which an engine could run itself) and two batches on one entity (the core's).
        try await refused("adding -infinity to infinity", row: infinite) {
            try $0.batchUpdate(KitSample.self, where: nil, set: [.add(\.double, -.infinity)])
        }
        try await refused("multiplying infinity by zero", row: infinite) {
            try $0.batchUpdate(
                KitSample.self, where: #Predicate { $0.text == "infinite" }, set: [.multiply(\.double, by: 0)])
        }
        try await refused("multiplying zero by infinity", row: zero) {
            try $0.batchUpdate(
                KitSample.self, where: #Predicate { $0.text == "zero" }, set: [.multiply(\.double, by: .infinity)])
        }
        try await refused("setting infinity, then adding -infinity, in one save", row: infinite) {
            try $0.batchUpdate(
                KitSample.self, where: #Predicate { $0.text == "infinite" }, set: [.value(\.double, .infinity)])
            try $0.batchUpdate(
                KitSample.self, where: #Predicate { $0.text == "infinite" }, set: [.add(\.double, -.infinity)])
        }
        for (what, assignment) in [
            ("adding NaN", BatchAssignment<KitSample>.add(\.double, .nan)),
            ("multiplying by NaN", .multiply(\.double, by: .nan)),
            ("setting NaN", .value(\.double, .nan)),
        ] {
            let error = try await kit.expectStrataError("\(what) at staging") {
                try await container.performUnitOfWork { context in
                    try context.batchUpdate(KitSample.self, where: nil, set: [assignment])
                }
            }
            guard case .validation(let issues) = error, issues.first?.property == "double" else {
                throw kit.fail("\(what): expected .validation at staging naming Sample.double, got \(error)")
            }
        }
        let stored = try await container.read { context in
            try context.fetch(FetchRequest<KitSample>(sortBy: [SortDescriptor(\.text)])).map {
                "\($0.text)=\($0.double)"
            }
        }
        try kit.expectEqual(stored, ["infinite=inf", "zero=0.0"], "the rows after the refused batches")
        // Arithmetic with an infinity that gives no NaN is written.
        try await container.performUnitOfWork { context in
            try context.batchUpdate(
                KitSample.self, where: #Predicate { $0.text == "zero" }, set: [.add(\.double, .infinity)])
            try context.save()
        }
        let after = try await container.read { context in
            try context.fetch(FetchRequest<KitSample>(sortBy: [SortDescriptor(\.text)])).map {
                "\($0.text)=\($0.double)"
            }
        }
        try kit.expectEqual(after, ["infinite=inf", "zero=inf"], "infinity added to zero")
    }

    // MARK: Counts

    static func updateCountsInsertedRows(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let old = try await container.makeAccount("old", balance: 2)
        let results = try await container.performUnitOfWork { context in
            try context.batchInsert(KitAccount.self, from: ["new"]) { name, values in
                values[\.name] = name
                values[\.balance] = 2
            }
            try context.batchUpdate(KitAccount.self, where: #Predicate { $0.balance == 2 }, set: [.add(\.balance, 10)])
            try context.save()
            return context.savedBatches
        }
        try kit.expectEqual(results.map(\.insertedCount), [1, 0], "rows inserted per batch")
        try kit.expectEqual(results.map(\.updatedCount), [0, 2], "rows updated per batch")
        try kit.expectEqual(Set(results[1].updatedIDs), Set(results[0].insertedIDs + [old]), "the updated rows")
        let stored = try await BatchWriteChecks.names(container)
        try kit.expectEqual(stored, ["new", "old"], "the rows")
        let balances = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.balance)
        }
        try kit.expectEqual(balances, [12, 12], "both rows updated")
    }
}
