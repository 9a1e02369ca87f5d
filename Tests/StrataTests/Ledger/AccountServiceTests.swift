import Foundation
import Ledger
import Strata
import Testing

extension LedgerTests {
    /// `AccountService` on every engine: create, list, look up, rename, delete, balance, and the
    /// ledger errors for bad input.
    @Suite("ledger: accounts")
    struct AccountServiceTests {
        @Test("create, list, look up by URI, rename and read the balance", arguments: EngineKind.allCases)
        func lifecycle(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()

            let names = try await ledger.accounts.list().map(\.name)
            #expect(names == ["Checking", "Savings", "Travel", "Wallet"])
            let wallet = try await ledger.accounts.account(uri: chart.wallet.id)
            #expect(wallet == chart.wallet)
            #expect(wallet.balance == 5_000 && wallet.openingBalance == 5_000 && !wallet.allowsOverdraft)
            #expect(chart.travel.currency == "EUR")

            let renamed = try await ledger.accounts.rename(chart.savings.id, to: "  Rainy day  ")
            #expect(renamed.name == "Rainy day")
            #expect(renamed.id == chart.savings.id)
            #expect(try await ledger.accounts.balance(of: chart.checking.id) == 100_000)
        }

        @Test("a duplicate name is a LedgerError, on create and on rename", arguments: EngineKind.allCases)
        func duplicateName(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            await #expect(throws: LedgerError.duplicateAccountName("Checking")) {
                try await ledger.accounts.create(name: "Checking", currency: "USD")
            }
            await #expect(throws: LedgerError.duplicateAccountName("Wallet")) {
                try await ledger.accounts.rename(chart.savings.id, to: "Wallet")
            }
            #expect(try await ledger.accounts.list().count == 4)
            #expect(LedgerError.duplicateAccountName("Wallet").description.contains("Choose another name"))
        }

        @Test("bad names, currencies, URIs and unknown accounts are reported clearly", arguments: EngineKind.allCases)
        func badInput(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            await #expect(throws: LedgerError.invalidName("   ")) {
                try await ledger.accounts.create(name: "   ", currency: "USD")
            }
            await #expect(throws: LedgerError.invalidCurrency("usd")) {
                try await ledger.accounts.create(name: "Lower", currency: "usd")
            }
            let malformed = await #expect(throws: LedgerError.self) {
                try await ledger.accounts.account(uri: "checking")
            }
            guard case .invalidURI("checking", _)? = malformed else {
                Issue.record("expected invalidURI, got \(String(describing: malformed))")
                return
            }
            #expect(malformed?.description.contains("Use a URI exactly as the ledger gave it") == true)
            // Near misses of a real URI: each is reported as the text given, never looked up.
            let wallet = chart.wallet.id
            for nearMiss in [
                "", " ", "strata://", wallet + " ", " " + wallet, wallet.uppercased(), wallet + "/",
                wallet.replacingOccurrences(of: "/Account/", with: "/Acc%6Funt/"),
                wallet.replacingOccurrences(of: "/Account/", with: "/Accöunt/"), wallet + "\u{0}",
            ] {
                let error = await #expect(throws: LedgerError.self) { try await ledger.accounts.account(uri: nearMiss) }
                guard case .invalidURI(nearMiss, InvalidURIReason.malformed.rawValue)? = error else {
                    Issue.record(
                        "\(String(reflecting: nearMiss)): expected invalidURI, got \(String(describing: error))")
                    continue
                }
            }

            // A well-formed URI of this store whose account does not exist.
            let missing = chart.wallet.id.replacingOccurrences(of: "/Account/p", with: "/Account/p99")
            await #expect(throws: LedgerError.unknownAccount(missing)) {
                try await ledger.accounts.balance(of: missing)
            }

            // A URI of another store.
            let foreign = "strata://\(UUID().uuidString)/Account/p1"
            let other = await #expect(throws: LedgerError.self) { try await ledger.accounts.account(uri: foreign) }
            guard case .invalidURI(foreign, _)? = other else {
                Issue.record("expected invalidURI, got \(String(describing: other))")
                return
            }
        }

        @Test("an account with transactions cannot be deleted; an empty one can", arguments: EngineKind.allCases)
        func deleteDenyRule(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let coffee = try await ledger.transactions.add(to: chart.savings.id, amount: -450, note: "Coffee")
            await #expect(throws: LedgerError.accountHasTransactions(account: "Savings", count: 1)) {
                try await ledger.accounts.delete(chart.savings.id)
            }
            try await ledger.transactions.delete(transaction: coffee.id)
            try await ledger.accounts.delete(chart.savings.id)
            await #expect(throws: LedgerError.unknownAccount(chart.savings.id)) {
                try await ledger.accounts.account(uri: chart.savings.id)
            }
            #expect(try await ledger.accounts.list().map(\.name) == ["Checking", "Travel", "Wallet"])
        }

        @Test("a negative opening balance needs overdraft", arguments: EngineKind.allCases)
        func openingOverdraft(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            await #expect(
                throws: LedgerError.insufficientFunds(
                    account: "Debt", available: 0, attemptedBalance: -100, currency: "USD")
            ) {
                try await ledger.accounts.create(
                    name: "Debt", currency: "USD", openingBalance: -100, allowsOverdraft: false)
            }
            let card = try await ledger.accounts.create(name: "Card", currency: "USD", openingBalance: -100)
            #expect(card.balance == -100)
            #expect(try await ledger.accounts.list().map(\.name) == ["Card"])
        }
    }
}
