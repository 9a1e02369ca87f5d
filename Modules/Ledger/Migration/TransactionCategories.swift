extension Transaction {
    /// The category a note suggests, from a small keyword table: `"Rent"` → `"housing"`,
    /// `"Dinner out"` → `"dining"`, `"Salary"` → `"income"`; nil when no keyword matches.
    ///
    /// Words are matched whole and without regard to case; the first word of the note that is a
    /// keyword decides. ``LedgerMigrationPlan`` fills ``category`` with it for every version 1
    /// transaction, and ``TransactionService`` uses it when a new transaction is given none.
    ///
    /// ```swift
    /// Transaction.suggestedCategory(forNote: "Weekly groceries")   // "groceries"
    /// Transaction.suggestedCategory(forNote: "Birthday present")   // nil
    /// ```
    public static func suggestedCategory(forNote note: String) -> String? {
        // An ASCII note (most are) is split on its bytes: there, `Character.isLetter` holds for
        // A–Z and a–z exactly, and `lowercased()` maps only A–Z. An import suggests a category
        // for every line, so this is on its path.
        let utf8 = note.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) {
            var word: [UInt8] = []
            for byte in utf8 {
                let lower = byte | 0x20
                if lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z") {
                    word.append(lower)
                } else if !word.isEmpty {
                    if let category = categoryKeywords[String(decoding: word, as: UTF8.self)] { return category }
                    word.removeAll(keepingCapacity: true)
                }
            }
            return word.isEmpty ? nil : categoryKeywords[String(decoding: word, as: UTF8.self)]
        }
        let words = note.lowercased().split { !$0.isLetter }
        for word in words {
            if let category = categoryKeywords[String(word)] { return category }
        }
        return nil
    }

    /// The category of both halves of a transfer.
    static let transferCategory = "transfer"

    /// Keyword → category.
    static let categoryKeywords: [String: String] = [
        "salary": "income", "payroll": "income", "interest": "income", "refund": "income",
        "rent": "housing", "mortgage": "housing", "electricity": "housing",
        "groceries": "groceries", "grocery": "groceries", "supermarket": "groceries",
        "coffee": "dining", "dinner": "dining", "lunch": "dining", "restaurant": "dining",
        "transfer": "transfer", "cash": "transfer", "withdrawal": "transfer",
        "train": "travel", "flight": "travel", "taxi": "travel", "hotel": "travel",
    ]
}
