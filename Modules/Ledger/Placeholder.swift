/// Placeholder until the ledger domain lands.
enum LedgerPlaceholder {}
