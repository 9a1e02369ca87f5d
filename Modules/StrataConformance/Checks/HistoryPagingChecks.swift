import Foundation
import Strata

/// `history(after:entities:authors:limit:)` pages count what they return: with filters and a
/// small limit, the documented recipe (`next = page.last?.token ?? start`) reads every match
/// exactly once, in order, across runs of non-matching commits longer than one store read, and
/// ends with an empty page.
enum HistoryPagingChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "filtered history pages of a small limit return every match once, in order, and the recipe ends",
            filteredPages)
    ]

    /// Non-matching commits in a row: more than the core reads from the store at a time (256).
    static let longRun = 300

    static func filteredPages(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let start = try await container.currentHistoryToken()
        var entries: [(id: ObjectID, author: String)] = []
        entries.append((try await save(entryBy: "a", in: container), "a"))
        for _ in 0..<longRun { try await saveTag(in: container) }
        entries.append((try await save(entryBy: "b", in: container), "b"))
        for _ in 0..<5 { try await saveTag(in: container) }
        entries.append((try await save(entryBy: "a", in: container), "a"))
        try await saveTag(in: container)
        entries.append((try await save(entryBy: "a", in: container), "a"))
        for _ in 0..<3 { try await saveTag(in: container) }
        let noise = longRun + 9

        let byEntity = try await pages(of: container, from: start, limit: 1, kit: kit) {
            try await container.history(after: $0, entities: [KitEntry.self], limit: $1)
        }
        try kit.expectEqual(byEntity.map(\.count), [1, 1, 1, 1, 0], "page sizes (entities: [Entry], limit: 1)")
        try kit.expectEqual(
            byEntity.joined().flatMap { $0.changes.map(\.objectID) }, entries.map(\.id),
            "the entries paged one at a time")

        let byEntityAndAuthor = try await pages(of: container, from: start, limit: 2, kit: kit) {
            try await container.history(after: $0, entities: [KitEntry.self], authors: ["a"], limit: $1)
        }
        try kit.expectEqual(
            byEntityAndAuthor.map(\.count), [2, 1, 0], "page sizes (entities: [Entry], authors: [a], limit: 2)")
        try kit.expectEqual(
            byEntityAndAuthor.joined().flatMap { $0.changes.map(\.objectID) },
            entries.filter { $0.author == "a" }.map(\.id), "author a's entries, two per page")

        let byAuthor = try await pages(of: container, from: start, limit: 100, kit: kit) {
            try await container.history(after: $0, authors: ["noise"], limit: $1)
        }
        try kit.expectEqual(
            byAuthor.map(\.count), [100, 100, 100, noise - 300, 0], "page sizes (authors: [noise], limit: 100)")
        let noiseTokens = byAuthor.joined().map(\.token)
        try kit.expectEqual(Set(noiseTokens).count, noise, "distinct noise transactions paged")
        try kit.expectIncreasing(Array(byAuthor.joined()), "noise transactions paged")
        try kit.expectEqual(
            try await container.history(after: start, authors: ["noise"]).map(\.token), noiseTokens,
            "one unlimited read")

        try kit.expectEqual(
            try await container.history(after: start, entities: [KitEntry.self], limit: 0), [], "a page of limit 0")
    }

    /// Pages with the documented recipe until an empty page, failing after 50 pages (a recipe that
    /// never ends).
    static func pages(
        of container: PersistentContainer, from start: HistoryToken, limit: Int, kit: ConformanceHarness,
        _ read: (HistoryToken, Int) async throws -> [PersistentHistoryTransaction]
    ) async throws -> [[PersistentHistoryTransaction]] {
        var pages: [[PersistentHistoryTransaction]] = []
        var next = start
        while pages.count < 50 {
            let page = try await read(next, limit)
            try kit.expect(page.count <= limit, "a page of \(page.count) transactions for a limit of \(limit)")
            pages.append(page)
            if page.isEmpty { return pages }
            next = page.last?.token ?? next
        }
        throw kit.fail("paging with limit \(limit) did not end after 50 pages: \(pages.map(\.count))")
    }

    private static func save(entryBy author: String, in container: PersistentContainer) async throws -> ObjectID {
        let context = container.newBackgroundContext()
        context.transactionAuthor = author
        return try await context.perform {
            let entry = KitEntry(context: context)
            entry.memo = "by \(author)"
            try context.save()
            return entry.objectID
        }
    }

    private static func saveTag(in container: PersistentContainer) async throws {
        let context = container.newBackgroundContext()
        context.transactionAuthor = "noise"
        try await context.perform {
            KitTag(context: context).label = "noise"
            try context.save()
        }
    }
}
