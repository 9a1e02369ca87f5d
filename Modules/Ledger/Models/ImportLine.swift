public import Foundation
public import Strata

/// The raw CSV line an imported ``Transaction`` came from: the file's name, the line number and
/// the text, kept for audit ("where did this amount come from?").
///
/// The import (``ImportService``) makes one per imported transaction and rewrites it when a
/// later import updates the transaction. The transaction owns it: ``Transaction/source`` has the
/// cascade rule, so deleting the transaction (one at a time or by ``PurgeService``) deletes its
/// line too.
///
/// ```swift
/// try await context.perform {
///     let transaction = try context.fetch(FetchRequest<Transaction>(
///         predicate: #Predicate { $0.externalID == "bank-0042" })).first
///     if let line = transaction?.source { print(line.file, line.lineNumber, line.text) }
/// }
/// ```
///
/// Lifetime rule: valid only inside the `perform` of the context that fetched or inserted it.
public final class ImportLine: ManagedObject {
    /// The name of the file the line was read from (its last path component).
    @Attribute public var file = ""

    /// The line's number in that file, counting the header as line 1.
    @Attribute public var lineNumber = 0

    /// The line exactly as read, without its line ending.
    @Attribute public var text = ""

    /// When the line was imported.
    @Attribute public var importedAt = Date(timeIntervalSinceReferenceDate: 0)

    /// The transactions made from this line: one in practice (the inverse of
    /// ``Transaction/source``). Deleting the line leaves them, without a source.
    @Relationship(inverse: \Transaction.source)
    public var transactions: RelatedObjects<Transaction>
}

extension ImportLine {
    /// Copies a parsed line. Call inside `perform`.
    func fill(from line: LedgerCSV.Line, file: String, importedAt: Date) {
        self.file = file
        lineNumber = line.lineNumber
        text = line.text
        self.importedAt = importedAt
    }
}
