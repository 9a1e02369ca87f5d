import Foundation

/// Everything one run measured: what the JSON file holds and what the table, the Markdown and
/// the chart are drawn from.
struct BenchmarkReport: Codable, Sendable {
    var command: String
    /// When the run started, ISO 8601.
    var date: String
    var rows: Int
    /// Rows and timed repetitions of the set-based workloads 15–20, when any was measured:
    /// `setRepetitions` of 15 and 20, `setShortRepetitions` of 16–19 (18: at most 4).
    var setRows: Int?
    var setRepetitions: Int?
    var setShortRepetitions: Int?
    var repetitions: Int
    var warmUps: Int
    var machine: MachineInfo
    /// What the times measure: wall time or the process's CPU time.
    var clock: ClockSource
    /// Wall-clock seconds of the whole run.
    var seconds: Double
    var results: [WorkloadResult]

    /// "100000 rows", with the set-based workloads' count and repetitions when they ran.
    var rowsLabel: String {
        guard let setRows else { return "\(rows) rows" }
        let long = setRepetitions ?? repetitions
        let short = setShortRepetitions ?? long
        let medians =
            long == short
            ? "median of \(long)" : "15 and 20 median of \(long), 16–19 of \(short) (18: \(min(short, 4)))"
        return "\(rows) rows (15–20: \(setRows), \(medians))"
    }

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// The report as a table: one row of cells per result.
enum ReportTable {
    static let header = ["#", "Workload", "Engine", "Strata", "Baseline", "Ratio", "Target", "Met"]

    static func cells(_ result: WorkloadResult) -> [String] {
        let number = String(result.workload.rawValue)
        guard let strata = result.strata, let unit = result.unit else {
            return [number, result.name, result.engine?.displayName ?? "—", result.status, "", "", "", ""]
        }
        let met = result.targetMet.map { $0 ? "yes" : "no" } ?? "—"
        guard let baseline = result.baseline else {
            // A measure without a baseline (the delivery latencies of 11 and 12).
            return [
                number, result.name, result.engine?.displayName ?? "—", "\(format(strata, digits: 2)) \(unit)", "—",
                "—", result.target ?? "—", met,
            ]
        }
        let digits = unit == "µs/op" ? 2 : 1
        let comparison: String =
            if result.workload == .mainActorStall && result.ratio == nil {
                "—"
            } else if unit == "MB" {
                (result.ratio.map { format($0, digits: 2) + "×" } ?? "—")
                    + (result.difference.map { " (" + ($0 >= 0 ? "+" : "") + format($0, digits: 1) + " MB)" } ?? "")
            } else if result.workload == .freshContext {
                (result.difference.map { ($0 >= 0 ? "+" : "") + format($0, digits: 2) } ?? "—") + " µs"
            } else {
                (result.ratio.map { format($0, digits: 2) } ?? "—") + "×"
            }
        return [
            number, result.name, result.engine?.displayName ?? "—",
            "\(format(strata, digits: digits)) \(unit)",
            "\(format(baseline, digits: digits)) \(unit) (\(result.baselineName ?? "?"))",
            comparison, result.target ?? "—", met,
        ]
    }

    static let footnote = """
        Strata and Baseline are medians per row (per operation for 6). The baseline of 1–5 is the raw \
        C library on the same data in the same process; Ratio = Strata / Baseline. For 6, Strata is a \
        fresh context per operation, Baseline one reused context, and Ratio their difference. For 7, \
        Strata is ledger transfers per second from that many tasks and Baseline the 1-task rate. For 8, \
        Strata is the main-actor heartbeat gap with fresh background contexts and Baseline with the \
        @MainActor shared-context pattern (lower is better), Ratio the pattern's gap / the background \
        one (higher is better), and the idle floor the longest gap with no store work in the same run. \
        For 9, Strata is the open that migrates a \
        store of N rows to the next model version and Baseline a raw copy of the rows into the new \
        layout in one transaction. For 10, Strata is workload 1's insert with persistent history on \
        and Baseline with it off; Ratio is history's overhead. For 11 and 12, Strata is the time \
        from save() returning to an observer of container.changes() having the transaction, in the \
        same process (11) or with the commits made by a second process (12): p50 and p99 of C commits. \
        For 14, Strata and Baseline are the growth of anonymous memory per row while holding all N \
        fetched rows (Strata's objects in one context; the raw baseline's array of rows), each side \
        in a child process of its own; the peak and file-page figures are in the JSON's note. \
        15–20 (issue 25) run on a model of their own at 1,000,000 rows unless --rows is given: Strata \
        is the set-based call (batchInsert, upsert, batchUpdate, batchDelete, aggregate, forEachBatch), \
        Baseline the raw SQL or mdb_* job, and the "(object graph)" line the same job through fetched \
        objects and save(), against the same baseline. The MB lines of 19 and 20 are measured in \
        child processes: 19 the growth of resident memory during the grouped sum, 20 the peak \
        resident set while streaming, both less the store-file pages mapped meanwhile (LMDB's map).
        """

    /// A plain-text table with aligned columns.
    static func text(_ report: BenchmarkReport) -> String {
        let rows = [header] + report.results.map(cells)
        var widths = Array(repeating: 0, count: header.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        var lines = [
            """
            strata-bench: \(report.rowsLabel), median of \(report.repetitions) after \(report.warmUps) warm-up, \
            \(report.clock) clock, \(format(report.seconds, digits: 0)) s
            """,
            "machine: \(report.machine.summary)",
            "",
        ]
        for (index, row) in rows.enumerated() {
            let padded = row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? padding + cell : cell + padding
            }
            lines.append(padded.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
            if index == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        lines.append("")
        lines.append(footnote)
        lines += stallSummaries(report)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A paragraph per engine with workload 8's whole measurement, after a blank line each.
    static func stallSummaries(_ report: BenchmarkReport) -> [String] {
        report.results.flatMap { result -> [String] in
            guard let stall = result.stall, let engine = result.engine else { return [] }
            return ["", stall.summary(on: engine)]
        }
    }

    /// A Markdown table with the machine and command, for `Docs/Benchmarks.md`.
    static func markdown(_ report: BenchmarkReport) -> String {
        var lines = [
            "- Command: `\(report.command)`",
            "- Machine: \(report.machine.summary)",
            """
            - Run: \(report.date), \(report.rowsLabel), median of \(report.repetitions) after \(report.warmUps) \
            warm-up, \(report.clock) clock, \(format(report.seconds, digits: 0)) s in all
            """,
            "",
            "| " + header.joined(separator: " | ") + " |",
            "|" + header.map { _ in " --- " }.joined(separator: "|") + "|",
        ]
        for result in report.results {
            lines.append(
                "| " + cells(result).map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ")
                    + " |")
        }
        lines.append("")
        lines.append(footnote)
        lines += stallSummaries(report)
        return lines.joined(separator: "\n") + "\n"
    }
}
