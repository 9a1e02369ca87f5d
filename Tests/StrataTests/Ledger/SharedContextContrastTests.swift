import Foundation
import Ledger
import Strata
import Testing

/// The article's anti-pattern, kept here on purpose and used only by the contrast test: a
/// `@MainActor` service that makes one context up front and reuses it for every call.
///
/// Do not copy it. When a call throws after mutating objects, its unsaved changes stay in the
/// shared context, and the next call's `save()` writes them.
@MainActor
final class SharedContextTransactionService {
    private let context: ObjectContext

    init(contexts: any ContextFactory) {
        context = contexts.newBackgroundContext()
    }

    func add(to accountURI: String, amount: Int64, note: String) async throws {
        let context = self.context
        try await context.perform {
            let url = try #require(URL(string: accountURI))
            let account = try context.existingObject(
                with: context.managedObjectID(forURIRepresentation: url), as: LedgerAccount.self)
            let transaction = LedgerTransaction(context: context)
            transaction.amount = amount
            transaction.note = note
            transaction.account = account
            try account.recalculateBalances()
            try context.save()
        }
    }
}

extension LedgerTests {
    @Suite("ledger: shared context versus a fresh context per operation")
    struct SharedContextContrastTests {
        @Test(
            "a shared @MainActor context leaks a failed call's changes into the next; fresh contexts do not",
            arguments: EngineKind.allCases)
        func sharedContextLeaks(kind: EngineKind) async throws {
            // The anti-pattern: the refused withdrawal stays in the context and the deposit saves it.
            let shared = try LedgerFixture(kind)
            let sharedWallet = try await shared.accounts.create(
                name: "Wallet", currency: "USD", openingBalance: 10_000, allowsOverdraft: false)
            let leaky = await SharedContextTransactionService(contexts: shared.container)
            await #expect(throws: LedgerError.self) {
                try await leaky.add(to: sharedWallet.id, amount: -50_000, note: "Refused")
            }
            try await leaky.add(to: sharedWallet.id, amount: 45_000, note: "Deposit")
            let leaked = try await shared.audit().line("Wallet")
            #expect(leaked?.notes == ["Refused", "Deposit"])
            #expect(leaked?.balance == 5_000)

            // The pattern: the same two calls through the service, a fresh context each.
            let fresh = try LedgerFixture(kind)
            let freshWallet = try await fresh.accounts.create(
                name: "Wallet", currency: "USD", openingBalance: 10_000, allowsOverdraft: false)
            await #expect(throws: LedgerError.self) {
                try await fresh.transactions.add(to: freshWallet.id, amount: -50_000, note: "Refused")
            }
            try await fresh.transactions.add(to: freshWallet.id, amount: 45_000, note: "Deposit")
            let clean = try await fresh.audit().line("Wallet")
            #expect(clean?.notes == ["Deposit"])
            #expect(clean?.balance == 55_000)
        }
    }
}
