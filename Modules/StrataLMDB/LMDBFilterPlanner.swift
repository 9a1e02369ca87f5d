import StrataStorage

/// Chooses how to find the candidate rows of a filter: an index range scan when a leaf (or a
/// conjunct) on an indexed column allows it, otherwise a scan of the entity database, bounded
/// by any primary-key conditions.
///
/// Candidates are a superset of the matches: the reader still evaluates the whole filter on
/// every candidate row (with a `FilterEvaluator`, which answers as `Filter.matches(_:key:)`),
/// so the plan only affects speed.
struct LMDBFilterPlanner {
    /// Keys `start ..< end` (end nil: to the end) in one index database.
    struct KeyRange {
        var start: [UInt8]
        var end: [UInt8]?
    }

    struct IndexScan {
        var index: LMDBCatalog.Index
        var ranges: [KeyRange]
        /// Lower is better: 0 unique equality, 1 equality, 2 several equalities, 3 a range
        /// bounded by the filter on both sides, 4 a range bounded on one side.
        var rank: Int
        /// Whether every entry the ranges hold matches the leaf the scan was planned for: an
        /// equality or a membership of integers on a single-column index, whose fixed-width keys
        /// make a prefix match an equal value. Set only by ``indexScan(_:)``.
        var isExact = false

        /// Whether the entries come in primary-key order as they are: one range of one value of
        /// a single-column index (its keys are the value, then the primary key).
        var isInKeyOrder: Bool { rank <= 1 && ranges.count == 1 && index.columns.count == 1 }
    }

    enum Plan {
        /// No row can match.
        case nothing
        /// Scan primary keys `lower ... upper`.
        case scan(lower: Int64, upper: Int64)
        /// The union of the keys these index scans find.
        case indexes([IndexScan])

        /// Whether every candidate matches the filter the plan was made for, so the reader need not
        /// evaluate it again: one exact index scan (see ``IndexScan/isExact``) of the whole filter.
        var isExact: Bool {
            switch self {
            case .nothing: true
            case .scan: false
            case .indexes(let scans): scans.count == 1 && scans[0].isExact
            }
        }
    }

    let entity: LMDBCatalog.Entity

