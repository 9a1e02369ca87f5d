import Foundation
import StrataStorage

/// Compiles a Foundation `Predicate` over an entity into a ``FilterNode``.
///
/// Each supported `PredicateExpressions` type knows how to compile itself (see
/// `PredicateExpressions+Filter.swift`); everything else becomes an opaque node that
/// Foundation evaluates in memory.
struct PredicateCompiler {
    let model: EntityModel
    let variableID: PredicateExpressions.VariableID
    /// Every object ID the compiled filter compares with a relationship's key, with the
    /// relationship's target: the caller checks them (see ``compile(_:model:checkingReferencesWith:)``).
    let references = ReferenceLog()
    /// How many Boolean expressions enclose the one being compiled.
    private var depth = 0

    /// The deepest nesting of Boolean expressions compiled. Foundation's predicate types nest
    /// one level per `&&` or `||` of a chain, and compiling (and copying) them recurses once per
    /// level, so a chain of thousands of terms would overflow a thread's stack. Deeper
    /// predicates are refused with `.misuse`.
    static let deepestNesting = 256

    init(model: EntityModel, variableID: PredicateExpressions.VariableID) {
        self.model = model
        self.variableID = variableID
    }

    /// A compile-time operand: a column of the entity, or a constant.
    enum Operand {
        /// A column that compares and orders by its stored values (a scalar attribute, a raw
        /// value read through `.rawValue`).
        case column(Int, ColumnType)
        /// A raw-value attribute: equal stored values mean equal values, but the type's order
        /// is its own, so only `==`, `!=`, nil checks and membership run in the engine.
        case equatableColumn(Int, ColumnType)
        /// A Codable attribute or a to-one relationship read as an object: only nil checks run
        /// in the engine.
        case nilCheckedColumn(Int)
        case constant(StoredValue)
        case constants([StoredValue])
        /// Object IDs (nil for a nil optional ID), to compare with a relationship's key; single
        /// for one ID, not single for a collection of them.
        case objectIDs([ObjectID?], isSingle: Bool)
    }

    /// The object IDs a compiled predicate compares with relationship keys.
    final class ReferenceLog {
        var entries: [(id: ObjectID, target: EntityModel)] = []
        /// Set when a sub-expression nested deeper than ``deepestNesting`` was not compiled.
        var tooDeep = false
    }

    /// Compiles a predicate no deeper than ``deepestNesting`` (tests and fuzzing).
    static func compile<Entity: ManagedObject>(_ predicate: Predicate<Entity>, model: EntityModel) -> FilterNode {
        let compiler = PredicateCompiler(model: model, variableID: predicate.variable.key)
        let node = compiler.node(predicate.expression)
        precondition(!compiler.references.tooDeep, "a predicate nests deeper than \(deepestNesting) levels")
        return node
    }

    /// Compiles a predicate for a fetch in `context`, refusing object IDs that cannot name a row
    /// of the relationship they are compared with, as ``ObjectContext/existingObject(with:)``
    /// refuses them: otherwise only the primary key would be compared, and an ID of another
    /// store or entity would match unrelated rows.
    /// - Throws: ``StrataStorage/StrataError/invalidURI(_:reason:)`` with `.otherStore`, `.unknownEntity` (an
    ///   ID of an entity other than the relationship's target) or `.temporary` (an unsaved object).
    static func compile<Entity: ManagedObject>(
        _ predicate: Predicate<Entity>, model: EntityModel, checkingReferencesWith context: ObjectContext
    ) throws(StrataError) -> FilterNode {
        let compiler = PredicateCompiler(model: model, variableID: predicate.variable.key)
        let node = compiler.node(predicate.expression)
        if compiler.references.tooDeep {
            throw .misuse(
                """
                the predicate nests more than \(deepestNesting) levels of expressions (such as a chain of that many \
                || or && terms), which Strata refuses rather than overflow the stack; test membership in an array \
                instead (values.contains(item.attribute)), or split the fetch
                """)
        }
        for (id, target) in compiler.references.entries {
            if id.storeIdentifier != context.storeIdentifier { throw .invalidURI(id.uriString, reason: .otherStore) }
            if id.entityName != target.name { throw .invalidURI(id.uriString, reason: .unknownEntity) }
            if id.isTemporary { throw .invalidURI(id.uriString, reason: .temporary) }
        }
        return node
    }

    /// Compiles a Boolean sub-expression, falling back to in-memory evaluation.
    func node<Expression: PredicateExpression>(_ expression: Expression) -> FilterNode where Expression.Output == Bool {
        guard depth < Self.deepestNesting else {
            references.tooDeep = true
            return .filter(.constant(false))
        }
        var inner = self
        inner.depth += 1
        if let compilable = expression as? any FilterNodeCompilable, let compiled = compilable.compile(with: inner) {
            return compiled
        }
        // Integer arithmetic is evaluated checked: Foundation's traps on an overflow or a zero divisor.
        if CheckedEvaluation.hasArithmetic(expression) {
            return .opaque { try CheckedEvaluation.evaluate(expression, $0) }
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
        case .attribute(let type, _, _):
            switch model.valueKind(ofColumn: column) {
            case .scalar: return .column(column, type)
            case .rawValue: return .equatableColumn(column, type)
            case .codable: return .nilCheckedColumn(column)
            }
        case .relationship:
            // The projected `$relationship` (an ObjectID?) compares as a key; the to-one itself
            // (an object) only with nil.
            return Swift.type(of: keyPath).valueType == Optional<ObjectID>.self
                ? .column(column, .reference) : .nilCheckedColumn(column)
        }
    }

