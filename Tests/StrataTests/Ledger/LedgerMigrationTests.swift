import Foundation
import Ledger
import Strata
import Synchronization
import Testing

extension LedgerTests {
    /// A store written by ledger version 1 opens with version 4 through ``LedgerMigrationPlan``:
    /// every account, balance and transaction kept, `memo` now `note`, the categories filled.
    @Suite("ledger: a version 1 store migrates to version 4")
    struct LedgerMigrationTests {
        @Test(
            "every balance and transaction survives, notes keep the memos, categories are filled",
            arguments: EngineKind.allCases)
        func versionOneStoreMigrates(kind: EngineKind) async throws {
            let store = try TestStore(kind)
            try await LedgerV1Store.write(to: store.configuration)

            let reports = ProgressReports()
            let container = try PersistentContainer(ledger: store.configuration) { reports.append($0) }
            #expect(try await Self.lines(in: container) == Self.sorted(LedgerV1Store.lines))
            let balances = try await AccountService(contexts: container).list()
            #expect(Dictionary(uniqueKeysWithValues: balances.map { ($0.name, $0.balance) }) == LedgerV1Store.balances)
            #expect(balances.first { $0.name == "Wallet" }?.allowsOverdraft == false)

            let progress = reports.all
            #expect(progress.first?.fractionCompleted == 0)
            #expect(progress.last?.fractionCompleted == 1)
            #expect(progress.allSatisfy { $0.storeVersion == 1 && $0.modelVersion == 4 })

            // The services work on the migrated store.
            let accounts = Dictionary(uniqueKeysWithValues: balances.map { ($0.name, $0) })
            let checking = try #require(accounts["Checking"])
            let wallet = try #require(accounts["Wallet"])
            let transactions = TransactionService(contexts: container)
            let receipt = try await transactions.transfer(
                from: checking.id, to: wallet.id, amount: 2_000, note: "More cash")
            #expect(receipt.deposit.runningBalance == LedgerV1Store.balances["Wallet"]! + 2_000)
            let lunch = try await transactions.add(to: wallet.id, amount: -900, note: "Lunch")
            #expect(lunch.category == "dining")
            #expect(
                try await AccountService(contexts: container).balance(of: checking.id)
                    == LedgerV1Store.balances["Checking"]! - 2_000)
            container.close()

            // Version 4 is recorded: the next open migrates nothing.
            let again = ProgressReports()
            let reopened = try PersistentContainer(ledger: store.configuration) { again.append($0) }
            #expect(again.all.isEmpty)
            #expect(try await Self.lines(in: reopened).count == LedgerV1Store.lines.count + 3)
        }

        @Test("a custom stage that throws leaves the version 1 store as it was", arguments: EngineKind.allCases)
        func failedStageLeavesTheStore(kind: EngineKind) async throws {
            let store = try TestStore(kind)
            try await LedgerV1Store.write(to: store.configuration)

            #expect(throws: RefusedStage.self) {
                try PersistentContainer(
                    schema: .ledger, migrationPlan: RefusingPlan.self, engine: store.configuration)
            }

            let container = try PersistentContainer(schema: try LedgerSchemaV1.schema(), engine: store.configuration)
            let context = container.newBackgroundContext()
            let stored = try await context.perform {
                try context.fetch(FetchRequest<LedgerSchemaV1.Transaction>()).map {
                    LedgerV1Store.Line(
                        account: $0.account?.name ?? "", amount: $0.amount, memo: $0.memo,
                        day: Int($0.date.timeIntervalSince(LedgerV1Store.start) / 86_400), category: nil,
                        runningBalance: $0.runningBalance)
                }
            }
            #expect(Self.sorted(stored) == Self.sorted(LedgerV1Store.lines.map { with($0) { $0.category = nil } }))
        }

        @Test(
            "another application's store at version 1 is refused and left as it was, not made a ledger",
            arguments: EngineKind.allCases)
        func otherApplicationsStoreIsRefused(kind: EngineKind) async throws {
            let store = try TestStore(kind)
            let theirs = try store.open() // Account, Entry and Tag, version 1: not a ledger
            let accountID = try await Account.insert(named: "Theirs", into: theirs)
            theirs.close()

            #expect(throws: StrataError.self) { try PersistentContainer(ledger: store.configuration) }
            let reopened = try store.open()
            let context = reopened.newBackgroundContext()
            let name = try await context.perform { try context.existingObject(with: accountID, as: Account.self).name }
            #expect(name == "Theirs")
            reopened.close()
        }

        /// Every transaction of a current (version 4) store, in the shape of ``LedgerV1Store/Line``.
        static func lines(in container: PersistentContainer) async throws -> [LedgerV1Store.Line] {
            let context = container.newBackgroundContext()
            return sorted(
                try await context.perform {
                    try context.fetch(FetchRequest<LedgerTransaction>()).map {
                        LedgerV1Store.Line(
                            account: $0.account?.name ?? "", amount: $0.amount, memo: $0.note,
                            day: Int($0.date.timeIntervalSince(LedgerV1Store.start) / 86_400), category: $0.category,
                            runningBalance: $0.runningBalance)
                    }
                })
        }

        static func sorted(_ lines: [LedgerV1Store.Line]) -> [LedgerV1Store.Line] {
            lines.sorted { ($0.account, $0.day, $0.amount) < ($1.account, $1.day, $1.amount) }
        }
    }
}

/// Progress reports collected from the opening thread.
private final class ProgressReports: Sendable {
    private let reports = Mutex<[MigrationProgress]>([])
    func append(_ progress: MigrationProgress) { reports.withLock { $0.append(progress) } }
    var all: [MigrationProgress] { reports.withLock { $0 } }
}

private struct RefusedStage: Error {}

/// The ledger's plan with a stage that edits every transaction, then throws.
private enum RefusingPlan: MigrationPlan {
    static var schemas: [any VersionedSchema.Type] {
        [LedgerSchemaV1.self, LedgerSchemaV2.self, LedgerSchemaV3.self, LedgerSchemaV4.self]
    }
    static var stages: [MigrationStage] {
        [
            .custom(
                from: LedgerSchemaV1.self, to: LedgerSchemaV2.self, willMigrate: nil,
                didMigrate: { context in
                    for transaction in try context.fetch(FetchRequest<LedgerSchemaV2.Transaction>()) {
                        transaction.category = "edited"
                        transaction.amount = 1
                    }
                    try context.save()
                    throw RefusedStage()
                }),
            LedgerMigrationPlan.migrateV2toV3,
            LedgerMigrationPlan.migrateV3toV4,
        ]
    }
}

private func with<Value>(_ value: Value, _ change: (inout Value) -> Void) -> Value {
    var copy = value
    change(&copy)
    return copy
}
