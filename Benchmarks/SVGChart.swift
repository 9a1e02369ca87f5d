import Foundation

/// A horizontal bar chart of the Strata / raw ratios (workloads 1–5, every engine measured),
/// with each target marked, plus the fresh-context results as text. Self-contained SVG.
enum SVGChart {
    static func render(_ report: BenchmarkReport) -> String {
        let bars = report.results.filter {
            $0.ratio != nil && $0.workload != .freshContext && $0.workload != .mainActorStall && $0.unit != "MB"
        }
        let extras = report.results.filter { $0.workload == .freshContext && $0.isMeasured }
        let stalls = report.results.filter { $0.stall != nil }
        let pending = report.results.filter { !$0.isMeasured }
        let width = 760.0
        let left = 290.0
        let right = 70.0
        let top = 64.0
        let barHeight = 18.0
        let gap = 8.0
        let plotWidth = width - left - right
        let limits = bars.compactMap { $0.targetLimit }
        let largest = max(bars.compactMap(\.ratio).max() ?? 1, limits.max() ?? 1, 1)
        let scale = (largest * 1.1).rounded(.up)
        let x = { (ratio: Double) in left + plotWidth * ratio / scale }
        let plotBottom = top + Double(bars.count) * (barHeight + gap)
        let height = plotBottom + 40 + Double(extras.count + 2 * stalls.count + pending.count) * 18 + 20

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="16" y="24" font-size="16" font-weight="bold">\
            Strata time / raw C library time (lower is better)</text>
            <text x="16" y="44" fill="#555">\(escape( """
                \(report.rowsLabel), median of \(report.repetitions); \(report.machine.processors) × \
                \(report.machine.cpuModel); black tick = target
                """))</text>

            """
        var tick = 0.0
        while tick <= scale {
            svg +=
                """
                <line x1=\"\(f(x(tick)))\" y1=\"\(f(top - 6))\" x2=\"\(f(x(tick)))\" y2=\"\(f(plotBottom))\" \
                stroke=\"\(tick == 1 ? "#888" : "#e4e4e4")\"\(tick == 1 ? " stroke-dasharray=\"4 3\"" : "")/>\n
                """
            svg +=
                """
                <text x=\"\(f(x(tick)))\" y=\"\(f(plotBottom + 14))\" text-anchor=\"middle\" \
                fill=\"#555\">\(format(tick, digits: 0))×</text>\n
                """
            tick += scale > 8 ? 2 : 1
        }
        for (index, result) in bars.enumerated() {
            let y = top + Double(index) * (barHeight + gap)
            let ratio = result.ratio ?? 0
            let color =
                switch result.targetMet {
                case true?: "#3a9a5b"
                case false?: "#d0543c"
                case nil: "#8a96a8"
                }
            let label = "\(result.engine?.displayName ?? "") · \(result.workload.rawValue). \(result.name)"
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y + 13))\" text-anchor=\"end\">\(escape(label))</text>\n"
            svg +=
                """
                <rect x=\"\(f(left))\" y=\"\(f(y))\" width=\"\(f(max(x(ratio) - left, 1)))\" \
                height=\"\(f(barHeight))\" fill=\"\(color)\"/>\n
                """
            svg += "<text x=\"\(f(x(ratio) + 4))\" y=\"\(f(y + 13))\">\(format(ratio, digits: 2))×</text>\n"
            if let limit = result.targetLimit {
                svg +=
                    """
                    <line x1=\"\(f(x(limit)))\" y1=\"\(f(y - 3))\" x2=\"\(f(x(limit)))\" \
                    y2=\"\(f(y + barHeight + 3))\" stroke=\"black\" stroke-width=\"2\"/>\n
                    """
            }
        }
        var y = plotBottom + 40
        for result in extras {
            let met = result.targetMet.map { $0 ? "target met" : "target missed" } ?? ""
            let text =
                """
                \(result.engine?.displayName ?? "") · 6. fresh context \
                \(format(result.strata ?? .nan, digits: 2)) µs/op vs reused 
                """
                    + """
                    \(format(result.baseline ?? .nan, digits: 2)) µs/op: \
                    \(format(result.difference ?? .nan, digits: 2)) µs more (\(result.target ?? "") \(met))
                    """
            svg += "<text x=\"16\" y=\"\(f(y))\">\(escape(text))</text>\n"
            y += 18
        }
        for result in stalls {
            for text in stallLines(result) {
                svg += "<text x=\"16\" y=\"\(f(y))\">\(escape(text))</text>\n"
                y += 18
            }
        }
        for result in pending {
            svg +=
                """
                <text x=\"16\" y=\"\(f(y))\" \
                fill=\"#777\">\(escape("\(result.workload.rawValue). \(result.name): \(result.status)"))</text>\n
                """
            y += 18
        }
        return svg + "</svg>\n"
    }

    /// Workload 8 as two lines of text: the ratio requirement, then the idle-floor requirement.
    private static func stallLines(_ result: WorkloadResult) -> [String] {
        guard let stall = result.stall else { return [] }
        func ms(_ value: Double) -> String { format(value, digits: 1) + " ms" }
        let engine = result.engine?.displayName ?? ""
        return [
            """
            \(engine) · 8. main-actor stall: longest gap \(ms(stall.background.longestMilliseconds)) with background \
            contexts vs \(ms(stall.mainActor.longestMilliseconds)) @MainActor \
            (\(stall.longestRatio.map { format($0, digits: 1) } ?? "—")×; ≥ 5×: \(stall.ratioHolds ? "met" : "missed"))
            """,
            """
            \(engine) · 8. background \(ms(stall.aboveFloor(stall.background))) above the idle floor of \
            \(ms(stall.idleFloorMilliseconds)) (≤ 1 ms: \(stall.backgroundNearFloor ? "met" : "missed"); \
            steal \(format(stall.stealPercent, digits: 1))%)
            """,
        ]
    }

    private static func f(_ value: Double) -> String { format(value, digits: 1) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
