import Foundation
import Strata
import Testing

/// A store damaged on purpose, and the words its problem must contain in `strata verify`'s report.
struct ToolDamageCase: CustomTestStringConvertible, Sendable {
    let kind: EngineKind
    let name: String
    let expected: String
    let damage: @Sendable (TestStore) throws -> Void

    var testDescription: String { "\(kind.rawValue): \(name)" }

    static let all: [ToolDamageCase] = [
        ToolDamageCase(
            kind: .sqlite, name: "a unique index that does not hold", expected: "Account_name_unique does not hold"
        ) {
            try ToolDamage.sqlite($0, #"DROP INDEX "Account_name_unique"; UPDATE "Account" SET "name" = 'Same';"#)
        },
        ToolDamageCase(
            kind: .sqlite, name: "a dangling to-one key", expected: "names Account 999999, which does not exist"
        ) {
            try ToolDamage.sqlite(
                $0, #"UPDATE "Entry" SET "account" = 999999 WHERE "id" = (SELECT min("id") FROM "Entry");"#)
        },
        ToolDamageCase(kind: .sqlite, name: "a text in an integer column", expected: "Entry") {
            try ToolDamage.sqlite($0, #"UPDATE "Entry" SET "amount" = 'lots';"#)
        },
        ToolDamageCase(kind: .sqlite, name: "a damaged page", expected: "engine integrity check") { store in
            let file = try FileHandle(forUpdating: store.directory.appendingPathComponent("store.sqlite"))
            defer { try? file.close() }
            // The header of the file's last page (SQLite's default page size is 4096 bytes): its page
            // type and cell pointers become garbage.
            let size = try file.seekToEnd()
            try file.seek(toOffset: size - 4096)
            try file.write(contentsOf: Data(repeating: 0x5A, count: 16))
        },
        ToolDamageCase(kind: .lmdb, name: "a row whose checksum fails", expected: "Entry 1: the row does not decode") {
            try ToolDamage.lmdbRewriteFirst($0, database: "e.Entry") { _, value in
                let last = value.index(before: value.endIndex)
                value.replaceSubrange(last...last, with: value[last] == "0" ? "1" : "0")
            }
        },
        ToolDamageCase(kind: .lmdb, name: "a many-to-many link to a missing row", expected: "which does not exist") {
            let join = try #require(TestModels.schema.storeSchema.joins.first).name
            try ToolDamage.lmdbRewriteFirst($0, database: "j.\(join).l") { key, _ in
                key = String(key.dropLast(2)) + "63"
            }
        },
        ToolDamageCase(
            kind: .postgres, name: "a unique index that does not hold", expected: "Account_name_unique does not hold"
        ) {
            try ToolDamage.postgres($0, #"DROP INDEX S."Account_name_unique"; UPDATE S."Account" SET "name" = 'Same'"#)
        },
        ToolDamageCase(
            kind: .postgres, name: "a dangling to-one key", expected: "names Account 999999, which does not exist"
        ) {
            try ToolDamage.postgres(
                $0, #"UPDATE S."Entry" SET "account" = 999999 WHERE "id" = (SELECT min("id") FROM S."Entry")"#)
        },
        ToolDamageCase(kind: .postgres, name: "an index the catalog marks invalid", expected: "marked invalid") {
            try ToolDamage.postgres(
                $0, #"UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'S."Entry_account_ref"'::regclass"#)
        },
    ].filter { EngineKind.sharedAcrossProcesses.contains($0.kind) }
}

@Suite("strata verify")
struct ToolVerifyTests {
    @Test(
        "a store another process keeps writing verifies sound, run after run (its page audit, its history checks)",
        arguments: EngineKind.sharedAcrossProcesses)
    func soundUnderLoad(kind: EngineKind) async throws {
        try StrataCommandRun.requireBuilt()
        let store = try TestStore(kind)
        let writer = try ToolWriterProcess(kind: kind, location: store.configuration.location)
        try await writer.waitPast(20)
        var runs: [String] = []
        for _ in 0..<5 {
            let verify = try await StrataCommandRun.run(["verify", try StrataCommandRun.argument(for: store)])
            if verify.status != 0 { runs.append("exit \(verify.status): \(verify.output) \(verify.error)") }
            try await writer.waitPast(writer.acknowledged + 5)
        }
        writer.stop()
        // Before, the history check read the current token first and the history after it, so a
        // commit in between was reported as "token 47 is past the current token 46".
        #expect(runs.isEmpty, "\(runs)")
    }

    @Test("a sound store is sound: exit 0, no problem", arguments: EngineKind.sharedAcrossProcesses)
    func soundStore(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let argument = try StrataCommandRun.argument(for: store)
        let run = try await StrataCommandRun.run(["verify", argument])
        #expect(run.status == 0, "\(run.output)\(run.error)")
        #expect(run.output.contains("sound: no problem found"))
        let json = try await StrataCommandRun.run(["verify", argument, "--json"]).json()
        #expect(json["isSound"] as? Bool == true)
        #expect((json["problems"] as? [String])?.isEmpty == true)
    }

    @Test("each damage is reported and the store is not sound", arguments: ToolDamageCase.all)
    func damagedStore(damage: ToolDamageCase) async throws {
        let store = try await ToolFixture.seededStore(damage.kind)
        try damage.damage(store)
        let run = try await StrataCommandRun.run(["verify", try StrataCommandRun.argument(for: store), "--json"])
        #expect(run.status == 1, "exit \(run.status): \(run.error)")
        let json = try run.json()
        #expect(json["isSound"] as? Bool == false)
        let problems = try #require(json["problems"] as? [String])
        #expect(problems.contains { $0.contains(damage.expected) }, "\(problems)")
    }
}
