import Testing

/// Every ledger suite nests in this one, so `swift test --filter LedgerTests` runs them all.
///
/// The suites run in parallel with each other and with the rest of the test target: each test
/// has its own store, and every retry budget it relies on is sized for the contention it
/// creates, not for the machine's load. (The hot-row retry check, the conformance kit's
/// *Contexts* check, gives each unit of work 200 retries: with 8 writers on one row even the
/// worst case — every attempt overlapping the other seven — exhausts that with probability
/// (7/8)^201 ≈ 2·10⁻¹², however slow the commits are.)
@Suite("ledger")
struct LedgerTests {}
