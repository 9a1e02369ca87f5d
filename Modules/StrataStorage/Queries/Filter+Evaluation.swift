import Foundation

extension Filter {
    /// Evaluates the filter against one row: the reference semantics every engine must match.
    ///
    /// Engines that scan (rather than translate the filter to a query language) call this.
    /// - Parameters:
    ///   - values: the row's column values, in ``EntitySchema/columns`` order.
    ///   - key: the row's primary key, for ``primaryKey(_:_:)`` leaves.
    public func matches(_ values: some RandomAccessCollection<StoredValue>, key: Int64) -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .compare(let column, let op, let expected):
            let actual = value(values, column)
            if actual.isNull { return op == .notEqual }
            // Stores never hold NaN but unsaved objects can; as in Swift, it is unordered.
            if case .real(let number) = actual, number.isNaN { return op == .notEqual }
            return op.holds(for: StoredValue.order(actual, expected))
        case .isNull(let column):
            return value(values, column).isNull
        case .isNotNull(let column):
            return !value(values, column).isNull
        case .contains(let column, let substring):
            guard case .text(let text) = value(values, column) else { return false }
            return Self.bytes(of: text, contain: substring)
        case .hasPrefix(let column, let prefix):
            guard case .text(let text) = value(values, column) else { return false }
            return text.utf8.starts(with: prefix.utf8)
        case .isIn(let column, let candidates):
            let actual = value(values, column)
            if actual.isNull { return false }
            return candidates.contains { StoredValue.order(actual, $0) == .orderedSame }
        case .primaryKey(let op, let expected):
            return op.holds(
                for: key < expected ? .orderedAscending : (key == expected ? .orderedSame : .orderedDescending))
        case .and(let parts):
            return parts.allSatisfy { $0.matches(values, key: key) }
        case .or(let parts):
            return parts.contains { $0.matches(values, key: key) }
        case .not(let inner):
            return !inner.matches(values, key: key)
        }
    }

    private func value(_ values: some RandomAccessCollection<StoredValue>, _ column: Int) -> StoredValue {
        values[values.index(values.startIndex, offsetBy: column)]
    }

    /// Binary substring search over UTF-8 bytes.
    static func bytes(of text: String, contain needle: String) -> Bool {
        let hay = Array(text.utf8)
        let pin = Array(needle.utf8)
        if pin.isEmpty { return true }
        if pin.count > hay.count { return false }
        var start = 0
        while start + pin.count <= hay.count {
            if hay[start] == pin[0] && hay[start..<(start + pin.count)].elementsEqual(pin) { return true }
            start += 1
        }
        return false
    }

    /// Every column number the filter reads.
    public var columns: Set<Int> {
        switch self {
        case .constant, .primaryKey: []
        case .compare(let c, _, _), .isNull(let c), .isNotNull(let c), .contains(let c, _), .hasPrefix(let c, _),
            .isIn(let c, _):
            [c]
        case .and(let parts), .or(let parts): parts.reduce(into: Set<Int>()) { $0.formUnion($1.columns) }
        case .not(let inner): inner.columns
        }
    }
}

extension FetchPlan {
    /// Orders rows by the plan's sort keys, then by primary key ascending: the reference order
    /// every engine must produce.
    public func rowPrecedes(_ lhs: StoredRow, _ rhs: StoredRow) -> Bool {
        for key in sort {
            let order = StoredValue.order(lhs.values[key.column], rhs.values[key.column])
            if order == .orderedSame { continue }
            return key.ascending ? order == .orderedAscending : order == .orderedDescending
        }
        return lhs.key < rhs.key
    }

    /// Applies the whole plan to rows in memory: filter, sort, offset and limit.
    /// Engines without a native query path can call this; it defines the expected result.
    public func apply(to rows: [StoredRow]) -> [StoredRow] {
        var result = rows
        if let filter { result = result.filter { filter.matches($0.values, key: $0.key) } }
        if sort.isEmpty { result.sort { $0.key < $1.key } } else { sortRows(&result) }
        return Array(window(of: result))
    }

    /// The offset/limit window over already ordered rows.
    ///
    /// Any offset and limit are safe, `Int.max` included (see ``windowRange(count:offset:limit:)``).
    public func window<C: RandomAccessCollection>(of rows: C) -> C.SubSequence where C.Index == Int {
        let range = Self.windowRange(count: rows.count, offset: offset, limit: limit)
        return rows[(rows.startIndex + range.lowerBound)..<(rows.startIndex + range.upperBound)]
    }

    /// The positions an offset and a limit select among `count` ordered rows, computed without
    /// overflow: an offset at or past the end selects nothing, a limit past the end selects the
    /// rest, and negative values count as 0 (the core refuses them before they reach a plan).
    ///
    /// ```swift
    /// FetchPlan.windowRange(count: 10, offset: 8, limit: .max)    // 8..<10
    /// FetchPlan.windowRange(count: 10, offset: .max, limit: .max) // 10..<10
    /// ```
    public static func windowRange(count: Int, offset: Int, limit: Int?) -> Range<Int> {
        let count = max(count, 0)
        let start = min(max(offset, 0), count)
        let remaining = count - start
        let taken = limit.map { min(max($0, 0), remaining) } ?? remaining
        return start..<(start + taken)
    }
}
