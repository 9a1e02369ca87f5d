import Foundation
import Strata

/// Prefetching (`relationshipKeyPathsForPrefetching`) and batch faulting (a to-many faulted on
/// one object of a fetch result loads it for the whole result) give exactly the members one
/// fault per object gives: with unsaved changes in the context, with deletes, for to-many,
/// many-to-many and to-one relationships.
enum PrefetchChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            group, "prefetching, batch faulting and one fault per object load the same members in the same order",
            sameMembers),
        ConformanceCheck(
            group, "unsaved inserts and moves are part of what a batch fault or a prefetch loads", unsavedChanges),
        ConformanceCheck(
            group, "saved deletes are gone and deletes in the context are skipped by batch faults and prefetches",
            deletes),
        ConformanceCheck(
            group, "many-to-many batch-faults and prefetches from both sides, with pending links and unlinks",
            manyToMany),
        ConformanceCheck(
            group, "to-one prefetching, and a key path that is not a relationship is refused with misuse",
            toOneAndMisuse),
    ]

    static let group = "Prefetching and batch faulting"

    /// Members per account name: entry memos, or tag labels.
    typealias Members = [String: [String]]

    /// Six accounts: a0 to a5; account `i` has `i` entries (`a<i>e<j>`, except a5, which has
    /// none); two entries belong to no account. Four tags t0 to t3; account `i` is linked to tag
    /// `t` when `(i + t)` is even, or `t == 3` and `i < 2`.
    static func seed(_ container: PersistentContainer) async throws {
        try await container.performUnitOfWork { context in
            var accounts: [KitAccount] = []
            for number in 0..<6 {
                let account = KitAccount(context: context)
                account.name = "a\(number)"
                accounts.append(account)
            }
            let tags = (0..<4).map { number -> KitTag in
                let tag = KitTag(context: context)
                tag.label = "t\(number)"
                return tag
            }
            // Entries in an interleaved order, so each account's keys are not contiguous.
            for round in 0..<5 {
                for number in 1..<5 where round < number {
                    let entry = KitEntry(context: context)
                    entry.memo = "a\(number)e\(round)"
                    entry.amount = Int64(number * 10 + round)
                    entry.account = accounts[number]
                }
                if round < 2 {
                    let loose = KitEntry(context: context)
                    loose.memo = "loose\(round)"
                }
            }
            for (i, account) in accounts.enumerated() {
                for (t, tag) in tags.enumerated() where (i + t) % 2 == 0 || (t == 3 && i < 2) {
                    account.tags.insert(tag)
                }
            }
            try context.save()
        }
    }

    /// The seeded entries per account.
    static let seededEntries: Members = [
        "a0": [], "a1": ["a1e0"], "a2": ["a2e0", "a2e1"], "a3": ["a3e0", "a3e1", "a3e2"],
        "a4": ["a4e0", "a4e1", "a4e2", "a4e3"], "a5": [],
    ]
    /// The seeded tags per account.
    static let seededTags: Members = [
        "a0": ["t0", "t2", "t3"], "a1": ["t1", "t3"], "a2": ["t0", "t2"], "a3": ["t1", "t3"], "a4": ["t0", "t2"],
        "a5": ["t1", "t3"],
    ]

    static func entries(_ accounts: [KitAccount]) -> Members {
        Dictionary(uniqueKeysWithValues: accounts.map { ($0.name, $0.entries.map(\.memo)) })
    }

    static func tags(_ accounts: [KitAccount]) -> Members {
        Dictionary(uniqueKeysWithValues: accounts.map { ($0.name, $0.tags.map(\.label)) })
    }

    static func entry(_ memo: String, in context: ObjectContext) throws -> KitEntry? {
        try context.fetch(FetchRequest<KitEntry>(predicate: #Predicate { $0.memo == memo })).first
    }

    static func sameMembers(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let prefetched = try await container.read { context in
            let request = FetchRequest<KitAccount>(relationshipKeyPathsForPrefetching: [\.entries, \.tags])
            let accounts = try context.fetch(request)
            return (entries(accounts), tags(accounts))
        }
        let batched = try await container.read { context in
            let accounts = try context.fetch(FetchRequest<KitAccount>())
            // The first fault, on the fourth account, loads the relationship for all of them.
            let first = accounts[3].entries.map(\.memo)
            let firstTags = accounts[4].tags.map(\.label)
            return (first, firstTags, entries(accounts), tags(accounts))
        }
        let oneByOne = try await container.read { context in
            let ids = try context.fetch(FetchRequest<KitAccount>()).map(\.objectID)
            context.reset()
            let accounts = try ids.map { try context.existingObject(with: $0, as: KitAccount.self) }
            return (entries(accounts), tags(accounts))
        }
        let window = try await container.read { context in
            let request = FetchRequest<KitAccount>(
                sortBy: [SortDescriptor(\.name, order: .reverse)], fetchLimit: 3, fetchOffset: 1,
                relationshipKeyPathsForPrefetching: [\.entries])
            return entries(try context.fetch(request))
        }
        try kit.expectEqual(oneByOne.0, seededEntries, "entries, one fault per object")
        try kit.expectEqual(oneByOne.1, seededTags, "tags, one fault per object")
        try kit.expectEqual(prefetched.0, seededEntries, "entries, prefetched")
        try kit.expectEqual(prefetched.1, seededTags, "tags, prefetched")
        try kit.expectEqual(batched.0, ["a3e0", "a3e1", "a3e2"], "the batch-faulted account's own entries")
        try kit.expectEqual(batched.1, ["t0", "t2"], "the batch-faulted account's own tags")
        try kit.expectEqual(batched.2, seededEntries, "entries, batch-faulted")
        try kit.expectEqual(batched.3, seededTags, "tags, batch-faulted")
        try kit.expectEqual(
            window, ["a4": seededEntries["a4"]!, "a3": seededEntries["a3"]!, "a2": seededEntries["a2"]!],
            "entries prefetched for a window of a sorted fetch")
    }

    static func unsavedChanges(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        var expected = seededEntries
        expected["a1"]! += ["new"]
        expected["a3"]!.removeFirst()
        expected["a4"]! += ["a3e0"]
        // Changes made before the fault: the batch must merge them.
        @Sendable func change(_ context: ObjectContext, _ accounts: [KitAccount]) throws {
            let entry = KitEntry(context: context)
            entry.memo = "new"
            entry.account = accounts[1]
            try PrefetchChecks.entry("a3e0", in: context)?.account = accounts[4]
        }
        let changedFirst = try await container.read { context in
            let accounts = try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)]))
            try change(context, accounts)
            return (accounts[0].entries.map(\.memo), entries(accounts))
        }
        let faultedFirst = try await container.read { context in
            let accounts = try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)]))
            _ = accounts[0].entries.count
            try change(context, accounts)
            return entries(accounts)
        }
        let prefetchedAfter = try await container.read { context in
            let sorted = FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])
            try change(context, try context.fetch(sorted))
            var request = sorted
            request.relationshipKeyPathsForPrefetching = [\.entries]
            return entries(try context.fetch(request))
        }
        try kit.expectEqual(changedFirst.0, [], "a0's entries")
        try kit.expectEqual(changedFirst.1, expected, "changes made before the batch fault")
        try kit.expectEqual(faultedFirst, expected, "changes made after the batch fault")
        try kit.expectEqual(prefetchedAfter, expected, "changes made before a prefetch")
        try await container.performUnitOfWork { context in
            try change(context, try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])))
            try context.save()
        }
        let saved = try await container.read { context in
            entries(try context.fetch(FetchRequest<KitAccount>(relationshipKeyPathsForPrefetching: [\.entries])))
        }
        expected["a4"] = ["a3e0"] + seededEntries["a4"]!
        try kit.expectEqual(saved, expected, "after save, in key order")
    }

    static func deletes(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        try await container.performUnitOfWork { context in
            if let entry = try entry("a2e1", in: context) { context.delete(entry) }
            try context.save()
        }
        var expected = seededEntries
        expected["a2"] = ["a2e0"]
        let afterSavedDelete = try await container.read { context in
            let batched = entries(try context.fetch(FetchRequest<KitAccount>()))
            context.reset()
            let prefetched = entries(
                try context.fetch(FetchRequest<KitAccount>(relationshipKeyPathsForPrefetching: [\.entries])))
            return (batched, prefetched)
        }
        try kit.expectEqual(afterSavedDelete.0, expected, "batch-faulted after a saved delete")
        try kit.expectEqual(afterSavedDelete.1, expected, "prefetched after a saved delete")
        expected["a4"] = ["a4e0", "a4e1", "a4e3"]
        let inContext = try await container.read { context in
            if let entry = try entry("a4e2", in: context) { context.delete(entry) }
            let beforeFault = entries(try context.fetch(FetchRequest<KitAccount>()))
            context.rollback()
            let accounts = try context.fetch(FetchRequest<KitAccount>(relationshipKeyPathsForPrefetching: [\.entries]))
            if let entry = try entry("a4e2", in: context) { context.delete(entry) }
            return (beforeFault, entries(accounts))
        }
        try kit.expectEqual(inContext.0, expected, "an entry deleted in the context, then batch-faulted")
        try kit.expectEqual(inContext.1, expected, "an entry deleted in the context after a prefetch")
    }

    static func manyToMany(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let seededAccounts: Members = [
            "t0": ["a0", "a2", "a4"], "t1": ["a1", "a3", "a5"], "t2": ["a0", "a2", "a4"],
            "t3": ["a0", "a1", "a3", "a5"],
        ]
        @Sendable func accountsOf(_ tags: [KitTag]) -> Members {
            Dictionary(uniqueKeysWithValues: tags.map { ($0.label, $0.accounts.map(\.name)) })
        }
        let fromTags = try await container.read { context in
            let batched = accountsOf(try context.fetch(FetchRequest<KitTag>()))
            context.reset()
            let request = FetchRequest<KitTag>(relationshipKeyPathsForPrefetching: [\.accounts])
            return (batched, accountsOf(try context.fetch(request)))
        }
        try kit.expectEqual(fromTags.0, seededAccounts, "accounts of each tag, batch-faulted")
        try kit.expectEqual(fromTags.1, seededAccounts, "accounts of each tag, prefetched")
        var expected = seededTags
        expected["a0"] = ["t0", "t3"]
        expected["a5"]! += ["t0"]
        // Made from the tags' side: the accounts' own sets, other than a0's and a5's, stay
        // faults, so the accounts' batch fault meets pending links.
        @Sendable func change(_ context: ObjectContext) throws {
            let tags = try context.fetch(FetchRequest<KitTag>(sortBy: [SortDescriptor(\.label)]))
            guard let a0 = tags[2].accounts.first(where: { $0.name == "a0" }),
                let a5 = tags[1].accounts.first(where: { $0.name == "a5" })
            else { return }
            tags[2].accounts.remove(a0)
            tags[0].accounts.insert(a5)
        }
        let sorted = FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])
        let pending = try await container.read { context in
            try change(context)
            let batched = tags(try context.fetch(sorted))
            return batched
        }
        let pendingPrefetched = try await container.read { context in
            try change(context)
            var request = sorted
            request.relationshipKeyPathsForPrefetching = [\.tags]
            return tags(try context.fetch(request))
        }
        let loadedFirst = try await container.read { context in
            let accounts = try context.fetch(sorted)
            _ = accounts[3].tags.count
            try change(context)
            return tags(accounts)
        }
        try kit.expectEqual(pending, expected, "tags batch-faulted with a pending link and unlink")
        try kit.expectEqual(pendingPrefetched, expected, "tags prefetched with a pending link and unlink")
        try kit.expectEqual(loadedFirst, expected, "a link and an unlink after the batch fault")
    }

    static func toOneAndMisuse(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let owners = try await container.read { context in
            let request = FetchRequest<KitEntry>(
                sortBy: [SortDescriptor(\.memo)], relationshipKeyPathsForPrefetching: [\.account])
            return try context.fetch(request).map { "\($0.memo):\($0.account?.name ?? "-")" }
        }
        try kit.expectEqual(
            owners,
            [
                "a1e0:a1", "a2e0:a2", "a2e1:a2", "a3e0:a3", "a3e1:a3", "a3e2:a3", "a4e0:a4", "a4e1:a4", "a4e2:a4",
                "a4e3:a4", "loose0:-", "loose1:-",
            ], "each entry's account, prefetched")
        for (name, keyPath) in [
            ("an attribute", \KitAccount.name as any PartialKeyPath<KitAccount> & Sendable),
            ("a computed property", \KitAccount.debt as any PartialKeyPath<KitAccount> & Sendable),
        ] {
            let error = await container.newBackgroundContext().performError {
                _ = try $0.fetch(FetchRequest<KitAccount>(relationshipKeyPathsForPrefetching: [keyPath]))
            }
            guard case .misuse(let message, _)? = error, message.contains("relationshipKeyPathsForPrefetching") else {
                throw kit.fail(
                    "prefetching \(name): expected .misuse naming the property list, got \(String(describing: error))")
            }
        }
    }
}

extension ObjectContext {
    /// Runs `body` in `perform` and returns the `StrataError` it threw, or nil.
    fileprivate func performError(_ body: @escaping @Sendable (ObjectContext) throws -> Void) async -> StrataError? {
        do {
            try await perform { try body(self) }
            return nil
        } catch {
            return error as? StrataError
        }
    }
}
