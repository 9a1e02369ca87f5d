extension Substring {
    /// Whether the text is ASCII digits only (or empty): what amounts and dates are written with.
    /// `Int` alone also takes a sign, so `Int("+024")` is 24 and `+024-02-03` would pass for a day.
    ///
    /// ```swift
    /// "2024"[...].isASCIIDigits   // true
    /// "+024"[...].isASCIIDigits   // false
    /// ```
    var isASCIIDigits: Bool {
        utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
