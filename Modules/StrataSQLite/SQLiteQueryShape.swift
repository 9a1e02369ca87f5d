import StrataStorage

/// A read whose SQL text depends only on its *shape* (entity, column, operator), not on its
/// values: every row of an entity, one comparison, a null test, or an integer membership.
///
/// These are the reads that faults, batch faults and prefetching repeat with other values. The
/// connection keeps one prepared statement per shape (``SQLiteConnection/statement(shape:_:)``),
/// found by the number ``key``, so a repeat only binds its value: no SQL text is built and none is
/// hashed. Plans with a sort, an offset, a limit or any other filter take the general path
/// (``SQLiteQuery/select(_:table:variableLimit:)``).
///
/// The SQL is the general path's own for the same plan, except for an integer membership, which
/// binds its keys as one JSON array read by `json_each`: one statement for any number of keys,
/// no parameter limit, and no temporary table to fill.
struct SQLiteQueryShape {
    /// The shape's number in the connection's shape cache: entity, column and kind packed.
    let key: Int
    private let kind: Kind
    private let parameter: Parameter

    private enum Kind: Int {
        case all = 0
        case isNull, isNotNull, integerMembership
        // Comparisons: `compare + ComparisonOperator` position in `allCases`.
        case compare
    }

    private enum Parameter {
        case none
        case value(StoredValue)
        case integers([StoredValue])
    }

    /// The shape of `plan`, or nil when it has none (a sort, a window, another filter, a column the
    /// entity lacks, a value whose class SQLite would not compare as the reference does).
    init?(_ plan: FetchPlan, table: SQLiteTableLayout) {
        guard plan.sort.isEmpty, plan.limit == nil, plan.offset <= 0 else { return nil }
        let columns = table.entity.columns
        var column = 0
        var compareOffset = 0
        switch plan.filter {
        case nil:
            kind = .all
            parameter = .none
        case .isNull(let c)?:
            column = c
            kind = .isNull
            parameter = .none
        case .isNotNull(let c)?:
            column = c
            kind = .isNotNull
            parameter = .none
        case .compare(let c, let op, let value)?:
            guard columns.indices.contains(c), !value.isNull,
                SQLiteFilterSQL.comparable(columns[c].type.storageClass, value),
                let position = ComparisonOperator.allCases.firstIndex(of: op)
            else { return nil }
            column = c
            kind = .compare
            compareOffset = position
            parameter = .value(value)
        case .isIn(let c, let values)?:
            // Null, text and blob never equal an integer column's value (the general path leaves
            // them out too); a real might, so it takes the general path.
            guard columns.indices.contains(c), columns[c].type.storageClass == .integer,
                values.contains(where: { if case .integer = $0 { true } else { false } }),
                !values.contains(where: { if case .real = $0 { true } else { false } })
            else { return nil }
            column = c
            kind = .integerMembership
            parameter = .integers(values)
        default:
            return nil
        }
        guard columns.indices.contains(column) || kind == .all else { return nil }
        // 4 bits of kind (compare uses 4...9), 1 of order, 23 of column, the entity above.
        let order = plan.allowsAnyOrder ? 1 << 4 : 0
        key = (table.entity.number << 28) | (column << 5) | order | (kind.rawValue + compareOffset)
    }

    /// The statement's SQL: the general path's for `plan`, or the `json_each` membership.
    func sql(for plan: FetchPlan, table: SQLiteTableLayout, variableLimit: Int) throws(StrataError) -> String {
        guard case .isIn(let column, _)? = plan.filter, kind == .integerMembership else {
            return try SQLiteQuery.select(plan, table: table, variableLimit: variableLimit).sql
        }
        let name = quoted(table.entity.columns[column].name)
        return
            """
            SELECT \(table.selectList) FROM \(table.table) WHERE (\(name) IS NOT NULL AND \(name) IN \
            (SELECT "value" FROM json_each(?1)))
            """ + (plan.allowsAnyOrder ? "" : " ORDER BY \"id\" ASC")
    }

    /// Binds the shape's value, if any, to `?1`.
    func bind(to statement: SQLiteStatement) throws(StrataError) {
        switch parameter {
        case .none:
            return
        case .value(let value):
            try statement.bind(value, at: 1)
        case .integers(let values):
            try statement.bind(.text(Self.jsonArray(values)), at: 1)
        }
    }

    /// `[1,-2,3]`: the integers of `values` as a JSON array (other values are left out).
    static func jsonArray(_ values: [StoredValue]) -> String {
        jsonArray(integers: values.lazy.compactMap { if case .integer(let n) = $0 { n } else { nil } })
    }

    /// `[1,-2,3]`: `integers` as a JSON array, digits written by hand (no `String` per key).
    static func jsonArray(integers: some Sequence<Int64>) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(integers.underestimatedCount * 8 + 2)
        bytes.append(UInt8(ascii: "["))
        var digits: [UInt8] = Array(repeating: 0, count: 20)
        for n in integers {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            if n < 0 { bytes.append(UInt8(ascii: "-")) }
            // The magnitude as unsigned: Int64.min has no positive Int64.
            var magnitude = n.magnitude
            var count = 0
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            while count > 0 {
                count -= 1
                bytes.append(digits[count])
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
