/// Checks on service inputs, done before any context is made.
enum AccountRules {
    static let maximumNameLength = 100

    /// The name trimmed of surrounding spaces.
    /// - Throws: ``LedgerError/invalidName(_:)``.
    static func validName(_ name: String) throws(LedgerError) -> String {
        let trimmed = name.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.count <= maximumNameLength else { throw .invalidName(name) }
        return trimmed
    }

    /// - Throws: ``LedgerError/invalidCurrency(_:)`` unless `code` is three ASCII capitals.
    static func validCurrency(_ code: String) throws(LedgerError) -> String {
        guard code.utf8.count == 3, code.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            throw .invalidCurrency(code)
        }
        return code
    }

    /// - Throws: ``LedgerError/invalidAmount(_:reason:)`` for zero.
    static func nonZero(_ amount: Int64) throws(LedgerError) -> Int64 {
        guard amount != 0 else {
            throw .invalidAmount("0", reason: "a transaction must move money; use a non-zero amount")
        }
        return amount
    }

    /// - Throws: ``LedgerError/invalidAmount(_:reason:)`` unless `amount` is positive.
    static func positive(_ amount: Int64) throws(LedgerError) -> Int64 {
        guard amount > 0 else {
            throw .invalidAmount(
                MinorUnits.format(amount),
                reason: "a transfer amount must be positive; swap the accounts to move money the other way")
        }
        return amount
    }
}

extension String {
    /// The string without leading and trailing whitespace.
    var trimmingSpaces: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
