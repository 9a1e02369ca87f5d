import Foundation

/// Builds the Foundation `Predicate` for a ``PredicateFuzzExpression`` from the same
/// `PredicateExpressions` types the `#Predicate` macro emits.
enum PredicateFuzzBuilder {
    typealias Variable = PredicateExpressions.Variable<FuzzItem>
    typealias Boolean = any StandardPredicateExpression<Bool>

    static func predicate(_ expression: PredicateFuzzExpression) -> Predicate<FuzzItem> {
        Predicate<FuzzItem> { build(expression, $0) }
    }

    static func build(_ expression: PredicateFuzzExpression, _ v: Variable) -> Boolean {
        switch expression {
        case .and(let a, let b): return conjunction(build(a, v), build(b, v))
        case .or(let a, let b): return disjunction(build(a, v), build(b, v))
        case .not(let a): return negation(build(a, v))
        case .literal(let value): return PredicateExpressions.Value(value)
        case .flag: return PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.flag)
        case .flagEquals(let value, let equal):
            return equality(
                equal, PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.flag), PredicateExpressions.Value(value)
            )
        case .integer(let op, let c, let reversed):
            return relation(
                op, PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.int), PredicateExpressions.Value(c),
                reversed)
        case .real(let op, let c, let reversed):
            return relation(
                op, PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.real), PredicateExpressions.Value(c),
                reversed)
        case .text(let op, let c, let reversed):
            return relation(
                op, PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.text), PredicateExpressions.Value(c),
                reversed)
        case .note(let equal, let c, let nilLiteral, let reversed):
            let column = PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.note)
            if c == nil && nilLiteral {
                let literal = PredicateExpressions.NilLiteral<String>()
                return reversed ? equality(equal, literal, column) : equality(equal, column, literal)
            }
            let value = PredicateExpressions.Value(c)
            return reversed ? equality(equal, value, column) : equality(equal, column, value)
        case .textStarts(let c):
            return PredicateExpressions.SequenceStartsWith(
                base: PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.text),
                prefix: PredicateExpressions.Value(c))
        case .textContains(let c):
            return PredicateExpressions.CollectionContainsCollection(
                base: PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.text),
                other: PredicateExpressions.Value(c))
        case .integerIn(let list):
            return PredicateExpressions.SequenceContains(
                sequence: PredicateExpressions.Value(list),
                element: PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.int))
        case .realIn(let list):
            return PredicateExpressions.SequenceContains(
                sequence: PredicateExpressions.Value(list),
                element: PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.real))
        case .textIn(let list):
            return PredicateExpressions.SequenceContains(
                sequence: PredicateExpressions.Value(list),
                element: PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.text))
        case .noteIn(let list):
            return PredicateExpressions.SequenceContains(
                sequence: PredicateExpressions.Value(list),
                element: PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.note))
        case .noteCoalesced(let fallback, let equal, let c):
            let coalesced = PredicateExpressions.NilCoalesce(
                lhs: PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.note),
                rhs: PredicateExpressions.Value(fallback))
            return equality(equal, coalesced, PredicateExpressions.Value(c))
        case .integerColumns(let op):
            return relation(
                op, PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.int),
                PredicateExpressions.KeyPath(root: v, keyPath: \FuzzItem.int), false)
        case .integerConstants(let op, let a, let b):
            return relation(op, PredicateExpressions.Value(a), PredicateExpressions.Value(b), false)
        }
    }

    // Generic helpers open the existentials so the concrete expression types can be built.

    static func conjunction(
        _ a: some StandardPredicateExpression<Bool>, _ b: some StandardPredicateExpression<Bool>
    ) -> Boolean {
        PredicateExpressions.Conjunction(lhs: a, rhs: b)
    }

    static func disjunction(
        _ a: some StandardPredicateExpression<Bool>, _ b: some StandardPredicateExpression<Bool>
    ) -> Boolean {
        PredicateExpressions.Disjunction(lhs: a, rhs: b)
    }

    static func negation(_ a: some StandardPredicateExpression<Bool>) -> Boolean {
        PredicateExpressions.Negation(a)
    }

    static func equality<L: StandardPredicateExpression, R: StandardPredicateExpression>(
        _ equal: Bool, _ lhs: L, _ rhs: R
    ) -> Boolean
    where L.Output == R.Output, L.Output: Equatable {
        equal ? PredicateExpressions.Equal(lhs: lhs, rhs: rhs) : PredicateExpressions.NotEqual(lhs: lhs, rhs: rhs)
    }

    /// `lhs op rhs`, or `rhs op lhs` when reversed.
    static func relation<L: StandardPredicateExpression, R: StandardPredicateExpression>(
        _ op: PredicateFuzzExpression.Relation, _ lhs: L, _ rhs: R, _ reversed: Bool
    ) -> Boolean where L.Output == R.Output, L.Output: Comparable {
        if reversed { return relation(op, rhs, lhs, false) }
        switch op {
        case .equal: return PredicateExpressions.Equal(lhs: lhs, rhs: rhs)
        case .notEqual: return PredicateExpressions.NotEqual(lhs: lhs, rhs: rhs)
        case .less: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .lessThan)
        case .lessOrEqual: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .lessThanOrEqual)
        case .greater: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .greaterThan)
        case .greaterOrEqual: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .greaterThanOrEqual)
        }
    }
}
