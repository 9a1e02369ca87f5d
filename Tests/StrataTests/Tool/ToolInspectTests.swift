import Foundation
import Strata
import StrataTool
import Testing

@Suite("strata inspect")
struct ToolInspectTests {
    @Test("the schema the tool builds from a recorded schema is the one the model gives the engines")
    func storeSchemaFromRecorded() throws {
        let model = TestModels.schema.storeSchema
        let rebuilt = try #require(model.recorded).storeSchema()
        #expect(rebuilt.entities == model.entities)
        #expect(rebuilt.joins == model.joins)
        #expect(rebuilt.version == model.version)
    }

    @Test(
        "inspect --json lists the schema, row counts, history and cursor lag",
        arguments: EngineKind.sharedAcrossProcesses)
    func inspectJSON(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let container = try store.open()
        try await container.setHistoryCursor("indexer", to: HistoryToken(rawValue: 2))
        let current = try await container.currentHistoryToken().rawValue
        container.close()

        let run = try await StrataCommandRun.run(["inspect", try StrataCommandRun.argument(for: store), "--json"])
        #expect(run.status == 0, "\(run.error)")
        let report = try run.json()
        #expect(report["engine"] as? String == kind.rawValue)
        #expect(report["schemaVersion"] as? Int == TestModels.schema.version)
        let entities = try #require(report["entities"] as? [[String: Any]])
        let rows = Dictionary(uniqueKeysWithValues: entities.map { ($0["name"] as? String ?? "", $0["rows"] as? Int) })
        #expect(rows == ["Account": 2, "Entry": 3, "Tag": 1])
        let account = try #require(entities.first { $0["name"] as? String == "Account" })
        let indexes = try #require(account["indexes"] as? [[String: Any]])
        #expect(indexes.contains { $0["name"] as? String == "Account_name_unique" && $0["isUnique"] as? Bool == true })
        let relationships = try #require(account["relationships"] as? [[String: Any]])
        #expect(Set(relationships.compactMap { $0["name"] as? String }) == ["entries", "tags"])
        let history = try #require(report["history"] as? [String: Any])
        #expect(history["transactions"] as? Int == 4)
        #expect(history["oldestToken"] as? Int == 1)
        #expect(history["currentToken"] as? Int == Int(current))
        let cursors = try #require(report["cursors"] as? [[String: Any]])
        #expect(cursors.count == 1)
        #expect(cursors.first?["name"] as? String == "indexer")
        #expect(cursors.first?["lag"] as? Int == Int(current) - 2)
    }

    @Test("inspect prints the same for a person", arguments: EngineKind.sharedAcrossProcesses)
    func inspectText(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let run = try await StrataCommandRun.run(["inspect", try StrataCommandRun.argument(for: store)])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("entity Account: 2 rows"))
        #expect(run.output.contains("entity Entry: 3 rows"))
        #expect(run.output.contains("unique index Account_name_unique on name"))
        #expect(run.output.contains("history: 4 transactions, oldest token 1"))
        #expect(run.output.contains("history cursors: none"))
    }
}
