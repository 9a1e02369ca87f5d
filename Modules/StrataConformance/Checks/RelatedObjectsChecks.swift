import Foundation
import Strata

/// `RelatedObjects` as a collection (order, indices, deleted members skipped) and its set
/// operations, on one-to-many and many-to-many relationships, before and after save.
enum RelatedObjectsChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Relationships", "a to-many relationship is a collection in key order, then insertion order", collection),
        ConformanceCheck(
            "Relationships", "a to-many relationship's set operations report what they changed and keep inverses",
            setOperations),
    ]

    static func collection(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let accountID = try await container.performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = "Ordered"
            for memo in ["s1", "s2", "s3"] {
                let entry = KitEntry(context: context)
                entry.memo = memo
                entry.account = account
            }
            try context.save()
            return account.objectID
        }
        let context = container.newBackgroundContext()
        let (memos, walked, counts, found, afterSave) = try await context.perform {
            let account = try context.existingObject(with: accountID, as: KitAccount.self)
            let entries = account.entries
            guard let s2 = entries.first(where: { $0.memo == "s2" }), let s3 = entries.first(where: { $0.memo == "s3" })
            else {
                return ([String](), [String](), [Int](), false, [String]())
            }
            for memo in ["n1", "n2"] {
                let entry = KitEntry(context: context)
                entry.memo = memo
                entries.insert(entry)
            }
            context.delete(s2)
            let memos = account.entries.map(\.memo)
            var walked = entries.indices.map { entries[$0].memo }
            for entry in entries { walked.append(entry.memo) }
            let counts = [entries.count, Array(entries).count, entries.allObjects.count]
            let found = entries.firstIndex(of: s3).map { entries[$0] === s3 } ?? false
            try context.save()
            return (memos, walked, counts, found, account.entries.map(\.memo))
        }
        try kit.expectEqual(
            memos, ["s1", "s3", "n1", "n2"],
            "saved members in key order, then new ones in insertion order, the deleted one skipped")
        try kit.expectEqual(walked, memos + memos, "the members reached by walking the indices, then by a for-in loop")
        try kit.expectEqual(counts, [4, 4, 4], "count, the iterated count and allObjects.count")
        try kit.expect(found, "firstIndex(of:) gives an index whose element is that object")
        try kit.expectEqual(afterSave, ["s1", "s3", "n1", "n2"], "the order after save")
        let reloaded = try await container.read { context in
            try context.existingObject(with: accountID, as: KitAccount.self).entries.map(\.memo)
        }
        try kit.expectEqual(reloaded, ["s1", "s3", "n1", "n2"], "the order a fresh context loads")
    }

    static func setOperations(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (accountID, tagID, log) = try await container.performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = "Sets"
            let other = KitAccount(context: context)
            other.name = "Other"
            let entries = (0..<4).map { number -> KitEntry in
                let entry = KitEntry(context: context)
                entry.memo = "e\(number)"
                return entry
            }
            var log: [String: Bool] = [:]
            let first = account.entries.insert(entries[0])
            let again = account.entries.insert(entries[0])
            log["insert new"] = first.inserted && first.memberAfterInsert === entries[0]
            log["insert again"] = !again.inserted && again.memberAfterInsert === entries[0]
            log["insert sets the inverse"] = entries[0].account === account
            log["contains"] = account.entries.contains(entries[0]) && !account.entries.contains(entries[1])
            log["remove related"] = account.entries.remove(entries[0]) === entries[0] && entries[0].account == nil
            log["remove unrelated"] = account.entries.remove(entries[0]) == nil
            other.entries.insert(entries[3])
            log["remove another's member"] = account.entries.remove(entries[3]) == nil && entries[3].account === other
            account.entries.formUnion(entries)
            log["formUnion"] =
                account.entries.count == 4 && entries.allSatisfy { $0.account === account } && other.entries.isEmpty
            account.entries.subtract(entries[2...])
            log["subtract"] = account.entries.map(\.memo) == ["e0", "e1"] && entries[2].account == nil
            account.entries.subtract(entries[2...])
            log["subtract again"] = account.entries.count == 2
            let tag = KitTag(context: context)
            tag.label = "Many"
            log["many-to-many insert"] = tag.accounts.insert(account).inserted && !tag.accounts.insert(account).inserted
            log["many-to-many inverse"] = account.tags.contains(tag)
            tag.accounts.formUnion([account, other])
            log["many-to-many formUnion"] = tag.accounts.count == 2 && other.tags.contains(tag)
            log["many-to-many remove"] =
                tag.accounts.remove(other) === other && tag.accounts.remove(other) == nil && !other.tags.contains(tag)
            entries[2].memo = "gone"
            context.delete(entries[2])
            entries[3].account = other
            try context.save()
            return (account.objectID, tag.objectID, log)
        }
        let failed = log.filter { !$0.value }.keys.sorted()
        try kit.expect(failed.isEmpty, "set operations that did not report or do what Set's do: \(failed)")
        let saved = try await container.read { context in
            let account = try context.existingObject(with: accountID, as: KitAccount.self)
            let tag = try context.existingObject(with: tagID, as: KitTag.self)
            return (account.entries.map(\.memo), tag.accounts.map(\.name))
        }
        try kit.expectEqual(saved.0, ["e0", "e1"], "the saved entries")
        try kit.expectEqual(saved.1, ["Sets"], "the saved tag's accounts")
        let cleared = try await container.performUnitOfWork { context in
            let account = try context.existingObject(with: accountID, as: KitAccount.self)
            let members = Array(account.entries)
            account.entries.removeAll()
            let result = account.entries.isEmpty && members.allSatisfy { $0.account == nil }
            try context.save()
            return result
        }
        try kit.expect(cleared, "removeAll() unrelates every member and clears each inverse")
        let entriesAfter = try await container.read {
            try $0.existingObject(with: accountID, as: KitAccount.self).entries.count
        }
        try kit.expectEqual(entriesAfter, 0, "the saved entries after removeAll()")
    }
}
