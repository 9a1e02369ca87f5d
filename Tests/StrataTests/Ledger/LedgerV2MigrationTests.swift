import Foundation
import Ledger
import Strata
import Synchronization
import Testing

extension LedgerTests {
    /// A store written by ledger version 2 opens with version 4 through the plan's lightweight
    /// stage: every account, balance and transaction kept, no external ids, no import lines, and
    /// then the new attribute, entity and relationship work.
    @Suite("ledger: a version 2 store migrates to version 4")
    struct LedgerV2MigrationTests {
        @Test(
            "every balance and transaction survives; external ids and sources start empty; import and purge work",
            arguments: EngineKind.allCases)
        func versionTwoStoreMigrates(kind: EngineKind) async throws {
            let store = try TestStore(kind)
            try await Self.writeVersionTwo(to: store.configuration)

            let container = try PersistentContainer(ledger: store.configuration)
            let expected = LedgerMigrationTests.sorted(LedgerV1Store.lines)
            #expect(try await LedgerMigrationTests.lines(in: container) == expected)
            let balances = try await AccountService(contexts: container).list()
            #expect(Dictionary(uniqueKeysWithValues: balances.map { ($0.name, $0.balance) }) == LedgerV1Store.balances)
            let context = container.newBackgroundContext()
            let (withIDs, withSources, importLines) = try await context.perform {
                let transactions = try context.fetch(FetchRequest<LedgerTransaction>())
                return (
                    transactions.filter { $0.externalID != nil }.count, transactions.filter { $0.source != nil }.count,
                    try context.count(for: FetchRequest<ImportLine>())
                )
            }
            #expect(withIDs == 0 && withSources == 0 && importLines == 0)

            // The new parts work on the migrated store: an import keyed on external ids, and a
            // purge that cascades to the import lines.
            let imports = ImportService(contexts: container)
            let csv = "\(LedgerCSV.header)\nbank-1,Wallet,2023-11-20,-2.00,,Bus\nbank-2,Checking,2023-11-20,1.00,,\n"
            let summary = try await imports.importCSV(csv, file: "after.csv")
            // Dated among the migrated transactions: their running balances change, object by object.
            #expect(summary == ImportSummary(lines: 2, inserted: 2, updated: 0, usedBatchUpsert: false))
            let purged = try await PurgeService(contexts: container).purge(before: .distantFuture)
            #expect(purged.transactionsDeleted == LedgerV1Store.lines.count + 2 && purged.importLinesDeleted == 2)
            let after = try await AccountService(contexts: container).list()
            #expect(
                Dictionary(uniqueKeysWithValues: after.map { ($0.name, $0.balance) })
                    == LedgerV1Store.balances.merging(["Wallet": -200, "Checking": 100], uniquingKeysWith: +))
            #expect(after.allSatisfy { $0.openingBalance == $0.balance && $0.transactionCount == 0 })
            // Version 4's purged-import records: the two imported ids, which a re-import skips.
            let recorded = try await context.perform {
                try context.fetch(FetchRequest<PurgedImport>()).map(\.externalID).sorted()
            }
            #expect(recorded == ["bank-1", "bank-2"])
            #expect(try await imports.importCSV(csv, file: "after.csv").skippedAsPurged == 2)
            container.close()

            // Version 4 is recorded: the next open migrates nothing.
            let reports = Reports()
            let reopened = try PersistentContainer(ledger: store.configuration) { _ in reports.saw() }
            #expect(!reports.any)
            reopened.close()
        }

        /// Writes the lines of ``LedgerV1Store`` into a new version 2 store (notes and categories
        /// as version 2 holds them) and closes it.
        static func writeVersionTwo(to configuration: EngineConfiguration) async throws {
            let container = try PersistentContainer(schema: try LedgerSchemaV2.schema(), engine: configuration)
            defer { container.close() }
            let context = container.newBackgroundContext()
            try await context.perform {
                var accounts: [String: LedgerSchemaV2.Account] = [:]
                for (name, opening) in LedgerV1Store.openings.sorted(by: { $0.key < $1.key }) {
                    let account = LedgerSchemaV2.Account(context: context)
                    account.name = name
                    account.openingBalance = opening
                    account.balance = LedgerV1Store.balances[name] ?? 0
                    account.allowsOverdraft = name != "Wallet"
                    accounts[name] = account
                }
                for line in LedgerV1Store.lines {
                    let transaction = LedgerSchemaV2.Transaction(context: context)
                    transaction.amount = line.amount
                    transaction.note = line.memo
                    transaction.category = line.category
                    transaction.date = LedgerV1Store.date(ofDay: line.day)
                    transaction.runningBalance = line.runningBalance
                    transaction.account = accounts[line.account]
                }
                try context.save()
            }
        }
    }
}

/// Whether a migration reported progress.
private final class Reports: Sendable {
    private let seen = Mutex(false)
    func saw() { seen.withLock { $0 = true } }
    var any: Bool { seen.withLock { $0 } }
}
