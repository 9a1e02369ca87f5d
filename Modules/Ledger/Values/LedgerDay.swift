public import Foundation

/// Days and months as the ledger's commands write them, in UTC: `2024-03-31` and `2024-03`.
///
/// ```swift
/// let day = try LedgerDay.parse("2024-03-31")          // 2024-03-31T00:00:00Z
/// LedgerDay.format(day)                                // "2024-03-31"
/// let march = try LedgerMonth.parse("2024-03")
/// print(march.start, march.end)                        // 2024-03-01, 2024-04-01 (UTC midnights)
/// ```
public enum LedgerDay {
    /// Midnight UTC at the start of the day `text` names (`YYYY-MM-DD`).
    /// - Throws: ``LedgerError/invalidDate(_:expected:)`` for any other text or a day that does
    ///   not exist (2023-02-29).
    public static func parse(_ text: String) throws(LedgerError) -> Date {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy(\.isASCIIDigits), let year = Int(parts[0]), let month = Int(parts[1]),
            let day = Int(parts[2]),
            let date = date(year: year, month: month, day: day)
        else { throw .invalidDate(text, expected: "YYYY-MM-DD, such as 2024-03-31") }
        return date
    }

    /// `YYYY-MM-DD` of the UTC day `date` falls in.
    public static func format(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// Midnight UTC of a calendar day, or nil when the day does not exist.
    static func date(year: Int, month: Int, day: Int) -> Date? {
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components) else { return nil }
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        return back.year == year && back.month == month && back.day == day ? date : nil
    }

    /// The Gregorian calendar in UTC.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()
}

/// A calendar month in UTC, such as `2024-03`: what `ledger report --month` takes.
///
/// ```swift
/// let march = try LedgerMonth.parse("2024-03")
/// print(march)                  // 2024-03
/// ```
public struct LedgerMonth: Sendable, Hashable, CustomStringConvertible {
    /// The year, 1 to 9999.
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int
    /// Midnight UTC on the month's first day.
    public let start: Date
    /// Midnight UTC on the next month's first day (not in the month).
    public let end: Date

    /// Parses `YYYY-MM`.
    /// - Throws: ``LedgerError/invalidDate(_:expected:)`` for any other text.
    public static func parse(_ text: String) throws(LedgerError) -> LedgerMonth {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, parts.allSatisfy(\.isASCIIDigits),
            let year = Int(parts[0]),
            let month = Int(parts[1]), let start = LedgerDay.date(year: year, month: month, day: 1),
            // December 9999 ends at 10000-01-01, past the years a date is written with (and past
            // `Date.distantFuture`, which is in 4001).
            let end = month == 12
                ? LedgerDay.calendar.date(from: DateComponents(year: year + 1, month: 1, day: 1))
                : LedgerDay.date(year: year, month: month + 1, day: 1)
        else { throw .invalidDate(text, expected: "YYYY-MM, such as 2024-03") }
        return LedgerMonth(year: year, month: month, start: start, end: end)
    }

    /// `YYYY-MM`.
    public var description: String { String(format: "%04d-%02d", year, month) }
}