    /// Converts a constant to its stored form, or nil when it cannot be compared in the engine.
    /// Codable values are never compared in the engine, so they have no stored form here (an
    /// array constant is then read as a collection of constants).
    static func storedConstant(_ value: Any) -> StoredValue? {
        if let id = value as? ObjectID { return .integer(id.primaryKey ?? 0) }
        if let optionalID = value as? ObjectID? { return optionalID.map { .integer($0.primaryKey ?? 0) } ?? .null }
        guard let attribute = value as? any AttributeValue, !(value is any CodableAttribute) else { return nil }
        let stored = attribute.storedValue
        if case .real(let number) = stored, number.isNaN { return nil }
        return stored
    }

    /// The stored forms of a sequence constant's elements (``storedConstant(_:)`` of each), or
    /// nil when one has none. When the element type is a value type that is an attribute value
    /// but not Codable (`[String]`, `Set<Int64>`…: the `ids.contains($0.externalID)` of a
    /// lookup by a batch of keys), its conformance is looked up once for the sequence instead of
    /// once per element, which for 500 keys was most of compiling the predicate.
    static func storedConstants<S: Sequence>(of sequence: S) -> [StoredValue]? {
        let elementType = S.Element.self
        if let attributeType = elementType as? any AttributeValue.Type, !(elementType is AnyClass),
            !(elementType is any CodableAttribute.Type), elementType != ObjectID.self, elementType != ObjectID?.self
        {
            return storedConstants(of: sequence, as: attributeType)
        }
        var values: [StoredValue] = []
        for element in sequence {
            guard let stored = storedConstant(element) else { return nil }
            values.append(stored)
        }
        return values
    }

    /// ``storedConstants(of:)`` of a sequence whose elements are all of attribute type `A`.
    private static func storedConstants<S: Sequence, A: AttributeValue>(
        of sequence: S, as type: A.Type
    )
        -> [StoredValue]?
    {
        var values: [StoredValue] = []
        values.reserveCapacity(sequence.underestimatedCount)
        for element in sequence {
            // The same type as the element's: a copy, not a conformance look-up.
            guard let attribute = element as? A else { return nil }
            let stored = attribute.storedValue
            if case .real(let number) = stored, number.isNaN { return nil }
            values.append(stored)
        }
        return values
    }

    /// The object IDs a constant holds: one ID, or a collection of optional IDs with at least
    /// one ID; nil for any other constant. (A nil of any optional type casts to `ObjectID?`, so
    /// nils alone are left to ``storedConstant(_:)``, which makes them null for any column.)
    static func objectIDs(_ value: Any) -> Operand? {
        if let id = value as? ObjectID { return .objectIDs([id], isSingle: true) }
        if let optionalID = value as? ObjectID? { return optionalID.map { .objectIDs([$0], isSingle: true) } }
        guard let sequence = value as? any Sequence else { return nil }
        var ids: [ObjectID?] = []
        for element in sequence {
            if let id = element as? ObjectID {
                ids.append(id)
            } else if let optionalID = element as? ObjectID? {
                ids.append(optionalID)
            } else {
                return nil
            }
        }
        return ids.contains(where: { $0 != nil }) ? .objectIDs(ids, isSingle: false) : nil
    }

    /// The stored keys of object IDs compared with the to-one relationship stored in `column`,
    /// each ID logged with the relationship's target for the caller to check; nil when the
    /// column is not a relationship's.
    func referenceKeys(_ ids: [ObjectID?], column: Int) -> [StoredValue]? {
        guard let property = model.properties.firstIndex(where: { $0.column == column && $0.isRelationship }),
            let target = model.relations[property]?.target
        else { return nil }
        return ids.map { id in
            guard let id else { return .null }
            references.entries.append((id, target))
            return .integer(id.primaryKey ?? 0)
        }
    }

    /// `column op constant`, with the two-valued null rules of ``Filter``.
    func comparison(_ lhs: Operand?, _ op: ComparisonOperator, _ rhs: Operand?) -> FilterNode? {
        switch (lhs, rhs) {
        case (.column(let column, .reference)?, .objectIDs(let ids, true)?):
            return referenceKeys(ids, column: column).flatMap { leaf(column, .reference, op, $0[0]) }
        case (.objectIDs(let ids, true)?, .column(let column, .reference)?):
            return referenceKeys(ids, column: column).flatMap { leaf(column, .reference, op.mirrored, $0[0]) }
        case (.column(let column, let type)?, .constant(let value)?):
            return leaf(column, type, op, value)
        case (.constant(let value)?, .column(let column, let type)?):
            return leaf(column, type, op.mirrored, value)
        case (.equatableColumn(let column, let type)?, .constant(let value)?) where op == .equal || op == .notEqual:
            return leaf(column, type, op, value)
        case (.constant(let value)?, .equatableColumn(let column, let type)?) where op == .equal || op == .notEqual:
            return leaf(column, type, op, value)
        case (.nilCheckedColumn(let column)?, .constant(.null)?), (.constant(.null)?, .nilCheckedColumn(let column)?):
            switch op {
            case .equal: return .filter(.isNull(column: column))
            case .notEqual: return .filter(.isNotNull(column: column))
            default: return nil
            }
        default:
            return nil
        }
    }

    private func leaf(_ column: Int, _ type: ColumnType, _ op: ComparisonOperator, _ value: StoredValue) -> FilterNode?
    {
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
