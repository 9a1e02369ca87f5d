/// Turns fuzz bytes into structured choices. Reads past the end yield zero, so every input,
/// however short, describes a complete case (and libFuzzer's mutations stay meaningful).
struct FuzzReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The next byte, or 0 past the end.
    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A number in `0..<bound` (bound ≤ 256).
    mutating func below(_ bound: Int) -> Int {
        Int(byte()) % bound
    }

    mutating func bool() -> Bool {
        byte() & 1 == 1
    }

    /// Eight bytes, little-endian.
    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
        return value
    }

    /// An integer, often one of the edge cases.
    mutating func int64() -> Int64 {
        let special: [Int64] = [0, 1, -1, 2, .min, .max, .min + 1, .max - 1, 100, -100]
        let choice = below(16)
        return choice < special.count ? special[choice] : Int64(bitPattern: uint64())
    }

    /// A double, often an edge case: ±0, ±infinity, NaN, extremes, or raw bits (any NaN payload).
    mutating func double() -> Double {
        let special: [Double] = [
            0, -0.0, 1, -1, 0.5, .infinity, -.infinity, .nan, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .leastNonzeroMagnitude, .leastNormalMagnitude, 9_007_199_254_740_992, 1e-300,
        ]
        let choice = below(20)
        return choice < special.count ? special[choice] : Double(bitPattern: uint64())
    }

    /// A short string. Without `unicode`, only ASCII other than CR, where Swift's `String`
    /// semantics (grapheme clusters, canonical equivalence) and Strata's binary semantics
    /// agree; with it, scalars chosen to make them differ (combining marks, CR LF, emoji, NUL).
    mutating func string(unicode: Bool) -> String {
        let length = below(9)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            if unicode {
                scalars.append(unicodeScalar())
            } else {
                let ascii = Array("abcA Z~%_0\n\t\u{0}\u{7F}".unicodeScalars)
                scalars.append(ascii[below(ascii.count)])
            }
        }
        return String(scalars)
    }

    private mutating func unicodeScalar() -> Unicode.Scalar {
        let special = Array(
            "ae\u{301}\u{E9}\u{0}\r\n😀\u{1F1E6}\u{1F1E8}\u{200D}\u{212B}\u{C5}ßẞ\u{FFFF}\u{10FFFF}\u{7F}\u{80}"
                .unicodeScalars)
        let choice = below(32)
        if choice < special.count { return special[choice] }
        let raw = UInt32(byte()) << 8 | UInt32(byte())
        return Unicode.Scalar(raw) ?? "?"
    }
}
