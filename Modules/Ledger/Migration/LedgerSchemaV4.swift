public import Strata

/// The ledger's current schema: ``Account``, ``Transaction``, ``ImportLine`` and
/// ``PurgedImport`` as the services use them.
///
/// Changes from ``LedgerSchemaV3``, inferred (a lightweight stage): the entity ``PurgedImport``
/// is added, the record a purged imported transaction leaves so that importing its line again
/// does not count its amount twice. ``Strata/Schema/ledger`` is this version's schema.
///
/// ```swift
/// let schema = try LedgerSchemaV4.schema()      // the same as Schema.ledger
/// print(schema.version)                         // 4
/// ```
public enum LedgerSchemaV4: VersionedSchema {
    /// Version 4.
    public static let version = 4

    /// The live ``Account``, ``Transaction``, ``ImportLine`` and ``PurgedImport``.
    public static var models: [ManagedObject.Type] {
        [Account.self, Transaction.self, ImportLine.self, PurgedImport.self]
    }
}
