public import Strata

/// The ledger's schema version 3: ``Account``, ``Transaction`` and ``ImportLine``, whose classes
/// have not changed since (``LedgerSchemaV4`` adds ``PurgedImport``).
///
/// Changes from ``LedgerSchemaV2``, all inferred (a lightweight stage): ``Transaction/externalID``
/// is added (optional, unique: the key `ledger import` upserts on), the entity ``ImportLine`` is
/// added (the raw CSV line an imported transaction came from), and ``Transaction/source`` links a
/// transaction to it with the cascade rule, so deleting or purging the transaction deletes its
/// source line too.
///
/// ```swift
/// let schema = try LedgerSchemaV3.schema()
/// print(schema.version)                         // 3
/// ```
public enum LedgerSchemaV3: VersionedSchema {
    /// Version 3.
    public static let version = 3

    /// The live ``Account``, ``Transaction`` and ``ImportLine``.
    public static var models: [ManagedObject.Type] { [Account.self, Transaction.self, ImportLine.self] }
}
