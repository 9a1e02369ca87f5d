import Foundation
import Ledger
import Strata
import Testing

extension LedgerTests {
    /// `Account.post` on every engine, where transactions dated after the posting exist: in the
    /// posting's account or only in others, fewer or more of them than the check reads one by one
    /// (`Account.laterTransactionsReadDirectly`, 32). A posting with a later transaction of its own
    /// account recalculates that account's running balances; one whose later transactions are all
    /// other accounts' takes the cheap path. Either way every running balance must come out right.
    @Suite("ledger: postings among later transactions")
    struct PostingOrderTests {
        static let start = Date(timeIntervalSince1970: 1_700_000_000)

        /// `count` transactions of 1 minor unit each on `account`, dated one a day from `firstDay`
        /// days after `start`.
        static func addDaily(_ ledger: LedgerFixture, to account: String, count: Int, firstDay: Int) async throws {
            for day in firstDay..<(firstDay + count) {
                try await ledger.transactions.add(
                    to: account, amount: 1, note: "Day \(day)", date: start + Double(day) * 86_400)
            }
        }

        /// Later transactions before a back-dated posting into checking: `elsewhere` in savings,
        /// then `own` in checking. Together 5 (read one by one) or 35 (more than are).
        static let laterCounts: [(elsewhere: Int, own: Int)] = [(3, 2), (30, 5)]

        @Test(
            "a back-dated posting among later transactions, some its account's, recalculates",
            arguments: EngineKind.allCases, laterCounts)
        func backDated(kind: EngineKind, later: (elsewhere: Int, own: Int)) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            try await Self.addDaily(ledger, to: chart.savings.id, count: later.elsewhere, firstDay: 1)
            try await Self.addDaily(ledger, to: chart.checking.id, count: later.own, firstDay: later.elsewhere + 1)

            let posted = try await ledger.transactions.add(
                to: chart.checking.id, amount: 500, note: "Back-dated", date: Self.start)
            #expect(posted.runningBalance == 100_500)
            let history = try await ledger.transactions.transactions(for: chart.checking.id)
            #expect(history.map(\.runningBalance) == (0...later.own).reversed().map { 100_500 + Int64($0) })
            #expect(try await ledger.accounts.balance(of: chart.checking.id) == 100_500 + Int64(later.own))
            #expect(try await ledger.audit().isConsistent)
        }

        @Test(
            "a posting whose later transactions are all other accounts' keeps every running balance right",
            arguments: EngineKind.allCases)
        func laterOnlyElsewhere(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            try await ledger.transactions.add(to: chart.checking.id, amount: -1_000, note: "Rent", date: Self.start)
            try await Self.addDaily(ledger, to: chart.savings.id, count: 3, firstDay: 10)
            // A few later transactions elsewhere: read one by one.
            let few = try await ledger.transactions.add(
                to: chart.checking.id, amount: 200, note: "Refund", date: Self.start + 86_400)
            #expect(few.runningBalance == 99_200)
            try await Self.addDaily(ledger, to: chart.savings.id, count: 40, firstDay: 20)
            // Many later transactions elsewhere: the store is asked about this account alone.
            let many = try await ledger.transactions.add(
                to: chart.checking.id, amount: 300, note: "Refund", date: Self.start + 2 * 86_400)
            #expect(many.runningBalance == 99_500)
            let history = try await ledger.transactions.transactions(for: chart.checking.id)
            #expect(history.map(\.runningBalance) == [99_500, 99_200, 99_000])
            #expect(try await ledger.accounts.balance(of: chart.savings.id) == 43)
            #expect(try await ledger.audit().isConsistent)
        }

        @Test(
            "postings into an account saved in the same unit of work look at its transactions in memory",
            arguments: EngineKind.allCases)
        func unsavedAccount(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            // More later transactions elsewhere than are read one by one: a stored account would be
            // asked about of the store, which cannot answer for an account it does not hold yet.
            try await Self.addDaily(ledger, to: chart.savings.id, count: 40, firstDay: 10)
            let context = ledger.container.newBackgroundContext()
            let start = Self.start
            try await context.perform {
                let account = LedgerAccount(context: context)
                account.name = "New"
                account.openingBalance = 1_000
                account.balance = 1_000
                let newer = LedgerTransaction(context: context)
                newer.amount = 20
                newer.date = start + 86_400
                try account.post(newer)
                let older = LedgerTransaction(context: context)
                older.amount = 300
                older.date = start
                try account.post(older)
                #expect(older.runningBalance == 1_300 && newer.runningBalance == 1_320)
                #expect(account.balance == 1_320)
                try context.save()
            }
            #expect(try await ledger.audit().isConsistent)
        }
    }
}
