import Foundation
import StrataStorage

/// A ``Filter`` translated to a two-valued PostgreSQL expression with bound parameters
/// (design notes §6.3): every leaf is TRUE or FALSE, never NULL, so `NOT` keeps the reference
/// semantics of ``StrataStorage/Filter/matches(_:key:)``. Values never appear in the SQL text.
///
/// ```swift
/// let translated = try PostgresFilterSQL(.compare(column: 0, .equal, .text("Ann")), entity: entity, firstParameter: 1)
/// // translated.sql == "(\"name\" = $1 AND \"name\" IS NOT NULL)"
/// ```
struct PostgresFilterSQL {
    private(set) var sql = ""
    private(set) var parameters: [PGParameter] = []
    /// False when the SQL may select more rows than the filter (a `contains` whose needle starts
    /// with U+0000…U+0002, see ``PostgresTextEscape``): the reader then re-checks each row.
    private(set) var isExact = true
    private let entity: EntitySchema
    private let firstParameter: Int

    /// Translates `filter`; its parameters are numbered from `firstParameter`.
    /// - Throws: `.misuse` when the filter names a column the entity lacks or compares with null.
    init(_ filter: Filter, entity: EntitySchema, firstParameter: Int = 1) throws(StrataError) {
        self.entity = entity
        self.firstParameter = firstParameter
        try append(filter)
    }

    /// Binds `parameter` and returns its placeholder.
    private mutating func bind(_ parameter: PGParameter) -> String {
        parameters.append(parameter)
        return "$\(firstParameter + parameters.count - 1)"
    }

    private mutating func append(_ filter: Filter) throws(StrataError) {
        switch filter {
        case .constant(let value):
            sql += value ? "TRUE" : "FALSE"
        case .compare(let column, let op, let value):
            try compare(column, op, value)
        case .isNull(let column):
            sql += "(\(try name(column)) IS NULL)"
        case .isNotNull(let column):
            sql += "(\(try name(column)) IS NOT NULL)"
        case .contains(let column, let substring):
            let name = try name(column)
            guard entity.columns[column].type.storageClass == .text else {
                sql += "FALSE"
                return
            }
            guard !substring.isEmpty else {
                sql += "(\(name) IS NOT NULL)"
                return
            }
            if !PostgresTextEscape.containsIsExact(substring) { isExact = false }
            sql += "(\(name) IS NOT NULL AND strpos(\(name), \(bind(.text(substring)))) > 0)"
        case .hasPrefix(let column, let prefix):
            let name = try name(column)
            guard entity.columns[column].type.storageClass == .text else {
                sql += "FALSE"
                return
            }
            guard !prefix.isEmpty else {
                sql += "(\(name) IS NOT NULL)"
                return
            }
            sql += "(\(name) IS NOT NULL AND starts_with(\(name), \(bind(.text(prefix)))))"
        case .isIn(let column, let values):
            try membership(column, values)
        case .primaryKey(let op, let key):
            sql += "(\"id\" \(Self.sqlOperator(op)) \(bind(.int8(key))))"
        case .and(let parts):
            try join(parts[...], with: " AND ", empty: "TRUE")
        case .or(let parts):
            try join(parts[...], with: " OR ", empty: "FALSE")
        case .not(let inner):
            sql += "(NOT "
            try append(inner)
            sql += ")"
        }
    }

    /// Joins the parts, nesting halves past 16 parts so the parse tree stays shallow.
    private mutating func join(_ parts: ArraySlice<Filter>, with separator: String, empty: String) throws(StrataError) {
        guard !parts.isEmpty else {
            sql += empty
            return
        }
        sql += "("
        if parts.count > 16 {
            let middle = parts.startIndex + parts.count / 2
            try join(parts[..<middle], with: separator, empty: empty)
            sql += separator
            try join(parts[middle...], with: separator, empty: empty)
        } else {
            for position in parts.indices {
                if position > parts.startIndex { sql += separator }
                try append(parts[position])
            }
        }
        sql += ")"
    }

