import Foundation
import Strata

/// Batch inserts, updates and deletes: staged in a context, written by its save in the same
/// atomic commit as its other changes, in the engine (no objects), with versions, unique
/// constraints and delete rules honoured.
enum BatchWriteChecks {
    static let group = "Batch writes"

    static let all: [ConformanceCheck] = [
        ConformanceCheck(group, "a batch insert stores every row with its values and reports its IDs", inserts),
        ConformanceCheck(
            group, "a batch and the context's object changes commit together or not at all; a clash names the row",
            atomicWithObjects),
        ConformanceCheck(
            group, "a batch update sets constants and arithmetic on the selected rows only, and bumps their versions",
            updates),
        ConformanceCheck(
            group, "a batch delete cascades to related rows and nullifies links (one-to-one and many-to-many)",
            deleteRules),
        ConformanceCheck(group, "a batch delete that a deny rule refuses names the rows and writes nothing", deny),
        ConformanceCheck(
            group, "a unique clash or an overflow in a batch update writes nothing and says which row", badUpdates),
        ConformanceCheck(
            group, "a predicate the engine cannot run, and batches mixed with object changes, are refused",
            refusals),
    ]

    static func names(_ container: PersistentContainer) async throws -> [String] {
        try await container.read {
            try $0.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        }
    }

