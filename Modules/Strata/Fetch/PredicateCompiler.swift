import Foundation

/// Compiles a Foundation `Predicate` over an entity into a ``FilterNode``.
///
/// Each supported `PredicateExpressions` type knows how to compile itself (see
/// `PredicateExpressions+Filter.swift`); everything else becomes an opaque node that
/// Foundation evaluates in memory.
struct PredicateCompiler {
    let model: EntityModel
    let variableID: PredicateExpressions.VariableID

    /// A compile-time operand: a column of the entity, or a constant.
    enum Operand {
        case column(Int, ColumnType)
        case constant(StoredValue)
        case constants([StoredValue])
    }

    static func compile<Entity: ManagedObject>(_ predicate: Predicate<Entity>, model: EntityModel) -> FilterNode {
        let compiler = PredicateCompiler(model: model, variableID: predicate.variable.key)
        return compiler.node(predicate.expression)
    }

    /// Compiles a Boolean sub-expression, falling back to in-memory evaluation.
    func node<Expression: PredicateExpression>(_ expression: Expression) -> FilterNode where Expression.Output == Bool {
        if let compilable = expression as? any FilterNodeCompilable, let compiled = compilable.compile(with: self) {
            return compiled
        }
        return .opaque { try expression.evaluate($0) }
    }

    /// Compiles an operand expression, or nil when it is neither a column nor a constant.
    func operand(_ expression: some PredicateExpression) -> Operand? {
        (expression as? any FilterOperandCompilable)?.operand(with: self)
    }

    /// The column a single-step key path from the predicate's variable reads.
    func column(root: some PredicateExpression, keyPath: AnyKeyPath) -> Operand? {
        guard let variable = root as? any PredicateVariableIdentifying, variable.variableID == variableID,
            let property = model.propertyIndex(forKeyPath: keyPath), let column = model.properties[property].column
        else { return nil }
        switch model.properties[property].kind {
        case .attribute(let type, _, _): return .column(column, type)
        case .relationship:
            // Only the projected `$relationship` (an ObjectID?) compares as a key.
            return Swift.type(of: keyPath).valueType == Optional<ObjectID>.self ? .column(column, .reference) : nil
        }
    }

    /// Converts a constant to its stored form, or nil when it cannot be compared in the engine.
    static func storedConstant(_ value: Any) -> StoredValue? {
        if let id = value as? ObjectID { return .integer(id.primaryKey ?? 0) }
        if let optionalID = value as? ObjectID? { return optionalID.map { .integer($0.primaryKey ?? 0) } ?? .null }
        guard let attribute = value as? any AttributeValue else { return nil }
        let stored = attribute.storedValue
        if case .real(let number) = stored, number.isNaN { return nil }
        return stored
    }

    /// `column op constant`, with the two-valued null rules of ``Filter``.
    func comparison(_ lhs: Operand?, _ op: ComparisonOperator, _ rhs: Operand?) -> FilterNode? {
        switch (lhs, rhs) {
        case (.column(let column, let type)?, .constant(let value)?):
            return leaf(column, type, op, value)
        case (.constant(let value)?, .column(let column, let type)?):
            return leaf(column, type, op.mirrored, value)
        default:
            return nil
        }
    }

    private func leaf(_ column: Int, _ type: ColumnType, _ op: ComparisonOperator, _ value: StoredValue) -> FilterNode? {
        if value.isNull {
            switch op {
            case .equal: return .filter(.isNull(column: column))
            case .notEqual: return .filter(.isNotNull(column: column))
            default: return nil
            }
        }
        guard type.storageClass.admits(value) else { return nil }
        return .filter(.compare(column: column, op, value))
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    var mirrored: ComparisonOperator {
        switch self {
        case .equal, .notEqual: self
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        }
    }
}

/// A Boolean predicate expression that can compile itself into a ``FilterNode``.
protocol FilterNodeCompilable {
    func compile(with compiler: PredicateCompiler) -> FilterNode?
}

/// A predicate expression that is a column reference or a constant.
protocol FilterOperandCompilable {
    func operand(with compiler: PredicateCompiler) -> PredicateCompiler.Operand?
}

/// Lets the compiler recognise the predicate's own variable whatever its type.
protocol PredicateVariableIdentifying {
    var variableID: PredicateExpressions.VariableID { get }
}
