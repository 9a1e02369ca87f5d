import Foundation
import Strata

/// Batch writes are recorded in persistent history like any save (inserted, updated and deleted
/// IDs, changed properties, tombstones) and reach observers, in this process and from another.
enum BatchHistoryChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            BatchWriteChecks.group,
            "a save's batches are one history transaction: inserts, updates with their properties, deletes with "
                + "tombstones",
            recorded),
        ConformanceCheck(
            BatchWriteChecks.group, "an observer receives a batch committed by another process, with every row",
            crossProcess),
    ]

    static func recorded(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (ada, rex) = try await container.performUnitOfWork { context in
            let owner = KitOwner(context: context)
            owner.name = "Ada"
            let pet = KitPet(context: context)
            pet.name = "Rex"
            pet.owner = owner
            try context.save()
            return (owner.objectID, pet.objectID)
        }
        _ = try await container.makeAccount("kept", balance: 1)
        let start = try await container.currentHistoryToken()
        let receiving = kit.receive(1, from: container.changes(after: start))
        let results = try await container.performUnitOfWork { context in
            context.transactionAuthor = "batcher"
            try context.batchInsert(KitAccount.self, from: ["new1", "new2"]) { name, values in values[\.name] = name }
            try context.batchUpdate(KitAccount.self, where: #Predicate { $0.name == "kept" }, set: [.add(\.balance, 1)])
            try context.batchDelete(KitOwner.self, where: nil)
            try context.save()
            return context.savedBatches
        }
        let history = try await container.history(after: start)
        try kit.expectEqual(history.count, 1, "history transactions of the save")
        let inserted = results[0].insertedIDs
        let updated = results[1].updatedIDs
        try kit.expectEqual(
            history[0].summary,
            (inserted.map { "\($0.label) insert \(insertedProperties)" }
                + updated.map { "\($0.label) update [\"balance\"]" }
                + ["\(ada.label) delete []", "\(rex.label) delete []"]).sorted(),
            "the transaction's changes")
        try kit.expectEqual(history[0].author, "batcher", "the author")
        let tombstones = Dictionary(
            uniqueKeysWithValues: history[0].changes.filter { $0.kind == .delete }.map {
                ($0.objectID, $0.tombstoneValue("name", as: String.self) ?? "none")
            })
        try kit.expectEqual(tombstones, [ada: "Ada", rex: "Rex"], "the deleted rows' tombstones")
        let received = try await kit.value(of: receiving, "the observer receiving the batch transaction")
        try kit.expectEqual(received.map(\.summary), history.map(\.summary), "what the observer received")
    }

    /// An insert's change lists every property of the entity.
    static let insertedProperties = "[\"balance\", \"currency\", \"entries\", \"name\", \"note\", \"tags\"]"

    static let peerRows = 30

    static func crossProcess(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await container.performUnitOfWork { context in
            try context.batchInsert(KitAccount.self, from: 0..<peerRows) { index, values in
                values[\.name] = index % 3 == 0 ? "gone-\(index)" : "stay-\(index)"
            }
            try context.save()
        }
        let receiving = kit.receive(1, from: container.changes())
        try await kit.inOtherOpener(["batch", "--store", kit.configuration.location.path], "the peer") {
            try await peerBatch(engine: $0)
        }
        let received = try await kit.value(of: receiving, "receiving the peer's batch")
        try kit.expectEqual(received.first?.author, "peer-batch", "the author of the received transaction")
        let kinds = received.first.map { transaction in
            Dictionary(grouping: transaction.changes, by: { "\($0.kind)" }).mapValues(\.count)
        }
        try kit.expectEqual(kinds, ["update": 20, "delete": 10], "changes of the received transaction")
        let balances = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>()).map(\.balance)
        }
        try kit.expectEqual(balances, Array(repeating: 1, count: 20), "rows after the peer's batch")
    }

    /// The peer's side: one save with a batch delete and a batch update.
    static func peerBatch(engine: EngineConfiguration) async throws {
        let container = try PersistentContainer(schema: KitModels.schema, engine: engine)
        defer { container.close() }
        try await container.performUnitOfWork { context in
            context.transactionAuthor = "peer-batch"
            try context.batchDelete(KitAccount.self, where: #Predicate { $0.name.starts(with: "gone") })
            try context.batchUpdate(KitAccount.self, where: nil, set: [.add(\.balance, 1)])
            try context.save()
        }
    }
}
