import Foundation
import Strata

/// The instrumentation hook a benchmark store is opened with (`--hook none|noop`).
enum BenchmarkHook: String, Sendable {
    /// No hook: the default, as in an application that does not instrument.
    case none
    /// A hook that ignores every event: what a set hook costs, events built and delivered.
    case noop

    /// The hook chosen on the command line (`--hook`, checked by ``BenchmarkOptions``).
    static let chosen: BenchmarkHook = {
        let arguments = CommandLine.arguments
        guard let flag = arguments.firstIndex(of: "--hook"), flag + 1 < arguments.count else { return .none }
        return BenchmarkHook(rawValue: arguments[flag + 1]) ?? .none
    }()

    var instrumentation: Instrumentation? {
        switch self {
        case .none: nil
        case .noop: Instrumentation { _ in }
        }
    }
}

/// `strata-bench --hook-cost [ROWS] [REPETITIONS]`: workload 1 (insert) and workload 3 (lookups)
/// on SQLite and LMDB, on stores opened without a hook and with a no-op hook, interleaved, each
/// repetition on fresh stores; prints the medians and the ratio hooked / unhooked. Wall-clock
/// ratios move by ±20% on a shared machine: `HOOK=noop Scripts/count-instructions.sh` counts
/// instructions instead.
enum HookCost {
    static let flag = "--hook-cost"

    static func main(_ arguments: [String]) async throws {
        let rows = arguments.first.flatMap { Int($0) } ?? 20_000
        let repetitions = arguments.dropFirst().first.flatMap { Int($0) } ?? 7
        let dataset = Dataset(rows: rows)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strata-hook-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        print("instrumentation hook cost, \(rows) rows, median of \(repetitions) (after one warm-up)")
        for engine in EngineChoice.embedded {
            var insert: [BenchmarkHook: [UInt64]] = [:]
            var lookup: [BenchmarkHook: [UInt64]] = [:]
            for repetition in 0...repetitions {
                // Alternate which variant goes first, so that neither always runs on a warmer machine.
                let order: [BenchmarkHook] = repetition % 2 == 0 ? [.none, .noop] : [.noop, .none]
                for hook in order {
                    let directory = scratch.appendingPathComponent("\(engine.rawValue)-\(hook.rawValue)-\(repetition)")
                    let store = try await StrataStore.make(engine, in: directory, dataset: dataset, hook: hook)
                    let inserted = try await StrataWorkloads.insert(store, dataset)
                    let (looked, _) = try await StrataWorkloads.lookup(store, store.rowIDs(dataset.lookupOrder))
                    store.container.close()
                    try? FileManager.default.removeItem(at: directory)
                    guard repetition > 0 else { continue }
                    insert[hook, default: []].append(inserted)
                    lookup[hook, default: []].append(looked)
                }
            }
            for (name, samples) in [("1 insert", insert), ("3 lookups", lookup)] {
                let unset = median(samples[.none] ?? []) / Double(rows)
                let noop = median(samples[.noop] ?? []) / Double(rows)
                print(
                    "\(engine.displayName) workload \(name): no hook \(format(unset)) ns/row, no-op hook "
                        + "\(format(noop)) ns/row, ratio \(String(format: "%.3f", noop / max(unset, 1)))")
            }
        }
    }

    private static func median(_ values: [UInt64]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return Double(sorted[sorted.count / 2])
    }

    private static func format(_ value: Double) -> String { String(format: "%.0f", value) }
}
