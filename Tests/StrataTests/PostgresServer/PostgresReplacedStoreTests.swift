import Foundation
import Strata
import StrataPostgres
import StrataStorage
import StrataTestSupport
import Testing

/// A PostgreSQL store replaced under a running container (its schema dropped and a new store made
/// at the same URL and schema), and a commit's transaction whose client vanished.
@Suite("PostgreSQL: a replaced store, an orphaned commit")
struct PostgresReplacedStoreTests {
    @Test(
        "a store dropped and made again under a running container: reads and saves give .notAStore, no false conflicts")
    func replacedStore() async throws {
        let url = try #require(TestPostgres.url, "run with Scripts/with-postgres.sh")
        let schema = PostgresSQL.uniqueSchema("replaced_")
        defer { PostgresSQL.dropSchema(schema) }
        let old = try PersistentContainer(schema: TestModels.schema, engine: .postgres(url: url, schema: schema))
        defer { old.close() }
        _ = try await Account.insert(named: "before", into: old)

        // An operator drops the store and another process makes a new one in its place.
        PostgresSQL.dropSchema(schema)
        let new = try PersistentContainer(schema: TestModels.schema, engine: .postgres(url: url, schema: schema))
        _ = try await Account.insert(named: "elsewhere", into: new)
        new.close()

        func expectReplaced(_ what: String, _ body: () async throws -> Void) async {
            do {
                try await body()
                Issue.record("\(what) on the replaced store succeeded")
            } catch let error as StrataError {
                guard case .notAStore(_, let reason, _) = error else {
                    Issue.record("\(what): expected .notAStore, got \(String(reflecting: error))")
                    return
                }
                #expect(reason.contains("no longer the store this container opened"), "\(reason)")
            } catch {
                Issue.record("\(what): expected .notAStore, got \(String(reflecting: error))")
            }
        }
        await expectReplaced("a read") {
            let context = old.newBackgroundContext()
            _ = try await context.perform { try context.count(for: FetchRequest<Account>()) }
        }
        await expectReplaced("a save") {
            _ = try await Account.insert(named: "after", into: old)
        }
        // Nothing of the old container reached the new store.
        let reopened = try PersistentContainer(schema: TestModels.schema, engine: .postgres(url: url, schema: schema))
        defer { reopened.close() }
        let context = reopened.newBackgroundContext()
        let names = try await context.perform { try context.fetch(FetchRequest<Account>()).map(\.name) }
        #expect(names == ["elsewhere"])
    }
}
