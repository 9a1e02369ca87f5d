import Foundation
import StrataStorage

@testable import Strata

/// The predicate-compiler target. The first byte picks the string alphabet (bit 0: unicode);
/// the next bytes build a ``PredicateFuzzExpression`` (up to three levels of `&&`, `||`, `!`),
/// then one to four detached ``FuzzItem``s.
///
/// Asserts: compiling never traps and is deterministic; no pushed-down filter holds a NaN
/// constant; whatever `FetchRequest` documents as running in the engine compiles to a pure
/// filter; for every item, an object the compiled `FilterNode` accepts also passes its
/// `impliedFilter` (pushdown never drops a match); the node agrees with Foundation's
/// `predicate.evaluate` whenever the strings are ASCII without CR (there Swift's grapheme and
/// canonical-equivalence semantics coincide with Strata's binary ones), and with the binary
/// reference evaluator whenever the whole predicate compiled to a pure filter.
enum PredicateFuzzCheck {
    static func check(_ bytes: [UInt8]) throws(FuzzViolation) {
        var reader = FuzzReader(bytes)
        let unicode = reader.bool()
        let expression = PredicateFuzzExpression.make(&reader, depth: 3, unicode: unicode)
        let items = (0...reader.below(4)).map { _ in FuzzItem.make(&reader, unicode: unicode) }
        let predicate = PredicateFuzzBuilder.predicate(expression)
        let model: EntityModel
        do {
            model = try ModelRegistry.model(for: FuzzItem.self)
        } catch {
            throw FuzzViolation("FuzzItem has no model: \(error)")
        }
        let node = PredicateCompiler.compile(predicate, model: model)
        let again = PredicateCompiler.compile(predicate, model: model)
        if let leaf = nanLeaf(in: node) {
            throw FuzzViolation("\(expression) pushed down the NaN comparison \(leaf)")
        }
        if expression.isDocumentedPushdown && node.pureFilter == nil {
            throw FuzzViolation("\(expression) is documented to run in the engine but compiled to \(node)")
        }
        guard node.pureFilter == again.pureFilter, node.impliedFilter == again.impliedFilter else {
            throw FuzzViolation("compiling \(expression) twice gave different filters")
        }
        for item in items {
            try check(item, expression: expression, predicate: predicate, node: node, comparesWithSwift: !unicode)
        }
    }

    private static func check(
        _ item: FuzzItem, expression: PredicateFuzzExpression, predicate: Predicate<FuzzItem>, node: FilterNode,
        comparesWithSwift: Bool
    ) throws(FuzzViolation) {
        let context = "\(expression) on \(item.summary)"
        let accepted: Bool
        let foundation: Bool
        do {
            accepted = try node.matches(item, bindings: PredicateBindings((predicate.variable, item)))
            foundation = try predicate.evaluate(item)
        } catch {
            throw FuzzViolation("\(context) threw \(error)")
        }
        if accepted, let implied = node.impliedFilter, !implied.matches(item.values, key: item.key) {
            throw FuzzViolation("\(context): the node accepts but the pushed-down \(implied) rejects")
        }
        let reference = PredicateFuzzReference.evaluate(expression, item)
        if comparesWithSwift {
            guard reference == foundation else {
                throw FuzzViolation("\(context): the reference evaluator says \(reference), Foundation \(foundation)")
            }
            guard accepted == foundation else {
                throw FuzzViolation(
                    """
                    \(context): Strata says \(accepted), Foundation \(foundation) (filter: \
                    \(String(describing: node.pureFilter ?? node.impliedFilter)))
                    """
                )
            }
        } else if let pure = node.pureFilter, accepted != reference {
            throw FuzzViolation("\(context): the pure filter \(pure) says \(accepted), binary semantics \(reference)")
        }
    }

    /// A pushed-down leaf that compares with NaN, if any.
    static func nanLeaf(in node: FilterNode) -> Filter? {
        switch node {
        case .filter(let filter): return nanLeaf(in: filter)
        case .and(let parts), .or(let parts): return parts.lazy.compactMap(nanLeaf(in:)).first
        case .not(let inner): return nanLeaf(in: inner)
        case .opaque: return nil
        }
    }

    static func nanLeaf(in filter: Filter) -> Filter? {
        func isNaN(_ value: StoredValue) -> Bool {
            if case .real(let number) = value { return number.isNaN }
            return false
        }
        switch filter {
        case .compare(_, _, let value): return isNaN(value) ? filter : nil
        case .isIn(_, let values): return values.contains(where: isNaN) ? filter : nil
        case .and(let parts), .or(let parts): return parts.lazy.compactMap(nanLeaf(in:)).first
        case .not(let inner): return nanLeaf(in: inner)
        case .constant, .isNull, .isNotNull, .contains, .hasPrefix, .primaryKey: return nil
        }
    }
}
