import Foundation

/// The workloads of issues 5, 14, 15, 16 and 25, in report order.
enum Workload: Int, CaseIterable, Codable, Sendable {
    case insert = 1
    case fetchAll, lookup, predicate, toMany, freshContext, ledgerTransfers, mainActorStall, migration
    case historyInsert, deliveryInProcess, deliveryCrossProcess, toManyPrefetched, peakMemory
    /// Issue 25's set-based workloads (``SetBasedBenchmark``).
    case batchInsert, upsert, batchUpdate, batchDelete, groupedSum, streaming

    /// The set-based workloads of issue 25, run on their own model at ``BenchmarkOptions/setRows``.
    static let setBased: Set<Workload> = [.batchInsert, .upsert, .batchUpdate, .batchDelete, .groupedSum, .streaming]

    var title: String {
        switch self {
        case .insert: "insert N, one save"
        case .fetchAll: "fetch all N, touch every attribute"
        case .lookup: "N lookups by object ID"
        case .predicate: "indexed predicate (1%), sorted"
        case .toMany: "to-many faulted, 1,000 accounts"
        case .freshContext: "fresh context vs reused, per op"
        case .ledgerTransfers: "concurrent ledger transfers"
        case .mainActorStall: "main-actor stall"
        case .migration: "migrate N: add a defaulted attribute, rename one"
        case .historyInsert: "insert N, history on vs off"
        case .deliveryInProcess: "commit → delivery, same process"
        case .deliveryCrossProcess: "commit → delivery, other process"
        case .toManyPrefetched: "to-many prefetched, 1,000 accounts"
        case .peakMemory: "memory holding all N fetched"
        case .batchInsert: "batch insert N"
        case .upsert: "upsert N/10, half existing"
        case .batchUpdate: "batch update 10% of N"
        case .batchDelete: "batch delete 10% of N, cascade"
        case .groupedSum: "sum grouped by category over N"
        case .streaming: "stream N in batches of 1,000"
        }
    }

    /// The target for this workload on this engine, if any: issue 27's where it set one (its
    /// PostgreSQL targets are for the client's CPU, so they hold with `--clock cpu`; "no worse
    /// than today" is the ratio issue 27 measured), else the one issues 5, 15 and 16 set.
    func target(on engine: EngineChoice) -> Target? {
        switch (self, engine) {
        case (.batchInsert, _), (.upsert, _), (.batchUpdate, _), (.batchDelete, _), (.groupedSum, _), (.streaming, _):
            setBasedTarget
        case (.insert, .postgres), (.fetchAll, .postgres), (.lookup, .postgres): .ratio(1.5)
        case (.predicate, .postgres), (.toMany, .postgres), (.toManyPrefetched, .postgres): .ratio(2)
        case (_, .postgres): nil
        case (.insert, .sqlite): .ratio(1.3)
        case (.fetchAll, .sqlite): .ratio(1.3)
        case (.lookup, .sqlite): .ratio(1.52)
        case (.predicate, .sqlite): .ratio(1.1)
        case (.toMany, .sqlite): .ratio(1.19)
        case (.toManyPrefetched, .sqlite): .ratio(1.2)
        case (.insert, .lmdb): .ratio(2)
        case (.fetchAll, .lmdb): .ratio(2)
        case (.lookup, .lmdb): .ratio(1.5)
        case (.predicate, .lmdb): .ratio(2)
        case (.toMany, _): .ratio(2)
        case (.toManyPrefetched, _): .ratio(1.5)
        case (.freshContext, _): .extraMicroseconds(1)
        case (.migration, .lmdb): .ratio(2)
        case (.historyInsert, _): .ratio(1.15)
        case (.peakMemory, _): .ratio(1.5)
        default: nil
        }
    }

    /// Issue 25's time targets, the same on every engine (the memory targets are
    /// ``SetBasedMemory``'s).
    private var setBasedTarget: Target? {
        switch self {
        case .batchInsert: .ratio(1.2)
        case .upsert, .batchUpdate, .batchDelete, .groupedSum: .ratio(1.5)
        default: nil
        }
    }
}

/// A limit from issue 5 (and 25).
enum Target: Sendable, Equatable {
    /// Strata time at most this multiple of the baseline's.
    case ratio(Double)
    /// Strata at most this many microseconds per operation more than the baseline.
    case extraMicroseconds(Double)
    /// Strata's memory at most this many megabytes more than the baseline's (workload 19).
    case extraMegabytes(Double)
    /// Strata's peak resident set at most this many megabytes (workload 20).
    case peakMegabytes(Double)

