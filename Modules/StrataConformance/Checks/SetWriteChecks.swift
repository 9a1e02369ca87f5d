import Foundation
import Strata
import StrataStorage

/// The engine's set writes (`ChangeSet.setWrites`, `SetWritingEngine`): updates computed from the
/// rows' own values, deletes by filter and by the keys an earlier delete removed, deny steps and
/// upserts, run inside the commit's transaction after its row writes, all or nothing, with their
/// history, versions and unique indexes.
enum SetWriteChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Set writes",
            """
            an update adds, multiplies and sets from each row's own values, after the change set's row writes, \
            bumps versions, skips rows it would not change, and records history with the assigned columns
            """,
            update),
        ConformanceCheck(
            "Set writes",
            "an integer overflow, a unique clash or a bad set write fails the whole commit and writes nothing",
            failures),
        ConformanceCheck(
            "Set writes",
            """
            a delete by filter returns tombstones, drops join links, and later steps cascade to and clear the \
            links of the rows it removed; a deny step that finds rows fails the commit naming the holders
            """,
            deletes),
        ConformanceCheck(
            "Set writes",
            """
            an upsert inserts new rows with their keys, updates or ignores rows whose unique values are taken, \
            keeps other unique indexes, and records inserts and updates in history
            """,
            upserts),
    ]

    /// The engine of the check's store, which must run set writes.
    static func engine(_ kit: ConformanceHarness) throws -> any SetWritingEngine {
        let engine = try kit.configuration.open(KitModels.schema.storeSchema)
        guard let setWriting = engine as? any SetWritingEngine, setWriting.acceptsSetWrites else {
            engine.close()
            throw kit.fail("the engine does not run set writes (SetWritingEngine with acceptsSetWrites)")
        }
        return setWriting
    }

    static func row(_ engine: any StorageEngine, _ entity: Int, _ key: Int64) throws -> StoredRow? {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.row(entity: entity, key: key)
    }

    static func lastHistory(_ engine: any StorageEngine, after token: Int64) throws -> [HistoryChange] {
        guard let history = engine as? any HistoryStore else { return [] }
        return try history.history(after: token, limit: nil).flatMap(\.changes)
    }

    static func token(_ engine: any StorageEngine) throws -> Int64 {
        try (engine as? any HistoryStore)?.currentHistoryToken() ?? 0
    }

    // MARK: Update

    static func update(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let names = AggregateEngineChecks.Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let entry = try names.entity("Entry")
        let amount = try names.column(entry, "amount")
        let memo = try names.column(entry, "memo")
        let ids = try await container.performUnitOfWork { context in
            let items = (0..<6).map { index in
                let item = KitEntry(context: context)
                item.amount = Int64(index * 10)
                item.memo = index == 4 ? "same" : "m\(index)"
                return item
            }
            try context.save()
            return items.map(\.objectID)
        }
        let keys = ids.compactMap(\.primaryKey)
        let engine = try engine(kit)
        defer { engine.close() }
        let start = try token(engine)

        // A row insert in the same change set (amount 40) is seen by the set write, which runs after it.
        let insertedKey = try engine.allocateKeys(entity: entry.number, count: 1).lowerBound
        var values = ContiguousArray<StoredValue>(repeating: .null, count: entry.columns.count)
        values[amount] = .integer(40)
        values[memo] = .text("new")
        var changes = ChangeSet()
        changes.inserts = [RowWrite(entity: entry.number, key: insertedKey, expectedVersion: 0, values: values)]
        changes.setWrites = [
            SetWrite(
                entity: entry.number, selection: .matching(.compare(column: amount, .greaterThanOrEqual, .integer(30))),
                action: .update([SetWrite.ColumnAssignment(column: amount, .add(.integer(5)))])),
            SetWrite(
                entity: entry.number, selection: .matching(.compare(column: amount, .lessThan, .integer(20))),
                action: .update([
                    SetWrite.ColumnAssignment(column: amount, .multiply(.integer(3))),
                    SetWrite.ColumnAssignment(column: memo, .value(.text("small"))),
                ])),
            // Sets the memo the row already has: nothing changes, nothing is listed.
            SetWrite(
                entity: entry.number, selection: .matching(.compare(column: memo, .equal, .text("same"))),
                action: .update([SetWrite.ColumnAssignment(column: memo, .value(.text("same")))])),
        ]
        let results = try engine.commitReturningResults(changes)
        try kit.expectEqual(results.count, 3, "one result per set write")
        try kit.expectEqual(
            Set(results[0].keys), Set([keys[3], keys[4], keys[5], insertedKey]),
            "rows with amount >= 30, the new one too")
        try kit.expectEqual(Set(results[1].keys), Set([keys[0], keys[1]]), "rows with amount < 20")
        try kit.expectEqual(results[2].keys, [], "rows the update would not change")

        let expected: [(key: Int64, amount: Int64, memo: String, version: Int64)] = [
            (keys[0], 0, "small", 2), (keys[1], 30, "small", 2), (keys[2], 20, "m2", 1), (keys[3], 35, "m3", 2),
            (keys[4], 45, "same", 2), (keys[5], 55, "m5", 2), (insertedKey, 45, "new", 2),
        ]
        for item in expected {
            guard let stored = try row(engine, entry.number, item.key) else {
                throw kit.fail("row \(item.key) is gone")
            }
            try kit.expectEqual(stored.values[amount], .integer(item.amount), "amount of row \(item.key)")
            try kit.expectEqual(stored.values[memo], .text(item.memo), "memo of row \(item.key)")
            try kit.expectEqual(stored.version, item.version, "version of row \(item.key)")
        }

        // A context that read a row before the set write changed it gets a conflict.
        var stale = ChangeSet()
        stale.updates = [RowWrite(entity: entry.number, key: keys[3], expectedVersion: 1, values: values)]
        let conflict = try kit.expectStrataError("a row write at the version before the set write") {
            try engine.commit(stale)
        }
        guard case .conflict = conflict else { throw kit.fail("expected .conflict, got \(conflict)") }

        guard engine is any HistoryStore else { return }
        let changed = try lastHistory(engine, after: start)
        let updates = changed.filter { $0.kind == .update }
        try kit.expectEqual(updates.count, 6, "history lists each updated row once per set write")
        try kit.expect(
            updates.contains { $0.key == keys[1] && $0.changedProperties == ["amount", "memo"] },
            "history of the second update names its assigned attributes: \(updates)")
        try kit.expect(
            changed.contains { $0.kind == .insert && $0.key == insertedKey }, "the row insert is in the same history")
    }

    // MARK: Failures

    static func failures(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let names = AggregateEngineChecks.Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let account = try names.entity("Account")
        let name = try names.column(account, "name")
        let balance = try names.column(account, "balance")
        let north = try await container.makeAccount("north", balance: Int64.max - 1)
        let south = try await container.makeAccount("south", balance: 7)
        let engine = try engine(kit)
        defer { engine.close() }
        let start = try token(engine)
        let insertedKey = try engine.allocateKeys(entity: account.number, count: 1).lowerBound
        var values = ContiguousArray<StoredValue>(repeating: .null, count: account.columns.count)
        for (index, column) in account.columns.enumerated() where !column.isOptional {
            values[index] = column.type.storageClass == .text ? .text("x") : .integer(0)
        }
        values[name] = .text("east")
        func attempt(_ setWrites: [SetWrite]) throws -> StrataError {
            var changes = ChangeSet()
            changes.inserts = [RowWrite(entity: account.number, key: insertedKey, expectedVersion: 0, values: values)]
            changes.setWrites = setWrites
            return try kit.expectStrataError("a failing set write") { _ = try engine.commitReturningResults(changes) }
        }
        let all = SetWrite.Selection.matching(nil)

        let overflow = try attempt([
            SetWrite(
                entity: account.number, selection: all, action: .update([.init(column: balance, .add(.integer(2)))]))
        ])
        guard case .validation(let issues) = overflow, issues.first?.message.contains("64-bit") == true,
            issues.first?.message.contains(north.uriString) == true
        else { throw kit.fail("an integer overflow: expected .validation naming \(north.uriString), got \(overflow)") }

        let clash = try attempt([
            SetWrite(
                entity: account.number, selection: all, action: .update([.init(column: name, .value(.text("one")))]))
        ])
        guard case .constraintViolation(let entity, let attributes, _) = clash, entity == "Account",
            attributes == ["name"]
        else { throw kit.fail("two rows given one unique name: expected .constraintViolation, got \(clash)") }

        let misuse = try attempt([
            SetWrite(
                entity: account.number, selection: .referencing(column: 0, deletedBy: 0),
                action: .delete(tombstoneColumns: []))
        ])
        guard case .misuse = misuse else {
            throw kit.fail("a set write that selects by itself: expected .misuse, got \(misuse)")
        }

        for id in [north, south] {
            let stored = try row(engine, account.number, id.primaryKey ?? 0)
            try kit.expectEqual(stored?.version, 1, "\(id.uriString) untouched by the failed commits")
        }
        try kit.expect(
            try row(engine, account.number, insertedKey) == nil, "the failed commits' row insert is not written")
        try kit.expectEqual(try lastHistory(engine, after: start), [], "failed commits leave no history")
    }

    // MARK: Deletes

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

    static func upserts(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let schema = KitModels.schema.storeSchema
        let names = AggregateEngineChecks.Columns(schema: schema, kit: kit)
        let seat = try names.entity("Seat")
        let rowColumn = try names.column(seat, "row")
        let number = try names.column(seat, "number")
        let holderColumn = try names.column(seat, "holder")
        let code = try names.column(seat, "code")
        let seeded = try await container.performUnitOfWork { context in
            let seats = (0..<3).map { index in
                let item = KitSeat(context: context)
                item.row = "A"
                item.number = index
                item.holder = "old"
                item.code = "C\(index)"
                return item
            }
            try context.save()
            return seats.compactMap(\.objectID.primaryKey)
        }
        let engine = try engine(kit)
        defer { engine.close() }
        let start = try token(engine)
        func seatRow(
            _ row: String, _ seatNumber: Int64, holder: String, code seatCode: String?
        ) -> ContiguousArray<StoredValue> {
            var values = ContiguousArray<StoredValue>(repeating: .null, count: seat.columns.count)
            values[rowColumn] = .text(row)
            values[number] = .integer(seatNumber)
            values[holderColumn] = .text(holder)
            values[code] = seatCode.map { .text($0) } ?? .null
            return values
        }
        // C0 gets a new holder, C1 has the same one (ignored), C9 and the null code are new.
        let rows = [
            seatRow("A", 0, holder: "new", code: "C0"), seatRow("A", 1, holder: "old", code: "C1"),
            seatRow("B", 9, holder: "new", code: "C9"), seatRow("B", 10, holder: "new", code: nil),
        ]
        let keys = Array(try engine.allocateKeys(entity: seat.number, count: rows.count))
        var changes = ChangeSet()
        changes.setWrites = [
            SetWrite(
                entity: seat.number, selection: .matching(nil),
                action: .upsert(
                    .init(rows: rows, keys: keys, uniqueColumns: [code], onClash: .update(columns: [holderColumn]))))
        ]
        let results = try engine.commitReturningResults(changes)
        try kit.expectEqual(results[0].keys, [seeded[0]], "the upsert updated C0")
        try kit.expectEqual(results[0].insertedKeys, [keys[2], keys[3]], "the upsert inserted C9 and the null code")
        try kit.expectEqual(results[0].ignoredCount, 1, "C1 had nothing to change")
        try kit.expectEqual(try row(engine, seat.number, seeded[0])?.values[holderColumn], .text("new"), "C0's holder")
        try kit.expectEqual(try row(engine, seat.number, seeded[0])?.version, 2, "C0's version")
        try kit.expectEqual(try row(engine, seat.number, seeded[1])?.version, 1, "C1's version")
        try kit.expectEqual(try row(engine, seat.number, keys[2])?.values[number], .integer(9), "C9 inserted")
        try kit.expectEqual(try row(engine, seat.number, keys[2])?.version, 1, "C9's version")
        try kit.expect(try row(engine, seat.number, keys[0]) == nil, "no row under the key of an updated row")
        if engine is any HistoryStore {
            let history = try lastHistory(engine, after: start)
            try kit.expectEqual(
                Set(history.map { "\($0.kind.rawValue) \($0.key)" }),
                ["update \(seeded[0])", "insert \(keys[2])", "insert \(keys[3])"], "the upsert's history")
        }

        // .ignore leaves a taken code alone; a new row that takes another unique index's values
        // (row A, number 2, held by C2) fails the whole commit.
        let moreKeys = Array(try engine.allocateKeys(entity: seat.number, count: 2))
        var ignoring = ChangeSet()
        ignoring.setWrites = [
            SetWrite(
                entity: seat.number, selection: .matching(nil),
                action: .upsert(
                    .init(
                        rows: [seatRow("A", 0, holder: "x", code: "C0"), seatRow("Z", 1, holder: "x", code: "C8")],
                        keys: moreKeys, uniqueColumns: [code], onClash: .ignore)))
        ]
        let ignored = try engine.commitReturningResults(ignoring)
        try kit.expectEqual(ignored[0].ignoredCount, 1, ".ignore counts the taken code")
        try kit.expectEqual(ignored[0].insertedKeys, [moreKeys[1]], ".ignore inserts the free one")
        try kit.expectEqual(try row(engine, seat.number, seeded[0])?.values[holderColumn], .text("new"), "C0 unchanged")

        let lastKeys = Array(try engine.allocateKeys(entity: seat.number, count: 2))
        var clashing = ChangeSet()
        clashing.setWrites = [
            SetWrite(
                entity: seat.number, selection: .matching(nil),
                action: .upsert(
                    .init(
                        rows: [seatRow("Y", 1, holder: "x", code: "C7"), seatRow("A", 2, holder: "x", code: "C6")],
                        keys: lastKeys, uniqueColumns: [code], onClash: .update(columns: [holderColumn]))))
        ]
        let error = try kit.expectStrataError("an upsert row that takes another unique index's values") {
            _ = try engine.commitReturningResults(clashing)
        }
        guard case .constraintViolation(_, let attributes, _) = error, attributes == ["row", "number"] else {
            throw kit.fail("expected .constraintViolation on row and number, got \(error)")
        }
        try kit.expect(try row(engine, seat.number, lastKeys[0]) == nil, "the failed upsert inserted nothing")
    }
}
