public import Foundation
public import Strata

/// The record an imported transaction leaves when ``PurgeService`` deletes it: its external id,
/// so that importing the same line again does not add the transaction back.
///
/// A purge moves each deleted transaction's amount into its account's opening balance. Were a
/// later `ledger import` of the same statement to add the transaction again, its amount would
/// count twice. So the purge writes one `PurgedImport` per deleted transaction that has an
/// ``Transaction/externalID``, in the same save, and ``ImportService`` skips every line whose
/// external id has one and that says the same (``ImportSummary/skippedAsPurged``); a line that
/// now says another amount, day or account is refused
/// (``ImportLineProblem/changedAfterPurge(_:was:)``).
///
/// ```swift
/// try await context.perform {
///     let purged = try context.fetch(FetchRequest<PurgedImport>(
///         predicate: #Predicate { $0.externalID == "bank-0042" })).first
///     if let purged { print("purged before", purged.purgedBefore) }
/// }
/// ```
///
/// Lifetime rule: valid only inside the `perform` of the context that fetched or inserted it.
public final class PurgedImport: ManagedObject {
    /// The external id of the purged transaction. Unique: one record per id.
    @Attribute(.unique) public var externalID = ""

    /// The purged transaction's date.
    @Attribute public var date = Date(timeIntervalSinceReferenceDate: 0)

    /// The purged transaction's amount, now part of its account's opening balance.
    @Attribute public var amount: Int64 = 0

    /// The name of the purged transaction's account ("" when it had none).
    @Attribute public var account = ""

    /// The purge's cut-off: the transaction was dated before it.
    @Attribute public var purgedBefore = Date(timeIntervalSinceReferenceDate: 0)
}
