import Foundation
import Strata

/// Data survives close and reopen; keys are never reused; the schema version is enforced.
enum PersistenceChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Persistence", "data and relationships survive close and reopen", survives),
        ConformanceCheck(
            "Persistence", "primary keys are never reused, even after deletes and reopening", keysNotReused),
        ConformanceCheck(
            "Persistence", "a higher schema version of the same shape opens; a lower one is a typed error",
            schemaVersion),
        ConformanceCheck(
            "Persistence",
            "a durable store keeps its data once every container closed; any other is then gone, and reopens empty",
            lastClose),
    ]

    /// Closes every engine on the store, then opens it again: a durable engine's store is the
    /// same store with its data; an engine that is not durable (``EngineCapabilities/isDurable``)
    /// must not pretend to be, its store being gone with its last container: the name reopens as
    /// a new, empty store with another identifier.
    static func lastClose(_ kit: ConformanceHarness) async throws {
        let first = try kit.open()
        _ = try await first.makeAccount("Saved")
        let identifier = first.storeIdentifier
        kit.releaseKeepers()
        first.close()
        let reopened = try kit.open()
        defer { reopened.close() }
        let names = try await reopened.read { try $0.fetch(FetchRequest<KitAccount>()).map(\.name) }
        if kit.capabilities.isDurable {
            try kit.expectEqual(names, ["Saved"], "the accounts after the last container closed and the store reopened")
            try kit.expectEqual(reopened.storeIdentifier, identifier, "the store's identifier after reopening")
        } else {
            try kit.expectEqual(names, [], "the accounts of a store that is not durable, reopened after its last close")
            try kit.expect(
                reopened.storeIdentifier != identifier,
                "a store that is not durable, reopened after its last close, has a new identifier")
        }
    }

    static func survives(_ kit: ConformanceHarness) async throws {
        var sampleID: ObjectID?
        var accountID: ObjectID?
        do {
            let container = try kit.open()
            (sampleID, accountID) = try await container.performUnitOfWork { context in
                let sample = KitSample(context: context)
                sample.text = CRUDChecks.oddText
                sample.data = CRUDChecks.bigData
                sample.date = CRUDChecks.early
                sample.optionalInt64 = .min
                let account = KitAccount(context: context)
                account.name = "Kept"
                for amount in 1...3 {
                    let entry = KitEntry(context: context)
                    entry.amount = Int64(amount)
                    entry.account = account
                }
                try context.save()
                return (sample.objectID, account.objectID)
            }
        }
        let reopened = try kit.open()
        guard let sampleID, let accountID else { throw kit.fail("nothing was saved") }
        let ok = try await reopened.read { context in
            let sample = try context.existingObject(with: sampleID, as: KitSample.self)
            let account = try context.existingObject(with: accountID, as: KitAccount.self)
            return [
                sample.text.utf8.elementsEqual(CRUDChecks.oddText.utf8), sample.data == CRUDChecks.bigData,
                sample.date == CRUDChecks.early,
                sample.optionalInt64 == .min, account.name == "Kept",
                account.entries.map(\.amount).sorted() == [1, 2, 3],
            ]
        }
        try kit.expect(!ok.contains(false), "values after reopening: \(ok)")
    }

    static func keysNotReused(_ kit: ConformanceHarness) async throws {
        var highest: Int64 = 0
        do {
            let container = try kit.open()
            for index in 0..<3 { highest = max(highest, try await container.makeAccount("k\(index)").primaryKey!) }
            try await container.performUnitOfWork { context in
                for account in try context.fetch(FetchRequest<KitAccount>()) { context.delete(account) }
                try context.save()
            }
        }
        let reopened = try kit.open()
        let next = try await reopened.makeAccount("after").primaryKey!
        try kit.expect(next > highest, "a key after reopening (\(next)) must exceed every earlier key (\(highest))")
    }

    /// The version number alone never decides: the same classes at a higher version open the
    /// store (and record the new version); an older model is refused, the store untouched.
    static func schemaVersion(_ kit: ConformanceHarness) async throws {
        _ = try await kit.open().makeAccount("Kept")
        let newer = try Schema(version: 2, KitModels.types)
        let names = try await kit.open(schema: newer).read { try $0.fetch(FetchRequest<KitAccount>()).map(\.name) }
        try kit.expectEqual(names, ["Kept"], "accounts after opening with version 2")
        let error = try kit.expectStrataError("opening with version 1 again", sync: { _ = try kit.open() })
        try kit.expectEqual(error, .storeNewerThanModel(storeVersion: 2, modelVersion: 1), "the error")
    }
}
