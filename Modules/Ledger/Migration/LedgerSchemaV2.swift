public import Strata

/// The ledger's current schema: ``Account`` and ``Transaction`` as the services use them.
///
/// Changes from ``LedgerSchemaV1``: `Transaction.memo` is renamed ``Transaction/note``
/// (declared with `@Attribute(originalName: "memo")`, so the values are kept), and
/// ``Transaction/category`` is added (optional). ``LedgerMigrationPlan`` goes from one to the
/// other and fills the category. ``Strata/Schema/ledger`` is this version's schema.
///
/// ```swift
/// let schema = try LedgerSchemaV2.schema()      // the same as Schema.ledger
/// print(schema.version)                         // 2
/// ```
public enum LedgerSchemaV2: VersionedSchema {
    /// Version 2.
    public static let version = 2

    /// The live ``Account`` and ``Transaction``.
    public static var models: [ManagedObject.Type] { [Account.self, Transaction.self] }
}
