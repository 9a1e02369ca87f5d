import Foundation
import Strata

/// A deleted object's history change keeps the last stored values of its attributes marked
/// `.preserveAfterDeletion`, and only those, read back typed; cascade deletes too.
enum HistoryTombstoneChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "a delete's tombstone keeps the preserved attributes' last stored values, typed, and nothing else",
            typedValues),
        ConformanceCheck(
            HistoryChecks.group, "objects deleted by a cascade have tombstones in the same transaction", cascade),
    ]

    static let preserved: Set = [
        "flag", "int64", "double", "text", "date", "data", "uuid", "optionalInt64",
        "optionalText",
    ]

    static func typedValues(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")!
        let id = try await container.performUnitOfWork { context in
            let sample = KitSample(context: context)
            sample.flag = true
            sample.int = 7
            sample.int64 = Int64.min
            sample.double = -0.5
            sample.text = "stored ☃"
            sample.date = date
            sample.data = Data([0, 255, 1])
            sample.uuid = uuid
            sample.optionalInt = 3
            sample.optionalInt64 = nil
            sample.optionalText = "kept"
            try context.save()
            return sample.objectID
        }
        let start = try await container.currentHistoryToken()
        try await container.performUnitOfWork { context in
            let sample = try context.existingObject(with: id, as: KitSample.self)
            sample.text = "unsaved edit" // deleted in the same save: the stored value is the last one
            context.delete(sample)
            try context.save()
        }
        let history = try await container.history(after: start)
        try kit.expectEqual(history.map(\.summary), [["\(id.label) delete []"]], "the delete's transaction")
        let change = history[0].changes[0]
        try kit.expectEqual(Set(change.tombstone.keys), preserved, "the attributes in the tombstone")
        try kit.expectEqual(change.tombstoneValue("flag", as: Bool.self), true, "flag")
        try kit.expectEqual(change.tombstoneValue("int64", as: Int64.self), Int64.min, "int64")
        try kit.expectEqual(change.tombstoneValue("double", as: Double.self), -0.5, "double")
        try kit.expectEqual(change.tombstoneValue("text", as: String.self), "stored ☃", "text")
        try kit.expectEqual(change.tombstoneValue("date", as: Date.self), date, "date")
        try kit.expectEqual(change.tombstoneValue("data", as: Data.self), Data([0, 255, 1]), "data")
        try kit.expectEqual(change.tombstoneValue("uuid", as: UUID.self), uuid, "uuid")
        try kit.expectEqual(change.tombstone["optionalInt64"], .null, "optionalInt64 (nil)")
        try kit.expectEqual(change.tombstoneValue("optionalInt64", as: Int64?.self), .some(nil), "optionalInt64 typed")
        try kit.expectEqual(change.tombstoneValue("optionalText", as: String?.self), "kept", "optionalText")
        try kit.expectEqual(change.tombstoneValue("int", as: Int.self), nil, "int (not preserved)")
        try kit.expectEqual(change.tombstoneValue("text", as: UUID.self), nil, "text read as a UUID")
        try kit.expectEqual(change.tombstoneValue("missing", as: String.self), nil, "an attribute that does not exist")
    }

    static func cascade(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (owner, pets, passport) = try await container.performUnitOfWork { context in
            let owner = KitOwner(context: context)
            owner.name = "Ada"
            var pets: [KitPet] = []
            for name in ["Rex", "Tom"] {
                let pet = KitPet(context: context)
                pet.name = name
                pet.owner = owner
                pets.append(pet)
            }
            let passport = KitPassport(context: context)
            passport.number = "P-1"
            owner.passport = passport
            try context.save()
            return (owner.objectID, pets.map(\.objectID), passport.objectID)
        }
        let start = try await container.currentHistoryToken()
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: owner, as: KitOwner.self))
            try context.save()
        }
        let history = try await container.history(after: start)
        try kit.expectEqual(
            history.map(\.summary),
            [
                [
                    "\(owner.label) delete []", "\(pets[0].label) delete []", "\(pets[1].label) delete []",
                    "\(passport.label) update [\"holder\"]",
                ].sorted()
            ], "the cascading delete's transaction")
        let names = Dictionary(
            uniqueKeysWithValues: history[0].changes.map { ($0.objectID, $0.tombstoneValue("name", as: String.self)) })
        try kit.expectEqual(
            [owner, pets[0], pets[1], passport].map { names[$0] ?? nil }, ["Ada", "Rex", "Tom", nil],
            "the tombstones' names (a passport has none)")
        try kit.expectEqual(
            history[0].changes.first { $0.objectID == passport }?.tombstone, [:], "the nullified passport's tombstone")
    }
}
