import Foundation
import StrataStorage

// How each supported Foundation predicate expression compiles. Unsupported expressions
// (and supported ones with unsupported operands) return nil and run in memory.

extension PredicateExpressions.Variable: PredicateVariableIdentifying {
    var variableID: PredicateExpressions.VariableID { key }
}

extension PredicateExpressions.KeyPath: FilterOperandCompilable {
    /// An attribute of the predicate's variable, or the raw value of a raw-value attribute
    /// (`$0.status.rawValue`), which compares and orders as its stored value.
    func operand(with compiler: PredicateCompiler) -> PredicateCompiler.Operand? {
        if let column = compiler.column(root: root, keyPath: keyPath) { return column }
        guard case .equatableColumn(let column, let type)? = compiler.operand(root),
            let rawValueType = Swift.type(of: keyPath).rootType as? any RawValueAttribute.Type,
            rawValueType.isRawValueKeyPath(keyPath)
        else { return nil }
        return .column(column, type)
    }
}

extension PredicateExpressions.KeyPath: FilterNodeCompilable {
    /// A Boolean attribute used directly as a condition.
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        guard case .column(let column, .bool)? = compiler.column(root: root, keyPath: keyPath) else { return nil }
        return .filter(.compare(column: column, .equal, .integer(1)))
    }
}

extension PredicateExpressions.Value: FilterOperandCompilable {
    func operand(with compiler: PredicateCompiler) -> PredicateCompiler.Operand? {
        if let ids = PredicateCompiler.objectIDs(value) { return ids }
        if let stored = PredicateCompiler.storedConstant(value) { return .constant(stored) }
        guard let sequence = value as? any Sequence else { return nil }
        return PredicateCompiler.storedConstants(of: sequence).map { .constants($0) }
    }
}

extension PredicateExpressions.Value: FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        (value as? Bool).map { .filter(.constant($0)) }
    }
}

extension PredicateExpressions.NilLiteral: FilterOperandCompilable {
    func operand(with compiler: PredicateCompiler) -> PredicateCompiler.Operand? { .constant(.null) }
}

extension PredicateExpressions.Conjunction: FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        .conjunction(compiler.node(lhs), compiler.node(rhs))
    }
}

extension PredicateExpressions.Disjunction: FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        .disjunction(compiler.node(lhs), compiler.node(rhs))
    }
}

extension PredicateExpressions.Negation: FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        .not(compiler.node(wrapped))
    }
}

extension PredicateExpressions.Equal: FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        compiler.comparison(compiler.operand(lhs), .equal, compiler.operand(rhs))
    }
}

extension PredicateExpressions.NotEqual: FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        compiler.comparison(compiler.operand(lhs), .notEqual, compiler.operand(rhs))
    }
}

extension PredicateExpressions.Comparison: FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        let mapped: ComparisonOperator
        switch op {
        case .lessThan: mapped = .lessThan
        case .lessThanOrEqual: mapped = .lessThanOrEqual
        case .greaterThan: mapped = .greaterThan
        case .greaterThanOrEqual: mapped = .greaterThanOrEqual
        @unknown default: return nil
        }
        return compiler.comparison(compiler.operand(lhs), mapped, compiler.operand(rhs))
    }
}

extension PredicateExpressions.SequenceContains: FilterNodeCompilable {
    /// `[constants].contains($0.attribute)`.
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        let column: Int
        let type: ColumnType
        switch compiler.operand(element) {
        case .column(let c, let t)?, .equatableColumn(let c, let t)?: (column, type) = (c, t)
        default: return nil
        }
        let values: [StoredValue]
        switch compiler.operand(sequence) {
        case .constants(let constants)?: values = constants
        case .objectIDs(let ids, false)? where type == .reference:
            guard let keys = compiler.referenceKeys(ids, column: column) else { return nil }
            values = keys
        default: return nil
        }
        guard values.allSatisfy({ type.storageClass.admits($0) }) else { return nil }
        let nonNull = values.filter { !$0.isNull }
        let membership = FilterNode.filter(.isIn(column: column, values: nonNull))
        return nonNull.count == values.count ? membership : .or([membership, .filter(.isNull(column: column))])
    }
}

extension PredicateExpressions.SequenceStartsWith: FilterNodeCompilable {
    /// `$0.text.starts(with: "prefix")`.
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        guard case .column(let column, .string)? = compiler.operand(base),
            case .constant(.text(let prefix))? = compiler.operand(self.prefix)
        else { return nil }
        return .filter(.hasPrefix(column: column, prefix: prefix))
    }
}

extension PredicateExpressions.CollectionContainsCollection: FilterNodeCompilable {
    /// `$0.text.contains("substring")`.
    func compile(with compiler: PredicateCompiler) -> FilterNode? {
        guard case .column(let column, .string)? = compiler.operand(base),
            case .constant(.text(let substring))? = compiler.operand(other)
        else { return nil }
        return .filter(.contains(column: column, substring: substring))
    }
}

extension PredicateExpressions.UnaryMinus: FilterOperandCompilable {
    /// A negated constant (`-5`, `-limit`): the predicate macro writes negative literals this way.
    func operand(with compiler: PredicateCompiler) -> PredicateCompiler.Operand? {
        guard case .constant(let value)? = compiler.operand(wrapped) else { return nil }
        switch value {
        case .integer(let integer) where integer != .min: return .constant(.integer(-integer))
        case .real(let real): return .constant(.real(-real))
        default: return nil
        }
    }
}
