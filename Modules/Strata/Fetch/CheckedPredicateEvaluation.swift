import Foundation
import StrataStorage

/// A predicate expression Strata evaluates itself when its predicate part runs in memory, so
/// that integer arithmetic that overflows or divides by zero throws ``CheckedEvaluation``'s
/// `.misuse` instead of stopping the program, as Foundation's `evaluate` does (it uses the
/// trapping `+`, `-`, `*`, `/` and `%`).
///
/// The arithmetic expressions conform, and so do the expressions that commonly hold them
/// (comparisons, `==`, `!=`, `&&`, `||`, `!`, a sequence's `contains { … }` and
/// `allSatisfy { … }`), each evaluating its parts through ``CheckedEvaluation/evaluate(_:_:)``
/// with Foundation's semantics otherwise (the same short-circuits). Any other expression is
/// evaluated by Foundation: arithmetic inside one of those (an optional's `flatMap`, a
/// conditional) is not checked.
protocol CheckedPredicateExpression {
    /// The expression's value (of its `Output` type), its integer arithmetic checked.
    func checkedValue(_ bindings: PredicateBindings) throws -> Any
    /// Whether the expression does integer arithmetic, here or in a part Strata evaluates.
    var hasCheckedArithmetic: Bool { get }
}

/// Evaluation of predicate expressions with checked integer arithmetic.
///
/// ```swift
/// let node: FilterNode =
///     CheckedEvaluation.hasArithmetic(expression)
///     ? .opaque { try CheckedEvaluation.evaluate(expression, $0) } : .opaque { try expression.evaluate($0) }
/// ```
enum CheckedEvaluation {
    /// `expression`'s value: Strata's checked evaluation for the expressions that have one,
    /// Foundation's `evaluate` for the others.
    /// - Throws: `.misuse` when integer arithmetic overflows or divides by zero; what the
    ///   expression's own evaluation throws.
    static func evaluate<Expression: PredicateExpression>(
        _ expression: Expression, _ bindings: PredicateBindings
    ) throws -> Expression.Output {
        guard let checked = expression as? any CheckedPredicateExpression else {
            return try expression.evaluate(bindings)
        }
        guard let value = try checked.checkedValue(bindings) as? Expression.Output else {
            // Each conformance returns its own Output: reaching this is a Strata bug.
            throw StrataError.misuse("a predicate expression gave a value of another type than its own")
        }
        return value
    }

    /// Whether `expression` does integer arithmetic Strata checks.
    static func hasArithmetic(_ expression: some PredicateExpression) -> Bool {
        (expression as? any CheckedPredicateExpression)?.hasCheckedArithmetic ?? false
    }

    /// `lhs op rhs` for integers, or nil when the operands are not integers of one type.
    /// - Throws: `.misuse` when the result does not fit the type.
    static func arithmetic<Value>(
        _ lhs: Value, _ rhs: Value, _ op: PredicateExpressions.ArithmeticOperator
    ) throws -> Value? {
        guard let left = lhs as? any FixedWidthInteger else { return nil }
        return try integerArithmetic(left, rhs, op) as? Value
    }

    private static func integerArithmetic<Integer: FixedWidthInteger>(
        _ lhs: Integer, _ rhs: Any, _ op: PredicateExpressions.ArithmeticOperator
    ) throws -> Integer? {
        guard let rhs = rhs as? Integer else { return nil }
        let (result, overflow): (Integer, Bool)
        let symbol: String
        switch op {
        case .add: ((result, overflow), symbol) = (lhs.addingReportingOverflow(rhs), "+")
        case .subtract: ((result, overflow), symbol) = (lhs.subtractingReportingOverflow(rhs), "-")
        case .multiply: ((result, overflow), symbol) = (lhs.multipliedReportingOverflow(by: rhs), "*")
        @unknown default: return nil
        }
        if overflow { throw overflowError("\(lhs) \(symbol) \(rhs)", Integer.self) }
        return result
    }

    /// `lhs / rhs` (or `%` when `remainder`) for integers.
    /// - Throws: `.misuse` for a division by zero, or a quotient that does not fit the type.
    static func division<Integer: BinaryInteger>(_ lhs: Integer, _ rhs: Integer, remainder: Bool) throws -> Integer {
        let symbol = remainder ? "%" : "/"
        if rhs == 0 {
            throw StrataError.misuse(
                """
                the predicate divides by zero (\(lhs) \(symbol) 0) while Strata evaluates it in memory; Strata stops \
                the fetch here instead of the program. Guard the divisor in the predicate (divisor != 0 && …)
                """)
        }
        // Only the most negative value divided by -1 overflows (two's complement).
        if Integer.isSigned, rhs == -1, let fixed = lhs as? any FixedWidthInteger, isMinimum(fixed) {
            throw overflowError("\(lhs) \(symbol) -1", Integer.self)
        }
        return remainder ? lhs % rhs : lhs / rhs
    }

    /// `-value` for numbers.
    /// - Throws: `.misuse` for the most negative integer, whose negation does not fit its type.
    static func negation<Value: SignedNumeric>(_ value: Value) throws -> Value {
        if let fixed = value as? any FixedWidthInteger, isMinimum(fixed) {
            throw overflowError("-(\(value))", Value.self)
        }
        return -value
    }

