import Foundation
import Strata
import StrataStorage

/// A save hands batches to the engine as set writes when it can, and works the others out itself
/// (a batch whose entities another batch of the save reaches, for one). Both paths must give the
/// same rows, results, versions and history.
enum BatchPathChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            BatchWriteChecks.group,
            """
            an update, an upsert and a cascading delete give the same rows, versions, results and history \
            whether the engine runs them or the core works them out
            """,
            samePaths),
        ConformanceCheck(
            "Projections", "a predicate with a negative constant runs in the engine, with the right rows",
            negativeConstants),
    ]

    static func negativeConstants(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let ids = try await container.performUnitOfWork { context in
            let entries = ([-10, -5, 0, 7] as [Int64]).map { amount in
                let entry = KitEntry(context: context)
                entry.amount = amount
                return entry
            }
            try context.save()
            return entries.map(\.objectID)
        }
        let found = try await container.read { context in
            try context.fetchObjectIDs(FetchRequest<KitEntry>(predicate: #Predicate { $0.amount >= -5 }))
        }
        try kit.expectEqual(Set(found), Set(ids[1...]), "entries with amount >= -5")
        let limit: Int64 = 5
        let below = try await container.read { context in
            try context.fetchObjectIDs(FetchRequest<KitEntry>(predicate: #Predicate { $0.amount < -limit }))
        }
        try kit.expectEqual(below, [ids[0]], "entries with amount < -limit")
    }

    /// What a store holds after the job (every row's values and version, per entity, keys left
    /// out), and what the job's save reported.
    struct Outcome: Equatable, Sendable {
        var rows: [String: [String]] = [:]
        var results: [String] = []
        var history: [String] = []
    }

    static func samePaths(_ kit: ConformanceHarness) async throws {
        let direct = try await run(kit, configuration: try kit.otherConfiguration("direct"), forced: false)
        let worked = try await run(kit, configuration: try kit.otherConfiguration("worked"), forced: true)
        for entity in ["Entry", "Account", "Owner", "Pet", "Passport"] {
            try kit.expectEqual(
                direct.rows[entity] ?? [], worked.rows[entity] ?? [], "\(entity) rows (values, version)")
        }
        try kit.expectEqual(direct.results, worked.results, "savedBatches")
        try kit.expectEqual(direct.history, worked.history, "the save's history")
        try kit.expectEqual(
            direct.results,
            ["update: 3 updated", "insert: 1 inserted, 1 updated, 1 ignored", "delete: 6 deleted, 2 updated"],
            "the batches' results")
        try kit.expectEqual(direct.rows["Pet"]?.count, 2, "pets left")
    }

    static func run(
        _ kit: ConformanceHarness, configuration: EngineConfiguration, forced: Bool
    ) async throws
        -> Outcome
    {
        let container = try PersistentContainer(schema: KitModels.schema, engine: configuration)
        try await container.performUnitOfWork { context in
            for index in 0..<3 {
                let owner = KitOwner(context: context)
                owner.name = "o\(index)"
                for pet in 0..<2 {
                    let animal = KitPet(context: context)
                    animal.name = "p\(index).\(pet)"
                    animal.owner = owner
                }
                let passport = KitPassport(context: context)
                passport.number = "n\(index)"
                passport.holder = owner
            }
            for amount in [5, 10, 20, 30] as [Int64] {
                let entry = KitEntry(context: context)
                entry.amount = amount
            }
            for (name, balance) in [("a", 1), ("b", 2)] as [(String, Int64)] {
                let account = KitAccount(context: context)
                account.name = name
                account.balance = balance
            }
            try context.save()
        }
        let tokenBefore = try await container.currentHistoryToken()
        let results = try await container.performUnitOfWork { context in
            if forced {
                // Batches that change nothing but reach the same entities: every batch of this
                // save is then worked out by the core.
                try context.batchUpdate(
                    KitEntry.self, where: #Predicate { $0.amount == 999_999 }, set: [.value(\.memo, "-")])
                try context.batchUpdate(
                    KitAccount.self, where: #Predicate { $0.name == "-" }, set: [.value(\.balance, 0)])
                try context.batchUpdate(KitPet.self, where: #Predicate { $0.name == "-" }, set: [.value(\.name, "-")])
            }
            try context.batchUpdate(KitEntry.self, where: #Predicate { $0.amount >= 10 }, set: [.add(\.amount, 5)])
            let rows: [(String, Int64)] = [("a", 1), ("b", 7), ("c", 3)]
            try context.batchInsert(
                KitAccount.self, from: rows, onConflict: .update(matching: [\.name], setting: [\.balance])
            ) { row, values in
                values[\.name] = row.0
                values[\.balance] = row.1
            }
            try context.batchDelete(KitOwner.self, where: #Predicate { $0.name == "o0" || $0.name == "o1" })
            try context.save()
            return context.savedBatches.suffix(3).map { result in
                switch result.kind {
                case .update: "update: \(result.updatedCount) updated"
                case .insert:
                    "insert: \(result.insertedCount) inserted, \(result.updatedCount) updated, "
                        + "\(result.ignoredCount) ignored"
                case .delete: "delete: \(result.deletedCount) deleted, \(result.updatedCount) updated"
                }
            }
        }
        var outcome = Outcome()
        outcome.results = results
        outcome.history = try await container.history(after: tokenBefore).flatMap { transaction in
            transaction.changes.map { change in
                let properties = change.kind == .update ? " \(change.changedProperties.sorted())" : ""
                let tombstone = change.tombstone.keys.sorted().map {
                    "\($0)=\(change.tombstone[$0].map(String.init(describing:)) ?? "")"
                }
                return "\(change.objectID.entityName) \(change.kind)\(properties) \(tombstone)"
            }
        }.sorted()
        container.close()
        let engine = try configuration.open(KitModels.schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        for entity in KitModels.schema.storeSchema.entities {
            outcome.rows[entity.name] = try reader.rows(for: FetchPlan(entity: entity.number)).map {
                "\($0.values.map(String.init(describing:)).joined(separator: ", ")) v\($0.version)"
            }.sorted()
        }
        return outcome
    }
}