    private mutating func membership(_ column: Int, _ values: [StoredValue]) throws(StrataError) {
        let name = try name(column)
        var integers: [Int64] = []
        var reals: [Double] = []
        var texts: [String] = []
        var blobs: [Data] = []
        let storageClass = entity.columns[column].type.storageClass
        for value in values {
            switch (storageClass, value) {
            case (.integer, .integer(let v)): integers.append(v)
            case (.integer, .real(let v)) where !v.isNaN: reals.append(v)
            case (.real, .real(let v)) where !v.isNaN: reals.append(v)
            case (.real, .integer(let v)): reals.append(Double(v))
            case (.text, .text(let v)): texts.append(v)
            case (.blob, .blob(let v)): blobs.append(v)
            default: break
            }
        }
        var alternatives: [String] = []
        if !integers.isEmpty { alternatives.append("\(name) = ANY(\(bind(.int8Array(integers))))") }
        if !reals.isEmpty {
            let cast = storageClass == .integer ? "\(name)::float8" : name
            alternatives.append("\(cast) = ANY(\(bind(.float8Array(reals))))")
        }
        if !texts.isEmpty { alternatives.append("\(name) = ANY(\(bind(.textArray(texts))))") }
        if !blobs.isEmpty { alternatives.append("\(name) = ANY(\(bind(.byteaArray(blobs))))") }
        guard !alternatives.isEmpty else {
            sql += "FALSE"
            return
        }
        sql += "(\(name) IS NOT NULL AND (\(alternatives.joined(separator: " OR "))))"
    }

    private mutating func compare(_ column: Int, _ op: ComparisonOperator, _ value: StoredValue) throws(StrataError) {
        let name = try name(column)
        let storageClass = entity.columns[column].type.storageClass
        if value.isNull {
            throw .misuse(
                "filter compares \(entity.name).\(entity.columns[column].name) with null; use isNull / isNotNull")
        }
        if case .real(let v) = value, v.isNaN {
            sql += op == .notEqual ? "TRUE" : "FALSE"
            return
        }
        let operand: String
        var left = name
        switch (storageClass, value) {
        case (.integer, .integer(let v)): operand = bind(.int8(v))
        case (.integer, .real(let v)):
            left = "\(name)::float8"
            operand = bind(.float8(v))
        case (.real, .real(let v)): operand = bind(.float8(v))
        case (.real, .integer(let v)): operand = bind(.float8(Double(v)))
        case (.text, .text(let v)): operand = bind(.text(v))
        case (.blob, .blob(let v)): operand = bind(.bytea(v))
        default:
            // Different storage classes order by class alone: the leaf depends only on null-ness.
            let sample: StoredValue =
                switch storageClass {
                case .integer: .integer(0)
                case .real: .real(0)
                case .text: .text("")
                case .blob: .blob(Data())
                }
            let whenPresent = op.holds(for: StoredValue.order(sample, value))
            let whenNull = op == .notEqual
            switch (whenPresent, whenNull) {
            case (true, true): sql += "TRUE"
            case (false, false): sql += "FALSE"
            case (true, false): sql += "(\(name) IS NOT NULL)"
            case (false, true): sql += "(\(name) IS NULL)"
            }
            return
        }
        switch op {
        case .equal: sql += "(\(left) = \(operand) AND \(name) IS NOT NULL)"
        case .notEqual: sql += "(\(name) IS NULL OR \(left) <> \(operand))"
        default: sql += "(\(name) IS NOT NULL AND \(left) \(Self.sqlOperator(op)) \(operand))"
        }
    }

    private func name(_ column: Int) throws(StrataError) -> String {
        guard entity.columns.indices.contains(column) else {
            throw .misuse("filter names column \(column), but \(entity.name) has \(entity.columns.count) columns")
        }
        return pgQuoted(entity.columns[column].name)
    }

    static func sqlOperator(_ op: ComparisonOperator) -> String {
        switch op {
        case .equal: "="
        case .notEqual: "<>"
        case .lessThan: "<"
        case .lessThanOrEqual: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqual: ">="
        }
    }
}
