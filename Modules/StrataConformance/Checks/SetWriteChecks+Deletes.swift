import Foundation
import Strata
import StrataStorage

/// The set-write checks of deletes: by filter and by the keys an earlier delete removed,
/// with tombstones, join links, cascades and deny steps (``SetWriteChecks``).
extension SetWriteChecks {
    static func deletes(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let schema = KitModels.schema.storeSchema
        let names = AggregateEngineChecks.Columns(schema: schema, kit: kit)
        let owner = try names.entity("Owner")
        let ownerName = try names.column(owner, "name")
        let pet = try names.entity("Pet")
        let petOwner = try names.column(pet, "owner")
        let petName = try names.column(pet, "name")
        let passport = try names.entity("Passport")
        let holder = try names.column(passport, "holder")
        let account = try names.entity("Account")
        let accountName = try names.column(account, "name")
        let entry = try names.entity("Entry")
        let entryAccount = try names.column(entry, "account")
        guard
            let join = schema.joins.first(where: { $0.leftEntity == account.number || $0.rightEntity == account.number }
            )
        else { throw kit.fail("the kit schema has no join of Account") }
        let accountSide: JoinSide = join.leftEntity == account.number ? .left : .right
        let tagSide: JoinSide = accountSide == .left ? .right : .left

        struct Seeded: Sendable {
            var owners: [Int64] = []
            var pets: [Int64] = []
            var passports: [Int64] = []
            var accounts: [Int64] = []
            var tag: Int64 = 0
        }
        let seeded = try await container.performUnitOfWork { context in
            var owners: [KitOwner] = []
            var pets: [KitPet] = []
            var passports: [KitPassport] = []
            for index in 0..<3 {
                let person = KitOwner(context: context)
                person.name = "owner \(index)"
                owners.append(person)
                for petIndex in 0..<2 {
                    let animal = KitPet(context: context)
                    animal.name = "pet \(index).\(petIndex)"
                    animal.owner = person
                    pets.append(animal)
                }
                let document = KitPassport(context: context)
                document.number = "P\(index)"
                document.holder = person
                passports.append(document)
            }
            let tag = KitTag(context: context)
            tag.label = "t"
            var accounts: [KitAccount] = []
            for label in ["kept", "tagged", "busy"] {
                let item = KitAccount(context: context)
                item.name = label
                accounts.append(item)
            }
            tag.accounts.insert(accounts[1])
            let busyEntry = KitEntry(context: context)
            busyEntry.account = accounts[2]
            try context.save()
            return Seeded(
                owners: owners.compactMap(\.objectID.primaryKey), pets: pets.compactMap(\.objectID.primaryKey),
                passports: passports.compactMap(\.objectID.primaryKey),
                accounts: accounts.compactMap(\.objectID.primaryKey),
                tag: tag.objectID.primaryKey ?? 0)
        }
        let engine = try engine(kit)
        defer { engine.close() }
        let start = try token(engine)

        // Owners 0 and 1 go, their pets by cascade, their passports' holder cleared.
        var changes = ChangeSet()
        changes.history = HistoryRecord(author: "kit", changes: [])
        changes.setWrites = [
            SetWrite(
                entity: owner.number,
                selection: .matching(.isIn(column: ownerName, values: [.text("owner 0"), .text("owner 1")])),
                action: .delete(tombstoneColumns: [ownerName])),
            SetWrite(
                entity: pet.number, selection: .referencing(column: petOwner, deletedBy: 0),
                action: .delete(tombstoneColumns: [petName])),
            SetWrite(
                entity: passport.number, selection: .referencing(column: holder, deletedBy: 0),
                action: .update([.init(column: holder, .value(.null))])),
            // The tagged account goes with its join link.
            SetWrite(
                entity: account.number, selection: .matching(.compare(column: accountName, .equal, .text("tagged"))),
                action: .delete(tombstoneColumns: [])),
        ]
        let results = try engine.commitReturningResults(changes)
        try kit.expectEqual(Set(results[0].keys), Set(seeded.owners[0...1]), "owners deleted")
        let tombstones = Dictionary(uniqueKeysWithValues: zip(results[0].keys, results[0].tombstones))
        try kit.expectEqual(tombstones[seeded.owners[0]], [.text("owner 0")], "owner 0's tombstone")
        try kit.expectEqual(Set(results[1].keys), Set(seeded.pets[0...3]), "pets deleted by cascade")
        try kit.expectEqual(Set(results[2].keys), Set(seeded.passports[0...1]), "passports whose holder went")
        try kit.expectEqual(results[3].keys, [seeded.accounts[1]], "the tagged account")
        for key in seeded.owners[0...1] {
            try kit.expect(try row(engine, owner.number, key) == nil, "owner \(key) gone")
        }
        for key in seeded.pets[0...3] { try kit.expect(try row(engine, pet.number, key) == nil, "pet \(key) gone") }
        for key in seeded.pets[4...5] {
            try kit.expect(try row(engine, pet.number, key) != nil, "owner 2's pet \(key) kept")
        }
        for (index, key) in seeded.passports.enumerated() {
            let stored = try row(engine, passport.number, key)
            try kit.expectEqual(stored?.values[holder].isNull, index < 2, "passport \(index)'s holder cleared")
            try kit.expectEqual(stored?.version, index < 2 ? 2 : 1, "passport \(index)'s version")
        }
        let reader = try engine.makeReader()
        let linked = try reader.linkedKeys(join: join.number, from: tagSide, key: seeded.tag)
        reader.close()
        try kit.expectEqual(linked, [], "the deleted account's join link is gone")
        if engine is any HistoryStore {
            let history = try lastHistory(engine, after: start)
            let ownerTombstone: [String: RecordedValue] = ["name": RecordedValue(StoredValue.text("owner 1"))]
            let ownerDelete = HistoryChange(
                entity: "Owner", key: seeded.owners[1], kind: .delete, changedProperties: [], tombstone: ownerTombstone)
            try kit.expect(history.contains(ownerDelete), "history has owner 1's delete with its tombstone: \(history)")
            try kit.expectEqual(history.filter { $0.kind == .delete }.count, 7, "history's deletes")
            try kit.expectEqual(history.filter { $0.kind == .update }.count, 2, "history's cleared passports")
        }

        // Deny: the busy account has an entry; nothing of the change set is written.
        var denied = ChangeSet()
        denied.history = HistoryRecord(author: "kit", changes: [])
        denied.setWrites = [
            SetWrite(
                entity: account.number,
                selection: .matching(.isIn(column: accountName, values: [.text("busy"), .text("kept")])),
                action: .delete(tombstoneColumns: [])),
            SetWrite(
                entity: entry.number, selection: .referencing(column: entryAccount, deletedBy: 0),
                action: .deny(.init(entityName: "Account", property: "entries", relatedEntityName: "Entry"))),
        ]
        let error = try kit.expectStrataError("a deny step with a related row") {
            _ = try engine.commitReturningResults(denied)
        }
        let busy = ObjectID(
            storeIdentifier: engine.storeIdentifier, entityName: "Account", primaryKey: seeded.accounts[2])
        guard case .validation(let issues) = error, issues.count == 1, issues[0].property == "entries",
            issues[0].message.contains(busy.uriString), !issues[0].message.contains("/Account/p\(seeded.accounts[0])")
        else { throw kit.fail("deny: expected .validation naming only \(busy.uriString), got \(error)") }
        for key in [seeded.accounts[0], seeded.accounts[2]] {
            try kit.expect(try row(engine, account.number, key) != nil, "account \(key) kept by the denied commit")
        }
    }

    // MARK: Upserts
}
