import Testing

/// Every ledger suite nests in this one, so `swift test --filter LedgerTests` runs them all.
///
/// They run one at a time (`.serialized` applies to every nested suite and test): each test
/// makes real stores and commits to them durably, and on a small machine dozens of them at once
/// flood the disk with syncs. That slows every other test's commits too, and the core's hot-row
/// retry test (`SaveTests.unitOfWorkRetries`) then runs out of retries.
@Suite("ledger", .serialized)
struct LedgerTests {}
