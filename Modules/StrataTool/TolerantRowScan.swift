import StrataStorage

/// Reads every row of one entity in key order, going on past the rows that do not decode: each
/// such row is reported once, by key, and the scan resumes after it, so that one damaged row does
/// not hide the rows behind it.
///
/// When a scan fails, the rows up to the last one read were fine, so the failing row is the first
/// one after it: a binary search over the keys finds the smallest bound up to which a one-row read
/// fails. A read of one row decodes at most that row, on every engine.
struct TolerantRowScan {
    let reader: any StoreReader
    let entity: Int

    /// What the scan could not read.
    enum Failure {
        /// The row with this key exists but does not decode; the error says why.
        case row(key: Int64, error: any Error)
        /// The entity does not read, and no single row is to blame; the scan stopped.
        case entity(any Error)
    }

    /// Calls `body` with every row that decodes and `failed` once for each failure, in key order.
    func run(_ body: (StoredRow) -> Void, failed: (Failure) -> Void) {
        var after: Int64?
        while true {
            var last = after
            do {
                try reader.forEachRow(
                    for: FetchPlan(entity: entity, filter: after.map { .primaryKey(.greaterThan, $0) })
                ) { row in
                    last = row.key
                    body(row)
                }
                return
            } catch {
                guard let bad = failingKey(after: last) else {
                    failed(.entity(error))
                    return
                }
                failed(.row(key: bad.key, error: bad.error))
                if bad.key == .max { return }
                after = bad.key
            }
        }
    }

    /// The key of the first row after `after` when that row exists and does not decode, with its
    /// error; nil when the failure is not one row's.
    private func failingKey(after: Int64?) -> (key: Int64, error: any Error)? {
        if after == .max { return nil }
        var low = after.map { $0 + 1 } ?? .min
        var high = Int64.max
        guard fails(after: after, upTo: high) else { return nil }
        // The smallest bound up to which the read fails: `high` always fails.
        while low < high {
            let middle = low + Int64(bitPattern: (UInt64(bitPattern: high) &- UInt64(bitPattern: low)) / 2)
            if fails(after: after, upTo: middle) { high = middle } else { low = middle + 1 }
        }
        // A read that fails whatever it selects (a damaged table, an I/O error) is the entity's
        // failure, not this row's: blaming one key after another would walk the whole key space.
        guard !fails(after: high, upTo: high) else { return nil }
        do {
            // The row must exist and fail on its own; otherwise the entity's read fails as a whole.
            _ = try reader.row(entity: entity, key: high)
            return nil
        } catch {
            return (high, error)
        }
    }

    /// Whether reading the first row after `after` up to key `bound` fails.
    private func fails(after: Int64?, upTo bound: Int64) -> Bool {
        var filters: [Filter] = [.primaryKey(.lessThanOrEqual, bound)]
        if let after { filters.append(.primaryKey(.greaterThan, after)) }
        do {
            _ = try reader.rows(for: FetchPlan(entity: entity, filter: .and(filters), limit: 1))
            return false
        } catch {
            return true
        }
    }
}
