import Foundation
import Strata

/// Trimming deletes the history before a bound, never past the slowest registered cursor
/// unless forced; reading after a trimmed token throws `.historyTrimmed`.
enum HistoryTrimmingChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "trimming deletes the history before the bound; reading after it throws historyTrimmed",
            trimming),
        ConformanceCheck(
            HistoryChecks.group, "trimming stops after the slowest registered cursor unless forced", cursors),
    ]

    /// Saves `count` accounts, one save each, and returns the tokens of their transactions.
    static func saveAccounts(
        _ count: Int, in container: PersistentContainer, named prefix: String = "account"
    ) async throws -> [HistoryToken] {
        let start = try await container.currentHistoryToken()
        for index in 0..<count { _ = try await container.makeAccount("\(prefix)-\(index)") }
        return try await container.history(after: start).map(\.token)
    }

    /// The `.historyTrimmed` error of reading after `token`, or a failure.
    static func trimmedError(
        _ kit: ConformanceHarness, _ container: PersistentContainer, after token: HistoryToken
    ) async throws -> StrataError {
        try await kit.expectStrataError("reading the history after trimmed token \(token.rawValue)") {
            _ = try await container.history(after: token)
        }
    }

    static func trimming(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let tokens = try await saveAccounts(10, in: container)
        try kit.expectEqual(tokens.count, 10, "transactions of 10 saves")
        let bound = try await container.deleteHistory(before: tokens[5])
        try kit.expectEqual(bound, tokens[5], "the bound trimming used (no cursor registered)")
        try kit.expectEqual(
            try await container.history().map(\.token), Array(tokens[5...]),
            "the history kept (read from the beginning)")
        try kit.expectEqual(
            try await container.history(after: tokens[4]).map(\.token), Array(tokens[5...]),
            "the history after the last trimmed token")
        let error = try await trimmedError(kit, container, after: tokens[1])
        try kit.expectEqual(
            error, .historyTrimmed(after: tokens[1].rawValue, oldestKept: tokens[5].rawValue),
            "the error of reading after a trimmed token")
        let observed = try await kit.expectStrataError("observing from a trimmed token") {
            for try await _ in container.changes(after: tokens[1]) { break }
        }
        try kit.expectEqual(
            observed, .historyTrimmed(after: tokens[1].rawValue, oldestKept: tokens[5].rawValue),
            "the error of observing from a trimmed token")

        // Trimming everything keeps the tokens going: the next save gets a greater token.
        try kit.expectEqual(
            try await container.deleteHistory(before: HistoryToken(rawValue: tokens[9].rawValue + 1)),
            HistoryToken(rawValue: tokens[9].rawValue + 1), "the bound of trimming everything")
        try kit.expectEqual(try await container.history(), [], "the history after trimming everything")
        container.close()
        let reopened = try kit.open()
        let next = try await saveAccounts(1, in: reopened, named: "after")
        try kit.expect(next.count == 1 && next[0] > tokens[9], "a save after trimming everything gets a greater token")
        try kit.expectEqual(try await reopened.currentHistoryToken(), next[0], "the current token")
    }

    static func cursors(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let tokens = try await saveAccounts(10, in: container)
        try kit.expectEqual(tokens.count, 10, "transactions of 10 saves")
        try await container.setHistoryCursor("slow", to: tokens[2])
        try await container.setHistoryCursor("fast", to: tokens[8])
        let other = try kit.open()
        try kit.expectEqual(
            try await other.historyCursors(), ["slow": tokens[2], "fast": tokens[8]],
            "the cursors another container on the store sees")

        let bound = try await container.deleteHistory(before: tokens[7])
        try kit.expectEqual(
            bound, HistoryToken(rawValue: tokens[2].rawValue + 1),
            "the bound of trimming with the slowest cursor at the 3rd")
        try kit.expectEqual(
            try await container.history(after: tokens[2]).map(\.token), Array(tokens[3...]),
            "the history after the slow cursor (none of it lost)")
        _ = try await trimmedError(kit, container, after: tokens[1])

        try await other.setHistoryCursor("slow", to: tokens[6])
        try kit.expectEqual(
            try await container.deleteHistory(before: tokens[7]), tokens[7],
            "the bound once the slow cursor moved past it")
        try kit.expectEqual(
            try await container.history().map(\.token), Array(tokens[7...]), "the history kept after moving the cursor")

        try kit.expectEqual(
            try await container.deleteHistory(before: tokens[9], force: true), tokens[9], "the bound of a forced trim")
        try kit.expectEqual(
            try await trimmedError(kit, container, after: tokens[6]),
            .historyTrimmed(after: tokens[6].rawValue, oldestKept: tokens[9].rawValue),
            "reading after the slow cursor once a forced trim passed it")

        try await container.setHistoryCursor("slow", to: nil)
        try kit.expectEqual(try await container.historyCursors(), ["fast": tokens[8]], "the cursors after removing one")
        let misuse = try await kit.expectStrataError("a cursor with an empty name") {
            try await container.setHistoryCursor("", to: tokens[0])
        }
        guard case .misuse = misuse else {
            throw kit.fail("a cursor with an empty name: expected .misuse, got \(misuse)")
        }
    }
}