    static func inserts(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let rows = (0..<500).map { (name: String(format: "acct-%03d", $0), balance: Int64($0) * 3) }
        let saved = try await container.performUnitOfWork { context in
            try context.batchInsert(KitAccount.self, from: rows) { row, values in
                values[\.name] = row.name
                values[\.balance] = row.balance
            }
            try context.save()
            let results = context.savedBatches
            // A later save with nothing to write reports no batches.
            try context.save()
            return (results, context.savedBatches.count)
        }
        let (results, afterEmptySave) = saved
        try kit.expectEqual(afterEmptySave, 0, "savedBatches after a save with nothing to write")
        try kit.expectEqual(results.count, 1, "batch results")
        try kit.expectEqual(results[0].kind, .insert, "the kind")
        try kit.expectEqual(results[0].insertedCount, 500, "rows inserted")
        let stored = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map {
                "\($0.name) \($0.balance) \($0.currency) \($0.note ?? "nil")"
            }
        }
        try kit.expectEqual(stored, rows.map { "\($0.name) \($0.balance) EUR nil" }, "the stored rows (defaults kept)")
        // Each row starts from the defaults: what one row set does not carry into the next.
        try await container.performUnitOfWork { context in
            try context.batchInsert(KitAccount.self, from: 0..<6) { i, values in
                values[\.name] = "mixed-\(i)"
                if i % 2 == 0 { values[\.note] = "note \(i)" }
                if i % 3 == 0 { values[\.currency] = "USD" }
                if i == 4 { values[\.balance] = values[\.balance] + 9 }
            }
            try context.save()
        }
        let mixed = try await container.read { context in
            try context.fetch(
                FetchRequest<KitAccount>(
                    predicate: #Predicate { $0.name.starts(with: "mixed-") }, sortBy: [SortDescriptor(\.name)])
            ).map { "\($0.name) \($0.currency) \($0.balance) \($0.note ?? "nil")" }
        }
        try kit.expectEqual(
            mixed,
            [
                "mixed-0 USD 0 note 0", "mixed-1 EUR 0 nil", "mixed-2 EUR 0 note 2", "mixed-3 USD 0 nil",
                "mixed-4 EUR 9 note 4", "mixed-5 EUR 0 nil",
            ], "rows that leave attributes unset get their defaults, not the previous row's values")
        let ids = results[0].insertedIDs
        let named = try await container.read { context in
            try ids.map { try context.existingObject(with: $0, as: KitAccount.self).name }
        }
        try kit.expectEqual(named, rows.map(\.name), "each reported ID names its row, in order")
        // Rows linked to saved objects by ID.
        let account = ids[7]
        try await container.performUnitOfWork { context in
            try context.batchInsert(KitEntry.self, from: [5, 6, 7] as [Int64]) { amount, values in
                values[\.amount] = amount
                values[\.account] = account
            }
            try context.save()
        }
        let linked = try await container.read { context in
            try context.existingObject(with: account, as: KitAccount.self).entries.map(\.amount).sorted()
        }
        try kit.expectEqual(linked, [5, 6, 7], "entries linked by object ID")
        let error = try await kit.expectStrataError("linking a batch row to an ID of another entity") {
            try await container.performUnitOfWork { context in
                try context.batchInsert(KitEntry.self, from: [1]) { _, values in
                    values[\.account] = linkedEntryID(account)
                }
                try context.save()
            }
        }
        guard case .misuse = error else { throw kit.fail("a wrong target gives .misuse, not \(error)") }
        // An ID of the right entity whose row was deleted.
        let gone = try await container.makeAccount("gone")
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: gone, as: KitAccount.self))
            try context.save()
        }
        let dangling = try await kit.expectStrataError("linking batch rows to a deleted account") {
            try await container.performUnitOfWork { context in
                try context.batchInsert(KitEntry.self, from: [1, 2] as [Int64]) { amount, values in
                    values[\.amount] = amount
                    values[\.account] = amount == 2 ? gone : account
                }
                try context.save()
            }
        }
        guard case .validation(let issues) = dangling, issues.first?.property == "account",
            issues.first?.message.contains("row 1") == true, issues.first?.message.contains(gone.uriString) == true
        else { throw kit.fail("a link to a deleted row gives .validation naming the row and the ID, not \(dangling)") }
        let entries = try await container.read { try $0.count(for: FetchRequest<KitEntry>()) }
        try kit.expectEqual(entries, 3, "entries after the refused batch (the three linked earlier)")
    }

    /// An ID of the right store naming another entity.
    static func linkedEntryID(_ account: ObjectID) -> ObjectID {
        ObjectID(storeIdentifier: account.storeIdentifier, entityName: "Tag", primaryKey: account.primaryKey ?? 1)
    }

    static func atomicWithObjects(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("taken")
        let rows = ["a", "b", "c", "taken", "d"]
        let error = try await kit.expectStrataError("a batch whose fourth row clashes with a stored name") {
            try await container.performUnitOfWork { context in
                let tag = KitTag(context: context)
                tag.label = "object change"
                try context.batchInsert(KitAccount.self, from: rows) { name, values in values[\.name] = name }
                try context.save()
            }
        }
        try kit.expectEqual(
            error.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "the error")
        let detail = error.native?.operation ?? ""
        try kit.expect(
            detail.contains("row 3") && detail.contains("taken"),
            "the clash names the row and its value (got \(error.native.map(String.init(describing:)) ?? "no native"))")
        try kit.expectEqual(try await names(container), ["taken"], "accounts after the failed save")
        let tags = try await container.read { try $0.count(for: FetchRequest<KitTag>()) }
        try kit.expectEqual(tags, 0, "the object change of the failed save was not written either")
        let repeated = try await kit.expectStrataError("a batch repeating a name") {
            try await container.performUnitOfWork { context in
                try context.batchInsert(KitAccount.self, from: ["x", "y", "x"]) { name, values in
                    values[\.name] = name
                }
                try context.save()
            }
        }
        try kit.expect(
            repeated.native?.operation?.contains("row 2") == true, "a repeat inside the batch names row 2: \(repeated)")
        try await container.performUnitOfWork { context in
            let tag = KitTag(context: context)
            tag.label = "object change"
            try context.batchInsert(KitAccount.self, from: ["a", "b"]) { name, values in values[\.name] = name }
            try context.save()
        }
        try kit.expectEqual(try await names(container), ["a", "b", "taken"], "accounts after the good save")
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitTag>()) }, 1, "tags after the good save")
    }

    static func updates(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await container.performUnitOfWork { context in
            try context.batchInsert(KitAccount.self, from: 0..<100) { index, values in
                values[\.name] = "u\(index)"
                values[\.balance] = Int64(index)
            }
            try context.save()
        }
        // A context that read a row before the batch.
        let stale = container.newBackgroundContext(named: "stale")
        try await stale.perform {
            let account = try kit.first(
                stale.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == "u60" })), "accounts u60")
            try kit.expectEqual(account.balance, 60, "balance read before the batch")
        }
        let batching = container.newBackgroundContext(named: "batching")
        let (results, seen) = try await batching.perform {
            let held = try kit.first(
                batching.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == "u70" })), "accounts u70")
            try batching.batchUpdate(
                KitAccount.self, where: #Predicate { $0.balance >= 50 },
                set: [.add(\.balance, 1_000), .value(\.note, "bumped"), .multiply(\.balance, by: 2)])
            try batching.save()
            // No stale reads: the object this context held shows the new values.
            return (batching.savedBatches, "\(held.balance) \(held.note ?? "nil")")
        }
        try kit.expectEqual(seen, "2140 bumped", "the batching context's own object after the save")
        try kit.expectEqual(results[0].updatedCount, 50, "rows updated")
        let stored = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>()).map { "\($0.name)=\($0.balance)/\($0.note ?? "-")" }.sorted()
        }
        let expected = (0..<100).map { index in
            index >= 50 ? "u\(index)=\((Int64(index) + 1_000) * 2)/bumped" : "u\(index)=\(index)/-"
        }.sorted()
        try kit.expectEqual(stored, expected, "every row after the batch update")
        let error = try await kit.expectStrataError("saving a change to a row the batch updated") {
            try await stale.perform {
                let account = try kit.first(
                    stale.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == "u60" })), "accounts u60")
                account.note = "late"
                try stale.save()
            }
        }
        guard case .conflict(let conflicts) = error, conflicts.count == 1 else {
            throw kit.fail("a row the batch changed gives the stale context .conflict, got \(error)")
        }
    }

    /// Owners cascade to pets and nullify passports (one-to-one); accounts nullify tags (many-to-many).
    static func deleteRules(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (passports, tagID) = try await container.performUnitOfWork { context in
            var passports: [String: ObjectID] = [:]
            for name in ["Ada", "Alan", "Bob"] {
                let owner = KitOwner(context: context)
                owner.name = name
                for index in 0..<3 {
                    let pet = KitPet(context: context)
                    pet.name = "\(name)-pet\(index)"
                    pet.owner = owner
                }
                let passport = KitPassport(context: context)
                passport.number = "P-\(name)"
                owner.passport = passport
                try context.save()
                passports[name] = passport.objectID
            }
            let tag = KitTag(context: context)
            tag.label = "vip"
            for name in ["keep", "drop1", "drop2"] {
                let account = KitAccount(context: context)
                account.name = name
                account.tags.insert(tag)
            }
            try context.save()
            return (passports, tag.objectID)
        }
        let results = try await container.performUnitOfWork { context in
            try context.batchDelete(KitOwner.self, where: #Predicate { $0.name.starts(with: "A") })
            try context.batchDelete(KitAccount.self, where: #Predicate { $0.name.starts(with: "drop") })
            try context.save()
            return context.savedBatches
        }
        try kit.expectEqual(results.map(\.deletedCount), [8, 2], "rows deleted (2 owners + 6 pets; 2 accounts)")
        try kit.expectEqual(
            Set(results[0].deletedIDs.map(\.entityName)), ["Owner", "Pet"], "the cascade's entities in the result")
        try kit.expectEqual(results[0].updatedCount, 2, "passports whose holder was cleared")
        let (owners, pets, holders, tagged) = try await container.read { context in
            let owners = try context.fetch(FetchRequest<KitOwner>()).map(\.name)
            let pets = try context.fetch(FetchRequest<KitPet>()).map(\.name).sorted()
            let holders = try ["Ada", "Alan", "Bob"].map { name in
                try context.existingObject(with: passports[name]!, as: KitPassport.self).holder?.name ?? "nil"
            }
            let tagged = try context.existingObject(with: tagID, as: KitTag.self).accounts.map(\.name).sorted()
            return (owners, pets, holders, tagged)
        }
        try kit.expectEqual(owners, ["Bob"], "owners left")
        try kit.expectEqual(pets, ["Bob-pet0", "Bob-pet1", "Bob-pet2"], "pets left (the others cascaded)")
        try kit.expectEqual(holders, ["nil", "nil", "Bob"], "passport holders (nullified for deleted owners)")
        try kit.expectEqual(tagged, ["keep"], "the tag's accounts (links of deleted accounts removed)")
    }

    static func deny(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (withEntries, _) = try await container.performUnitOfWork { context in
            var ids: [ObjectID] = []
            for name in ["busy1", "busy2", "idle"] {
                let account = KitAccount(context: context)
                account.name = name
                if name != "idle" {
                    let entry = KitEntry(context: context)
                    entry.amount = 1
                    entry.account = account
                }
                try context.save()
                if name != "idle" { ids.append(account.objectID) }
            }
            return (ids, 0)
        }
        let error = try await kit.expectStrataError("a batch delete of accounts that have entries (deny)") {
            try await container.performUnitOfWork { context in
                try context.batchDelete(KitAccount.self, where: nil)
                try context.save()
            }
        }
        guard case .validation(let issues) = error, let issue = issues.first else {
            throw kit.fail("deny gives .validation, not \(error)")
        }
        try kit.expectEqual(issue.entity, "Account", "the issue's entity")
        try kit.expectEqual(issue.property, "entries", "the issue's relationship")
        for id in withEntries {
            try kit.expect(issue.message.contains(id.uriString), "the issue names \(id.uriString): \(issue.message)")
        }
        try kit.expectEqual(try await names(container), ["busy1", "busy2", "idle"], "nothing was deleted")
    }

    static func badUpdates(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("one", balance: 1)
        _ = try await container.makeAccount("two", balance: Int64.max - 1)
        let clash = try await kit.expectStrataError("a batch update giving two rows one unique name") {
            try await container.performUnitOfWork { context in
                try context.batchUpdate(KitAccount.self, where: nil, set: [.value(\.name, "same")])
                try context.save()
            }
        }
        try kit.expectEqual(clash.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "clash")
        let overflow = try await kit.expectStrataError("adding past Int64.max") {
            try await container.performUnitOfWork { context in
                try context.batchUpdate(KitAccount.self, where: nil, set: [.add(\.balance, 5)])
                try context.save()
            }
        }
        guard case .validation(let issues) = overflow, issues.first?.property == "balance",
            issues.first?.message.contains("Account/p") == true
        else { throw kit.fail("an overflow gives .validation naming the row and attribute, not \(overflow)") }
        let stored = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.balance)])).map {
                "\($0.name)=\($0.balance)"
            }
        }
        try kit.expectEqual(stored, ["one=1", "two=\(Int64.max - 1)"], "rows after the refused batches")
    }

    static func refusals(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("a", balance: 5)
        let computed = try await kit.expectStrataError("a predicate on a computed property") {
            try await container.performUnitOfWork { context in
                try context.batchDelete(KitAccount.self, where: #Predicate { $0.debt < 0 })
            }
        }
        guard case .misuse(let message, _) = computed, message.contains("cannot evaluate") else {
            throw kit.fail("an unsupported predicate gives .misuse saying so, not \(computed)")
        }
        let before = try await kit.expectStrataError("a batch on an entity with unsaved object changes") {
            try await container.performUnitOfWork { context in
                KitAccount(context: context).name = "unsaved"
                try context.batchUpdate(KitAccount.self, where: nil, set: [.add(\.balance, 1)])
            }
        }
        guard case .misuse = before else { throw kit.fail("staging over unsaved changes gives .misuse, not \(before)") }
        let after = try await kit.expectStrataError("an object change after a batch of the same entity") {
            try await container.performUnitOfWork { context in
                try context.batchUpdate(KitAccount.self, where: nil, set: [.add(\.balance, 1)])
                KitAccount(context: context).name = "unsaved"
                try context.save()
            }
        }
        guard case .misuse = after else { throw kit.fail("an overlapping save gives .misuse, not \(after)") }
        let cascadeReach = try await kit.expectStrataError("a pet change under a batch delete of owners") {
            try await container.performUnitOfWork { context in
                try context.batchDelete(KitOwner.self, where: nil)
                KitPet(context: context).name = "orphan"
                try context.save()
            }
        }
        guard case .misuse = cascadeReach else {
            throw kit.fail("an object change in a cascade's reach gives .misuse, not \(cascadeReach)")
        }
        // A row kept from one batch's closure and assigned in another's is refused, not staged.
        let swapped = try await kit.expectStrataError("a BatchRow carried from one batch into another") {
            try await container.performUnitOfWork { context in
                var kept: BatchRow<KitAccount>?
                try context.batchInsert(KitAccount.self, from: ["kept"]) { name, row in
                    row[\.name] = name
                    kept = row
                }
                try context.batchInsert(KitAccount.self, from: ["other"]) { name, row in
                    if let kept { row = kept }
                    row[\.name] = name
                }
                try context.save()
            }
        }
        guard case .misuse(let swapMessage, _) = swapped, swapMessage.contains("another batch") else {
            throw kit.fail("a row from another batch gives .misuse saying so, not \(swapped)")
        }
        let balances = try await container.read { try $0.fetch(FetchRequest<KitAccount>()).map(\.balance) }
        try kit.expectEqual(balances, [5], "nothing was written by the refused saves")
        // A rollback drops staged batches.
        try await container.performUnitOfWork { context in
            try context.batchUpdate(KitAccount.self, where: nil, set: [.add(\.balance, 1)])
            context.rollback()
            try kit.expect(!context.hasChanges, "no changes after rollback")
            try context.save()
        }
        let after2 = try await container.read { try $0.fetch(FetchRequest<KitAccount>()).map(\.balance) }
        try kit.expectEqual(after2, [5], "a rolled-back batch writes nothing")
    }
}
