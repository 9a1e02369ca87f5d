import Foundation
import Strata
import Testing

/// Predicates built at run time as long chains of `||` or `&&` (Foundation nests one level per
/// term). A chain compiles to one flat filter, so SQLite's parser no longer overflows past about
/// 90 terms; a chain deeper than the compiler's limit (256 levels) is `.misuse` saying what to do
/// instead, where 600 terms used to overflow the thread's stack and kill the process.
@Suite("deep predicates")
struct DeepPredicateTests {
    /// `balance == 0 || balance == 1 || … || balance == terms - 1`, nested as Foundation nests it.
    static func anyBalance(below terms: Int) -> Predicate<Account> {
        Predicate<Account> { account in
            var chain: any StandardPredicateExpression<Bool> = equal(account, 0)
            for value in 1..<Int64(terms) { chain = either(chain, equal(account, value)) }
            return chain
        }
    }

    /// `balance != -1 && (balance != -2 && (… && balance != -terms))`, nested to the right.
    static func noNegativeBalance(terms: Int) -> Predicate<Account> {
        Predicate<Account> { account in
            var chain: any StandardPredicateExpression<Bool> = PredicateExpressions.build_NotEqual(
                lhs: PredicateExpressions.build_KeyPath(root: account, keyPath: \Account.balance),
                rhs: PredicateExpressions.build_Arg(Int64(-1)))
            for value in 2...Int64(terms) {
                let term = PredicateExpressions.build_NotEqual(
                    lhs: PredicateExpressions.build_KeyPath(root: account, keyPath: \Account.balance),
                    rhs: PredicateExpressions.build_Arg(-value))
                chain = both(term, chain)
            }
            return chain
        }
    }

    static func equal(
        _ account: PredicateExpressions.Variable<Account>, _ value: Int64
    )
        -> some StandardPredicateExpression<Bool>
    {
        PredicateExpressions.build_Equal(
            lhs: PredicateExpressions.build_KeyPath(root: account, keyPath: \Account.balance),
            rhs: PredicateExpressions.build_Arg(value))
    }

    static func either<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(
        _ lhs: L, _ rhs: R
    )
        -> any StandardPredicateExpression<Bool>
    {
        PredicateExpressions.build_Disjunction(lhs: lhs, rhs: rhs)
    }

    static func both<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(
        _ lhs: L, _ rhs: R
    )
        -> any StandardPredicateExpression<Bool>
    {
        PredicateExpressions.build_Conjunction(lhs: lhs, rhs: rhs)
    }

    @Test("chains of 200 || and 200 && terms fetch and count the right rows", arguments: EngineKind.allCases)
    func longChains(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let context = container.newBackgroundContext()
        let (matched, counted, kept) = try await context.perform { () -> ([Int64], Int, Int) in
            for balance in [-300, -150, 3, 150, 199, 200, 5_000] as [Int64] {
                let account = Account(context: context)
                account.name = "a\(balance)"
                account.balance = balance
            }
            try context.save()
            let matched = try context.fetch(FetchRequest(predicate: Self.anyBalance(below: 200))).map(\.balance)
            let counted = try context.count(for: FetchRequest(predicate: Self.anyBalance(below: 200)))
            let kept = try context.count(for: FetchRequest(predicate: Self.noNegativeBalance(terms: 200)))
            return (matched.sorted(), counted, kept)
        }
        #expect(matched == [3, 150, 199])
        #expect(counted == 3)
        #expect(kept == 6, "only -150 is excluded by 200 terms of != -1 … -200")
    }

    @Test("a chain past 256 levels is misuse saying what to do, not a crash", arguments: EngineKind.allCases)
    func tooDeep(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let context = container.newBackgroundContext()
        for predicate in [Self.anyBalance(below: 600), Self.noNegativeBalance(terms: 600)] {
            do {
                _ = try await context.perform { try context.fetch(FetchRequest(predicate: predicate)).count }
                Issue.record("a 600-term chain was fetched")
            } catch StrataError.misuse(let detail, _) {
                #expect(detail.contains("nests more than 256 levels") && detail.contains("contains"), "\(detail)")
            }
        }
    }
}
