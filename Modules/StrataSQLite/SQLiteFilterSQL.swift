import Foundation
import StrataStorage

/// A ``Filter`` translated to a two-valued SQL expression with bound parameters.
///
/// Values never appear in the SQL text: each becomes a `?` with its value in ``parameters``.
/// Every leaf evaluates to 0 or 1, never NULL, so `NOT` keeps the reference semantics of
/// ``Strata/Filter/matches(_:key:)``.
///
/// SQLite limits the number of parameters of one statement (`SQLITE_LIMIT_VARIABLE_NUMBER`:
/// 32,766 in a default build, 250,000 in Debian's). A membership test with more constants
/// than that is translated with `membershipsInTable`: each membership reads its constants from
/// the connection's temporary table (``SQLiteConnection/loadMembershipLists(_:)``) instead of
/// parameters, so it gives the same rows whatever the limit.
struct SQLiteFilterSQL {
    private(set) var sql = ""
    private(set) var parameters: [StoredValue] = []
    /// With `membershipsInTable`: the constants of each membership, numbered by position; the
    /// SQL reads list `n` from `temp.strata_members` where `list = n`.
    private(set) var membershipLists: [[StoredValue]] = []
    private let entity: EntitySchema
    private let membershipsInTable: Bool

    /// Translates `filter` for `entity`.
    /// - Parameter membershipsInTable: read the constants of `isIn` from the temporary table
    ///   (see ``membershipLists``) instead of binding each one.
    /// - Throws: `.misuse` when the filter names a column the entity lacks or compares with null.
    init(_ filter: Filter, entity: EntitySchema, membershipsInTable: Bool = false) throws(StrataError) {
        self.entity = entity
        self.membershipsInTable = membershipsInTable
        try append(filter)
    }

    /// The name of the temporary table that holds membership constants.
    static let membershipTable = "temp.strata_members"

    private mutating func append(_ filter: Filter) throws(StrataError) {
        switch filter {
        case .constant(let value):
            sql += value ? "1" : "0"
        case .compare(let column, let op, let value):
            try compare(column, op, value)
        case .isNull(let column):
            sql += "(\(try name(column)) IS NULL)"
        case .isNotNull(let column):
            sql += "(\(try name(column)) IS NOT NULL)"
        case .contains(let column, let substring):
            let name = try name(column)
            guard entity.columns[column].type.storageClass == .text else {
                sql += "0"
                return
            }
            // Byte-wise search: instr over BLOBs compares bytes, unlike LIKE.
            sql += "(\(name) IS NOT NULL AND coalesce(instr(CAST(\(name) AS BLOB), CAST(? AS BLOB)) > 0, 0))"
            parameters.append(.text(substring))
        case .hasPrefix(let column, let prefix):
            let name = try name(column)
            guard entity.columns[column].type.storageClass == .text else {
                sql += "0"
                return
            }
            // The empty prefix matches every non-null text (and substr of an empty BLOB is NULL).
            guard !prefix.isEmpty else {
                sql += "(\(name) IS NOT NULL)"
                return
            }
            // substr over a BLOB counts bytes; comparing BLOBs is memcmp. coalesce keeps the
            // leaf two-valued when the text is empty (substr then yields NULL).
            sql += "(\(name) IS NOT NULL AND coalesce(substr(CAST(\(name) AS BLOB), 1, ?) = CAST(? AS BLOB), 0))"
            parameters.append(.integer(Int64(prefix.utf8.count)))
            parameters.append(.text(prefix))
        case .isIn(let column, let values):
            let name = try name(column)
            let storageClass = entity.columns[column].type.storageClass
            let candidates = values.filter { Self.comparable(storageClass, $0) }
            guard !candidates.isEmpty else {
                sql += "0"
                return
            }
            if membershipsInTable {
                // The list number is part of the statement's shape, not a value: it stays in the SQL.
                sql +=
                    """
                    (\(name) IS NOT NULL AND \(name) IN (SELECT \"value\" FROM \(Self.membershipTable) WHERE \
                    \"list\" = \(membershipLists.count)))
                    """
                membershipLists.append(candidates)
                return
            }
            sql +=
                "(\(name) IS NOT NULL AND \(name) IN ("
                + Array(repeating: "?", count: candidates.count).joined(separator: ", ") + "))"
            parameters.append(contentsOf: candidates)
        case .primaryKey(let op, let key):
            sql += "(\"id\" \(Self.sqlOperator(op)) ?)"
            parameters.append(.integer(key))
        case .and(let parts):
            try join(parts, with: " AND ", empty: "1")
        case .or(let parts):
            try join(parts, with: " OR ", empty: "0")
        case .not(let inner):
            sql += "(NOT "
            try append(inner)
            sql += ")"
        }
    }

    /// Joins the parts with AND or OR. Past 16 parts the halves are nested in parentheses, so the
    /// expression tree stays about log2(n) deep: SQLite refuses trees deeper than 1,000
    /// (`SQLITE_MAX_EXPR_DEPTH`), which a flat chain of 1,000 ORs would be.
    private mutating func join(_ parts: [Filter], with separator: String, empty: String) throws(StrataError) {
        guard !parts.isEmpty else {
            sql += empty
            return
        }
        try join(parts[...], with: separator)
    }

    private mutating func join(_ parts: ArraySlice<Filter>, with separator: String) throws(StrataError) {
        sql += "("
        if parts.count > 16 {
            let middle = parts.startIndex + parts.count / 2
            try join(parts[..<middle], with: separator)
            sql += separator
            try join(parts[middle...], with: separator)
        } else {
            for position in parts.indices {
                if position > parts.startIndex { sql += separator }
                try append(parts[position])
            }
        }
        sql += ")"
    }

    private mutating func compare(_ column: Int, _ op: ComparisonOperator, _ value: StoredValue) throws(StrataError) {
        let name = try name(column)
        let storageClass = entity.columns[column].type.storageClass
        if value.isNull {
            throw .misuse(
                "filter compares \(entity.name).\(entity.columns[column].name) with null; use isNull / isNotNull")
        }
        guard Self.comparable(storageClass, value) else {
            // Different storage classes order by class alone, so the leaf depends only on
            // whether the column is null.
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
            case (true, true): sql += "1"
            case (false, false): sql += "0"
            case (true, false): sql += "(\(name) IS NOT NULL)"
            case (false, true): sql += "(\(name) IS NULL)"
            }
            return
        }
        switch op {
        case .equal: sql += "(\(name) IS ?)"
        case .notEqual: sql += "(\(name) IS NOT ?)"
        default: sql += "(\(name) IS NOT NULL AND \(name) \(Self.sqlOperator(op)) ?)"
        }
        parameters.append(value)
    }

    /// Whether SQLite compares a column of `storageClass` with `value` the way the reference does.
    static func comparable(_ storageClass: StorageClass, _ value: StoredValue) -> Bool {
        switch (storageClass, value) {
        case (.integer, .integer), (.integer, .real), (.real, .real), (.real, .integer), (.text, .text), (.blob, .blob):
            true
        default: false
        }
    }

    private func name(_ column: Int) throws(StrataError) -> String {
        guard entity.columns.indices.contains(column) else {
            throw .misuse("filter names column \(column), but \(entity.name) has \(entity.columns.count) columns")
        }
        return quoted(entity.columns[column].name)
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
