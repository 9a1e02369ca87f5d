import Foundation
import Strata
import Testing

@Suite("strata history prune")
struct ToolPruneTests {
    @Test("prune stops at a cursor and says so; --force goes past it", arguments: EngineKind.sharedAcrossProcesses)
    func pruneRespectsCursors(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let container = try store.open()
        try await container.setHistoryCursor("indexer", to: HistoryToken(rawValue: 1))
        container.close()
        let argument = try StrataCommandRun.argument(for: store)

        let held = try await StrataCommandRun.run(["history", "prune", argument, "--before", "4"])
        #expect(held.status == 0, "\(held.error)")
        #expect(held.output.contains("removed 1 history transaction before token 2"), "\(held.output)")
        #expect(held.output.contains("cursor indexer has not processed it"), "\(held.output)")
        #expect(held.output.contains("the history now starts at token 2"), "\(held.output)")

        let forced = try await StrataCommandRun.run(["history", "prune", argument, "--before", "4", "--force"])
        #expect(forced.status == 0, "\(forced.error)")
        #expect(forced.output.contains("removed 2 history transactions before token 4"), "\(forced.output)")
        #expect(forced.output.contains("the history now starts at token 4"), "\(forced.output)")

        let reopened = try store.open()
        defer { reopened.close() }
        let left = try await reopened.engineHistoryTokens()
        #expect(left == [4])
    }

    @Test(
        "prune without cursors removes everything before a date in the future",
        arguments: EngineKind.sharedAcrossProcesses)
    func pruneByDate(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let argument = try StrataCommandRun.argument(for: store)
        let run = try await StrataCommandRun.run(["history", "prune", argument, "--before", "2999-01-01"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("removed 4 history transactions before token 5"), "\(run.output)")
        #expect(run.output.contains("the history is now empty"), "\(run.output)")
    }

    @Test(
        "a token past the newest transaction is said to be so, and no cursor is blamed",
        arguments: EngineKind.sharedAcrossProcesses)
    func pruneBeyondTheNewest(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let argument = try StrataCommandRun.argument(for: store)
        let run = try await StrataCommandRun.run(["history", "prune", argument, "--before", "100"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("removed 4 history transactions before token 5"), "\(run.output)")
        #expect(run.output.contains("token 100 is past the newest transaction (token 4)"), "\(run.output)")
        #expect(!run.output.contains("cursor"), "\(run.output)")
        #expect(run.output.contains("the history is now empty"), "\(run.output)")
    }
}

extension PersistentContainer {
    /// The tokens of the history the store keeps.
    func engineHistoryTokens() async throws -> [Int64] {
        try await history().map(\.token.rawValue)
    }
}