    var limit: Double {
        switch self {
        case .ratio(let limit), .extraMicroseconds(let limit), .extraMegabytes(let limit), .peakMegabytes(let limit):
            limit
        }
    }

    var label: String {
        switch self {
        case .ratio(let limit): "≤ \(format(limit, digits: (limit * 10).rounded() == limit * 10 ? 1 : 2))×"
        case .extraMicroseconds(let limit): "≤ +\(format(limit, digits: 0)) µs"
        case .extraMegabytes(let limit): "≤ raw + \(format(limit, digits: 0)) MB"
        case .peakMegabytes(let limit): "≤ \(format(limit, digits: 0)) MB"
        }
    }
}

/// One line of the report: a workload on one engine, measured or pending.
struct WorkloadResult: Codable, Sendable {
    var workload: Workload
    var name: String
    /// Nil for a workload not measured on any engine yet.
    var engine: EngineChoice?
    /// `"ns/row"` or `"µs/op"`.
    var unit: String?
    /// What the baseline column holds: `"raw SQLite"`, `"raw LMDB"`, `"reused context"`.
    var baselineName: String?
    /// Median Strata time per row (or operation).
    var strata: Double?
    /// Median baseline time per row (or operation).
    var baseline: Double?
    /// Strata / baseline; for workload 8, baseline / Strata (how many times longer the
    /// `@MainActor` pattern's gap is than the background variant's).
    var ratio: Double?
    /// Strata − baseline, in ``unit``.
    var difference: Double?
    /// Rows (or operations) one timed run covers.
    var itemsPerRun: Int?
    /// The target, e.g. `"≤ 1.5×"`.
    var target: String?
    /// The target's number: the largest ratio, or the most extra microseconds.
    var targetLimit: Double?
    var targetMet: Bool?
    /// `"measured"`, or why the workload is not.
    var status: String
    var strataSamples: Samples?
    var baselineSamples: Samples?
    /// Anything else worth knowing about the measurement (workloads 11 and 12: deliveries that
    /// came before `save()` returned; workload 14: the peak and file-page figures).
    var note: String?
    /// Workload 8's whole measurement on this engine (on its longest-gap line only).
    var stall: StallFigures?
    /// Workload 14: both sides' memory figures in bytes.
    var memory: PeakMemory.Figures?
    /// Workloads 19 and 20: both sides' memory figures in bytes.
    var setMemory: SetBasedMemory.Figures?

    var isMeasured: Bool { strata != nil }

    /// A measured result, with its target checked.
    /// - Parameters:
    ///   - items: rows (or operations) per timed run.
    ///   - unitScale: nanoseconds per unit (1 for ns, 1,000 for µs).
    static func measured(
        _ workload: Workload, on engine: EngineChoice, unit: String, unitScale: Double, baselineName: String,
        items: Int, strata: Samples, baseline: Samples
    ) -> WorkloadResult {
        let strataValue = strata.median / unitScale / Double(items)
        let baselineValue = baseline.median / unitScale / Double(items)
        let ratio = baselineValue > 0 ? strataValue / baselineValue : nil
        let difference = strataValue - baselineValue
        let target = workload.target(on: engine)
        let met: Bool? =
            switch target {
            case .ratio(let limit): ratio.map { $0 <= limit }
            case .extraMicroseconds(let limit): difference <= limit
            case .extraMegabytes, .peakMegabytes, nil: nil
            }
        return WorkloadResult(
            workload: workload, name: workload.title, engine: engine, unit: unit, baselineName: baselineName,
            strata: strataValue, baseline: baselineValue, ratio: ratio, difference: difference, itemsPerRun: items,
            target: target?.label, targetLimit: target?.limit, targetMet: met, status: "measured",
            strataSamples: strata, baselineSamples: baseline)
    }

    /// A workload that is not measured yet.
    static func pending(_ workload: Workload, reason: String) -> WorkloadResult {
        WorkloadResult(workload: workload, name: workload.title, status: reason)
    }
}

/// `value` with a fixed number of decimals ("—" when not finite).
func format(_ value: Double, digits: Int) -> String {
    value.isFinite ? String(format: "%.\(digits)f", value) : "—"
}
