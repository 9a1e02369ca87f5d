extension FetchPlan {
    /// Puts rows in the plan's order (``rowPrecedes(_:_:)``: its sort keys, then primary key
    /// ascending), for engines that sort in memory.
    ///
    /// The same order as `rows.sort(by: plan.rowPrecedes)`, reached faster for the common plan
    /// of one sort key whose values are all integers, or all reals and none NaN: the rows are
    /// sorted by those numbers held apart from the rows, not by comparing ``StoredValue``s.
    /// Any other plan is sorted with ``rowPrecedes(_:_:)``.
    ///
    /// ```swift
    /// var rows = candidates          // the rows that match plan.filter
    /// plan.sortRows(&rows)
    /// return Array(plan.window(of: rows))
    /// ```
    public func sortRows(_ rows: inout [StoredRow]) {
        guard rows.count > 1, !sort.isEmpty else { return }
        guard sort.count == 1, sortByNumbers(&rows, sort[0]) else {
            rows.sort(by: rowPrecedes)
            return
        }
    }

    /// Sorts by one key whose values are all of one numeric case; false (rows untouched) when
    /// they are not.
    private func sortByNumbers(_ rows: inout [StoredRow], _ key: SortKey) -> Bool {
        switch rows[0].values[key.column] {
        case .integer:
            return Self.sort(&rows, key) { value -> Int64? in
                guard case .integer(let number) = value else { return nil }
                return number
            }
        case .real:
            return Self.sort(&rows, key) { value -> Double? in
                guard case .real(let number) = value, !number.isNaN else { return nil }
                return number
            }
        default:
            return false
        }
    }

    /// Sorts `rows` by the number `number` reads from each one's `key` column, then by primary
    /// key ascending, as ``rowPrecedes(_:_:)`` orders them; false (rows untouched) as soon as a
    /// value has no number.
    private static func sort<Number: Comparable>(
        _ rows: inout [StoredRow], _ key: SortKey, number: (StoredValue) -> Number?
    ) -> Bool {
        var entries: [NumberSortEntry<Number>] = []
        entries.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            guard let number = number(row.values[key.column]) else { return false }
            entries.append(NumberSortEntry(number: number, key: row.key, index: index))
        }
        if key.ascending {
            entries.sort { $0.number != $1.number ? $0.number < $1.number : $0.key < $1.key }
        } else {
            entries.sort { $0.number != $1.number ? $0.number > $1.number : $0.key < $1.key }
        }
        rows = entries.map { rows[$0.index] }
        return true
    }
}

/// One row's sort number, primary key and place among the rows being sorted.
private struct NumberSortEntry<Number: Comparable> {
    var number: Number
    var key: Int64
    var index: Int
}