    /// Whether `value` is its type's most negative value.
    private static func isMinimum<Integer: FixedWidthInteger>(_ value: Integer) -> Bool { value == Integer.min }

    private static func overflowError(_ operation: String, _ type: Any.Type) -> StrataError {
        .misuse(
            """
            the predicate's integer arithmetic overflows: \(operation) does not fit \(type), found while Strata \
            evaluates the predicate in memory; Strata stops the fetch here instead of the program. Keep the \
            operands in range in the predicate, or compute in Double
            """)
    }
}

extension PredicateExpressions.Arithmetic: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        let lhs = try CheckedEvaluation.evaluate(self.lhs, bindings)
        let rhs = try CheckedEvaluation.evaluate(self.rhs, bindings)
        if let integer = try CheckedEvaluation.arithmetic(lhs, rhs, op) { return integer }
        // Not integers (a Double, a Decimal): nothing traps.
        switch op {
        case .add: return lhs + rhs
        case .subtract: return lhs - rhs
        case .multiply: return lhs * rhs
        @unknown default: return try evaluate(bindings)
        }
    }

    var hasCheckedArithmetic: Bool { true }
}

extension PredicateExpressions.UnaryMinus: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        try CheckedEvaluation.negation(CheckedEvaluation.evaluate(wrapped, bindings))
    }

    var hasCheckedArithmetic: Bool { true }
}

extension PredicateExpressions.IntDivision: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        try CheckedEvaluation.division(
            CheckedEvaluation.evaluate(lhs, bindings), CheckedEvaluation.evaluate(rhs, bindings), remainder: false)
    }

    var hasCheckedArithmetic: Bool { true }
}

extension PredicateExpressions.IntRemainder: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        try CheckedEvaluation.division(
            CheckedEvaluation.evaluate(lhs, bindings), CheckedEvaluation.evaluate(rhs, bindings), remainder: true)
    }

    var hasCheckedArithmetic: Bool { true }
}

extension PredicateExpressions.Comparison: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        let lhs = try CheckedEvaluation.evaluate(self.lhs, bindings)
        let rhs = try CheckedEvaluation.evaluate(self.rhs, bindings)
        switch op {
        case .lessThan: return lhs < rhs
        case .lessThanOrEqual: return lhs <= rhs
        case .greaterThan: return lhs > rhs
        case .greaterThanOrEqual: return lhs >= rhs
        @unknown default: return try evaluate(bindings)
        }
    }

    var hasCheckedArithmetic: Bool { CheckedEvaluation.hasArithmetic(lhs) || CheckedEvaluation.hasArithmetic(rhs) }
}

extension PredicateExpressions.Equal: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        try CheckedEvaluation.evaluate(lhs, bindings) == CheckedEvaluation.evaluate(rhs, bindings)
    }

    var hasCheckedArithmetic: Bool { CheckedEvaluation.hasArithmetic(lhs) || CheckedEvaluation.hasArithmetic(rhs) }
}

extension PredicateExpressions.NotEqual: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        try CheckedEvaluation.evaluate(lhs, bindings) != CheckedEvaluation.evaluate(rhs, bindings)
    }

    var hasCheckedArithmetic: Bool { CheckedEvaluation.hasArithmetic(lhs) || CheckedEvaluation.hasArithmetic(rhs) }
}

extension PredicateExpressions.Conjunction: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        // `&&` short-circuits, as Foundation's does: the right side of a false left is not evaluated.
        try CheckedEvaluation.evaluate(lhs, bindings) && CheckedEvaluation.evaluate(rhs, bindings)
    }

    var hasCheckedArithmetic: Bool { CheckedEvaluation.hasArithmetic(lhs) || CheckedEvaluation.hasArithmetic(rhs) }
}

extension PredicateExpressions.Disjunction: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        try CheckedEvaluation.evaluate(lhs, bindings) || CheckedEvaluation.evaluate(rhs, bindings)
    }

    var hasCheckedArithmetic: Bool { CheckedEvaluation.hasArithmetic(lhs) || CheckedEvaluation.hasArithmetic(rhs) }
}

extension PredicateExpressions.Negation: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        try !CheckedEvaluation.evaluate(wrapped, bindings)
    }

    var hasCheckedArithmetic: Bool { CheckedEvaluation.hasArithmetic(wrapped) }
}

extension PredicateExpressions.SequenceContainsWhere: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        var inner = bindings
        return try CheckedEvaluation.evaluate(sequence, bindings).contains {
            inner[variable] = $0
            return try CheckedEvaluation.evaluate(test, inner)
        }
    }

    var hasCheckedArithmetic: Bool {
        CheckedEvaluation.hasArithmetic(sequence) || CheckedEvaluation.hasArithmetic(test)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: CheckedPredicateExpression {
    func checkedValue(_ bindings: PredicateBindings) throws -> Any {
        var inner = bindings
        return try CheckedEvaluation.evaluate(sequence, bindings).allSatisfy {
            inner[variable] = $0
            return try CheckedEvaluation.evaluate(test, inner)
        }
    }

    var hasCheckedArithmetic: Bool {
        CheckedEvaluation.hasArithmetic(sequence) || CheckedEvaluation.hasArithmetic(test)
    }
}
