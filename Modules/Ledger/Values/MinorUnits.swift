/// Converts between amounts in minor units (`Int64` cents) and their decimal text.
///
/// The ledger stores every amount as an integer number of minor units, never as `Double`.
/// This helper assumes two decimal places, as in USD and EUR.
///
/// ```swift
/// try MinorUnits.parse("12.50")     // 1_250
/// try MinorUnits.parse("-3")        // -300
/// MinorUnits.format(-1_250)         // "-12.50"
/// ```
public enum MinorUnits {
    /// Digits after the decimal point.
    public static let fractionDigits = 2

    /// Parses a decimal amount such as `"12.50"`, `"-3"` or `"+0.07"` into minor units.
    ///
    /// Accepts an optional sign, digits, and at most ``fractionDigits`` digits after a `.`.
    /// No grouping separators, exponents or currency symbols.
    /// - Throws: ``LedgerError/invalidAmount(_:reason:)`` for any other text or a value beyond
    ///   `Int64`.
    public static func parse(_ text: String) throws(LedgerError) -> Int64 {
        var rest = Substring(text)
        var negative = false
        if let sign = rest.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            rest = rest.dropFirst()
        }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty || !fraction.isEmpty, whole.isASCIIDigits, fraction.isASCIIDigits,
            parts.count == 1 || !fraction.isEmpty
        else {
            throw .invalidAmount(text, reason: "write it as a decimal number such as 12.50 or -3")
        }
        guard fraction.count <= fractionDigits else {
            throw .invalidAmount(text, reason: "use at most \(fractionDigits) digits after the decimal point")
        }
        let padded = fraction + String(repeating: "0", count: fractionDigits - fraction.count)
        guard let magnitude = Int64(whole.isEmpty ? "0" + padded : whole + padded) else {
            throw .invalidAmount(text, reason: "it is too large")
        }
        return negative ? -magnitude : magnitude
    }

    /// Formats minor units as decimal text: `-1250` becomes `"-12.50"`.
    public static func format(_ amount: Int64) -> String {
        let magnitude = amount.magnitude
        var scale: UInt64 = 1
        for _ in 0..<fractionDigits { scale *= 10 }
        let fraction = String(magnitude % scale)
        let padded = String(repeating: "0", count: fractionDigits - fraction.count) + fraction
        return "\(amount < 0 ? "-" : "")\(magnitude / scale).\(padded)"
    }
}
