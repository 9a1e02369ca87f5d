import StrataStorage

/// An aggregate folded over an entity's stored rows where they lie: each row is checked as a
/// decode checks it (``RowFields/read(_:key:)``), its group found by the bytes
/// of its group values (``LMDBGroupTable``), and the functions' columns added as integers and
/// reals into trivial lanes (``LMDBFoldLane``, one per group and function, a step each settled
/// once: ``LMDBFoldStep``), with no ``StoredValue`` made per row. The notes and the lanes, written
/// on every row, are placed away from the scan's stack (``ScanScratch``, whose comment says why):
/// make the fold in the frame that runs the scan. The lanes become
/// ``AggregatePartial``s at the end. A group's values are
/// decoded once, from the first row of the group. The result equals ``AggregateAccumulator``'s
/// over the same rows in the same order, errors included.
///
/// ```swift
/// var fold = LMDBAggregateFold(plan, layout: entity.layout, anchor: .here())
/// try txn.scan(entity.dbi, from: IndexKeyCodec.primaryKey(1)) { key, value in
///     try fold.add(value, key: try IndexKeyCodec.rowKey(key, entity: entity.name))
///     return true
/// }
/// let rows = fold.rows()
/// ```
struct LMDBAggregateFold {
    private let plan: AggregatePlan
    private let layout: EntityLayout
    /// Per function, what it does with a row.
    private let steps: ContiguousArray<LMDBFoldStep>
    private let fields: RowFields
    private var table = LMDBGroupTable()
    /// Every group's figures, one run of `steps.count` per group, in group number order; from
    /// where the notes end in their page (``ScanScratch``).
    private let lanes: ScanScratch<LMDBFoldLane>
    /// Every group's values, in group number order.
    private var groups: [[StoredValue]] = []
    /// Which columns a group's first row is decoded for.
    private let groupColumns: ContiguousArray<Bool>
    /// The row a group's first row is decoded into.
    private var groupRow = StoredRow(key: 0, version: 0, values: [])

    /// Whether the fold computes `plan` over the rows of an entity laid out as `layout`: a plan
    /// without a filter (a filter is evaluated on decoded values) whose minimums and maximums
    /// are of integer or real columns (texts and blobs are compared as values). The columns must
    /// exist (the reader checks them first).
    static func accepts(_ plan: AggregatePlan, layout: EntityLayout) -> Bool {
        guard plan.filter == nil else { return false }
        return plan.functions.allSatisfy { function in
            switch function {
            case .minimum(let column), .maximum(let column):
                return layout.classes[column] == .integer || layout.classes[column] == .real
            default:
                return true
            }
        }
    }

    /// A fold of `plan` (one ``accepts(_:layout:)``) over rows laid out as `layout`, scanned in
    /// the frame of `anchor` (``StackAnchor/here()``) or below it.
    init(_ plan: AggregatePlan, layout: EntityLayout, anchor: StackAnchor) {
        self.plan = plan
        self.layout = layout
        steps = ContiguousArray(plan.functions.map { LMDBFoldStep($0, layout: layout) })
        let count = layout.classes.count
        var checksText = ContiguousArray(repeating: false, count: count)
        for case let column? in plan.functions.map(\.column) { checksText[column] = true }
        fields = RowFields(layout: layout, checksText: checksText, groupBy: plan.groupBy, anchor: anchor)
        lanes = ScanScratch(count: 0, repeating: LMDBFoldLane(), anchor: anchor, distance: fields.notesEnd)
        var groupColumns = ContiguousArray(repeating: false, count: count)
        for column in plan.groupBy { groupColumns[column] = true }
        self.groupColumns = groupColumns
    }

    /// Adds one stored row, `key` its primary key.
    /// - Throws: `.storeCorrupt` when the row does not decode; `.validation` when an integer sum
    ///   passes `Int64` (``AggregateAccumulator/sumOverflowMessage``).
    mutating func add(_ bytes: RawSpan, key: Int64) throws(StrataError) {
        let groupKey = try fields.read(bytes, key: key)
        let (group, isNew) =
            groupKey.length <= 16
            ? table.group(words: groupKey.words, length: groupKey.length) : table.group(of: fields.groupKey)
        if isNew {
            try RowCodec.decode(bytes, key: key, layout: layout, wanted: groupColumns, into: &groupRow)
            groups.append(plan.groupBy.map { groupRow.values[$0] })
            lanes.append(repeating: LMDBFoldLane(), count: steps.count)
        }
        let width = steps.count
        let base = group &* width
        for index in 0..<width {
            let step = steps[index]
            if step.kind == .countRows {
                lanes[base &+ index].count &+= 1
                continue
            }
            let field = fields[step.column]
            if field.tag == RowCodec.tagNull { continue }
            switch step.kind {
            case .countRows, .countValues:
                lanes[base &+ index].count &+= 1
            case .sumInteger:
                lanes[base &+ index].add(integer: field.integer)
            case .sumReal:
                lanes[base &+ index].real += field.real
                lanes[base &+ index].count &+= 1
            case .minimumInteger:
                lanes[base &+ index].keep(integer: field.integer, minimum: true)
            case .maximumInteger:
                lanes[base &+ index].keep(integer: field.integer, minimum: false)
            case .minimumReal:
                lanes[base &+ index].keep(real: field.real, minimum: true)
            case .maximumReal:
                lanes[base &+ index].keep(real: field.real, minimum: false)
            }
        }
    }

    /// The groups in ascending order of their values, each with its aggregates, as
    /// ``AggregateAccumulator/checkedRows()`` gives them.
    /// - Throws: `.validation` when an integer sum's total is past `Int64`.
    func rows() throws(StrataError) -> [AggregateRow] {
        let width = steps.count
        let partials = (0..<lanes.count).map { lanes[$0].partial(steps[$0 % width].kind) }
        return try AggregateAccumulator.rows(
            of: plan, groups: groups.indices.lazy.map { (groups[$0], $0 * width) }, partials: partials)
    }
}
