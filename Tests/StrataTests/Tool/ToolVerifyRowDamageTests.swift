import Foundation
import Strata
import Testing

@Suite("strata verify: one row that does not decode")
struct ToolVerifyRowDamageTests {
    /// Damages the first account's row (key 1) so that it no longer decodes: a text that is not
    /// UTF-8 on SQLite, a checksum that fails on LMDB.
    static func damageFirstAccount(_ store: TestStore) throws {
        switch store.kind {
        case .sqlite:
            try ToolDamage.sqlite(store, #"UPDATE "Account" SET "name" = CAST(X'41FF42' AS TEXT) WHERE "id" = 1;"#)
        case .lmdb:
            try ToolDamage.lmdbRewriteFirst(store, database: "e.Account") { _, value in
                let last = value.index(before: value.endIndex)
                value.replaceSubrange(last...last, with: value[last] == "0" ? "1" : "0")
            }
        default:
            Issue.record("no way to damage one row of a \(store.kind) store")
        }
    }

    @Test(
        "the bad row is reported once and the scan goes on: the rows after it and the keys naming it are fine",
        arguments: EngineKind.fileEngines)
    func oneBadRow(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        try Self.damageFirstAccount(store)
        let run = try await StrataCommandRun.run(["verify", try StrataCommandRun.argument(for: store), "--json"])
        #expect(run.status == 1, "exit \(run.status): \(run.error)")
        let problems = try #require(try run.json()["problems"] as? [String])
        // Before the fix, Account 2 (after the bad row) went unread: the tag's link to it and the
        // entries' keys naming Account 1 were reported as naming rows that do not exist.
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.hasPrefix("Account 1: the row does not decode") == true, "\(problems)")
    }
}