    /// The plan of `filter`.
    ///
    /// A conjunction that several index scans could serve takes one of them: the one `fewest`
    /// names among the candidates (given best rank first), or the best-ranked when it names none
    /// or the best is a unique equality. A reader passes a race of the candidates' ranges in its
    /// transaction (``LMDBTransaction/fewestEntries(_:limit:)``), so `account == x && date > d`
    /// reads the few rows dated after `d` rather than every row of the account.
    func plan<Failure: Error>(
        _ filter: Filter?, fewest: ([IndexScan]) throws(Failure) -> Int?
    ) throws(Failure) -> Plan {
        guard let filter else { return .scan(lower: 1, upper: .max) }
        switch filter {
        case .constant(false):
            return .nothing
        case .and(let parts):
            let candidates = Self.intersectingRanges(parts.compactMap(indexScan)).enumerated()
                .sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }.map(\.element)
            if let best = candidates.first {
                if candidates.count > 1, best.rank > 0, let pick = try fewest(candidates),
                    candidates.indices.contains(pick)
                {
                    return .indexes([candidates[pick]])
                }
                return .indexes([best])
            }
            var lower: Int64 = 1
            var upper: Int64 = .max
            for case .primaryKey(let op, let key) in parts {
                let bounds = Self.bounds(op, key)
                lower = max(lower, bounds.lower)
                upper = min(upper, bounds.upper)
            }
            return lower > upper ? .nothing : .scan(lower: lower, upper: upper)
        case .or(let parts):
            var scans: [IndexScan] = []
            for part in parts {
                switch try plan(part, fewest: fewest) {
                case .nothing: continue
                case .indexes(let found): scans += found
                case .scan: return .scan(lower: 1, upper: .max)
                }
            }
            return scans.isEmpty ? .nothing : .indexes(scans)
        case .primaryKey(let op, let key):
            let bounds = Self.bounds(op, key)
            return bounds.lower > bounds.upper ? .nothing : .scan(lower: bounds.lower, upper: bounds.upper)
        default:
            guard var scan = indexScan(filter) else { return .scan(lower: 1, upper: .max) }
            // Only a leaf that is the whole filter may skip the reader's check.
            scan.isExact = isExactLeaf(filter, index: scan.index)
            return .indexes([scan])
        }
    }

    /// Whether an index scan of `leaf` on `index` finds exactly its matches: an equality with an
    /// integer, or a membership of integers (other values, but reals, can never match an integer
    /// column), on a single-column index of an integer column.
    func isExactLeaf(_ leaf: Filter, index: LMDBCatalog.Index) -> Bool {
        guard index.columns.count == 1, entity.layout.classes.indices.contains(index.columns[0]),
            entity.layout.classes[index.columns[0]] == .integer
        else { return false }
        switch leaf {
        case .compare(_, .equal, .integer): return true
        case .isIn(_, let values): return values.allSatisfy { if case .real = $0 { false } else { true } }
        default: return false
        }
    }

    /// The distinct integers of a membership in ascending order, leaving out values that can
    /// never equal an integer column's (null, text, blob); nil when a real is among them.
    static func integerMembers(_ values: [StoredValue]) -> [Int64]? {
        var integers: [Int64] = []
        integers.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .integer(let n): integers.append(n)
            case .real: return nil
            case .null, .text, .blob: continue
            }
        }
        return sortedDistinct(integers)
    }

    /// `keys` ascending, each once.
    static func sortedDistinct(_ keys: [Int64]) -> [Int64] {
        var keys = keys
        if zip(keys, keys.dropFirst()).contains(where: { $0 >= $1 }) { keys.sort() } else { return keys }
        var kept = 0
        for position in keys.indices where kept == 0 || keys[position] != keys[kept - 1] {
            keys[kept] = keys[position]
            kept += 1
        }
        keys.removeLast(keys.count - kept)
        return keys
    }

    /// Conjuncts that each scan one range of the same index (`a >= x && a < y`) become one scan
    /// of the ranges' intersection: a row matching both lies in both ranges.
    static func intersectingRanges(_ scans: [IndexScan]) -> [IndexScan] {
        var result: [IndexScan] = []
        for scan in scans {
            guard scan.rank >= 3, scan.ranges.count == 1,
                let earlier = result.firstIndex(where: {
                    $0.rank >= 3 && $0.ranges.count == 1 && $0.index.dbi == scan.index.dbi
                })
            else {
                result.append(scan)
                continue
            }
            let a = result[earlier].ranges[0]
            let b = scan.ranges[0]
            let start = a.start.lexicographicallyPrecedes(b.start) ? b.start : a.start
            let end: [UInt8]? =
                switch (a.end, b.end) {
                case (nil, let other), (let other, nil): other
                case (let x?, let y?): x.lexicographicallyPrecedes(y) ? x : y
                }
            result[earlier] = IndexScan(index: scan.index, ranges: [KeyRange(start: start, end: end)], rank: 3)
        }
        return result
    }

    /// The primary-key interval a comparison allows (keys are positive).
    static func bounds(_ op: ComparisonOperator, _ key: Int64) -> (lower: Int64, upper: Int64) {
        switch op {
        case .equal: (key, key)
        case .notEqual: (1, .max)
        case .lessThan: (1, key == .min ? .min : key - 1)
        case .lessThanOrEqual: (1, key)
        case .greaterThan: (key == .max ? .max : key + 1, key == .max ? 0 : .max)
        case .greaterThanOrEqual: (max(key, 1), .max)
        }
    }

    /// The index whose first column is `column`, preferring unique and single-column ones.
    private func index(on column: Int) -> LMDBCatalog.Index? {
        // A loop, not filter + min: the planner runs once per fault, and this allocates nothing.
        var best: LMDBCatalog.Index?
        for index in entity.indexes where index.columns.first == column {
            guard let current = best else {
                best = index
                continue
            }
            if (index.isUnique ? 0 : 1, index.columns.count) < (current.isUnique ? 0 : 1, current.columns.count) {
                best = index
            }
        }
        return best
    }

    /// Bytewise order of two index keys, shorter first on a common prefix.
    static func bytesPrecede(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let common = min(a.count, b.count)
        var index = 0
        while index < common {
            if a[index] != b[index] { return a[index] < b[index] }
            index += 1
        }
        return a.count < b.count
    }

    private func encoded(_ value: StoredValue) -> [UInt8] {
        var out: [UInt8] = []
        IndexKeyCodec.append(value, to: &out)
        return out
    }

    private func equalRange(_ value: StoredValue) -> KeyRange {
        let key = encoded(value)
        return KeyRange(start: key, end: IndexKeyCodec.successor(ofPrefix: key))
    }

    /// An index scan that finds every row the leaf can match, if an index fits.
    private func indexScan(_ leaf: Filter) -> IndexScan? {
        switch leaf {
        case .compare(let column, let op, let value):
            guard op != .notEqual, let index = index(on: column), entity.layout.classes.indices.contains(column) else {
                return nil
            }
            let storageClass = entity.layout.classes[column]
            guard !value.isNull, storageClass.admits(value) else { return nil }
            let tag = IndexKeyCodec.tag(of: storageClass)
            let key = encoded(value)
            let after = IndexKeyCodec.successor(ofPrefix: key) ?? [tag + 1]
            let range: KeyRange =
                switch op {
                case .equal: KeyRange(start: key, end: after)
                case .greaterThan: KeyRange(start: after, end: [tag + 1])
                case .greaterThanOrEqual: KeyRange(start: key, end: [tag + 1])
                case .lessThan: KeyRange(start: [tag], end: key)
                case .lessThanOrEqual, .notEqual: KeyRange(start: [tag], end: after)
                }
            let rank = op == .equal ? (index.isUnique && index.columns.count == 1 ? 0 : 1) : 4
            return IndexScan(index: index, ranges: [range], rank: rank)
        case .isIn(let column, let values):
            guard let index = index(on: column), entity.layout.classes.indices.contains(column) else { return nil }
            let storageClass = entity.layout.classes[column]
            if storageClass == .integer, let integers = Self.integerMembers(values) {
                // Integers sort as their keys do: no byte arrays to hash or compare.
                let ranges = integers.map { equalRange(.integer($0)) }
                return IndexScan(index: index, ranges: ranges, rank: 2)
            }
            guard values.allSatisfy({ !$0.isNull && storageClass.admits($0) }) else { return nil }
            let distinct = Set(values.map(encoded))
            // Sorted so the scans walk the index forward; the byte loop keeps a sort of
            // 40,000 keys cheap even in a debug build (the generic comparison is not).
            let ranges = distinct.sorted(by: Self.bytesPrecede).map {
                KeyRange(start: $0, end: IndexKeyCodec.successor(ofPrefix: $0))
            }
            return IndexScan(index: index, ranges: ranges, rank: 2)
        case .isNull(let column):
            guard let index = index(on: column) else { return nil }
            return IndexScan(
                index: index, ranges: [KeyRange(start: [IndexKeyCodec.tagNull], end: [IndexKeyCodec.tagNull + 1])],
                rank: 3)
        case .hasPrefix(let column, let prefix):
            guard let index = index(on: column), entity.layout.classes.indices.contains(column),
                entity.layout.classes[column] == .text
            else { return nil }
            let start = IndexKeyCodec.textPrefix(prefix)
            return IndexScan(
                index: index, ranges: [KeyRange(start: start, end: IndexKeyCodec.successor(ofPrefix: start))], rank: 3)
        default:
            return nil
        }
    }
}

extension LMDBFilterPlanner {
    /// The most entries a race reads of each candidate scan before it gives up and the
    /// best-ranked candidate is taken: every candidate then holds at least this many, and a race
    /// costs at most this many cursor steps per candidate.
    static let raceLimit = 512

    /// The plan of `filter` for a read in `txn`: the candidate scans of a conjunction are raced
    /// in `txn` (``LMDBTransaction/fewestEntries(_:limit:)``) and the smallest is taken.
    /// - Throws: the LMDB error of a cursor the race opens or steps.
    func plan(_ filter: Filter?, in txn: LMDBTransaction) throws(LMDBError) -> Plan {
        try plan(filter) { (candidates: [IndexScan]) throws(LMDBError) -> Int? in
            try txn.fewestEntries(candidates.map { ($0.index.dbi, $0.ranges) }, limit: Self.raceLimit)
        }
    }
}
