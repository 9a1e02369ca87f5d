import Strata

/// Workload 6: the cost of a fresh context per operation. Each operation fetches one row by ID
/// inside `perform`; one variant makes a new context for every operation, the other reuses one.
///
/// Both variants cross two threads per operation (into the context's queue and back), which
/// costs far more than the context itself and varies with scheduling ("Fresh contexts: the
/// floor" in `Docs/Benchmarks.md` measures both). So the operations run in pairs of small
/// blocks (fresh, reused, reused, fresh, …: ABBA order), and each pair sees the same conditions.
///
/// Every pair counts: leaving out the slowest pairs was tried, but a tail cost that only one
/// variant has (a queue made, a context freed on the worker) would go out with them.
enum FreshContextWorkload {
    /// Operations per block: small blocks give many pairs, so a stall spoils few operations.
    static let blockSize = 25

    /// Runs every operation once per variant: returns (fresh, reused) nanoseconds for all
    /// operations, and checksums of every operation.
    static func run(
        _ store: StrataStore, _ ids: [ObjectID]
    ) async throws -> (fresh: (UInt64, Checksum), reused: (UInt64, Checksum)) {
        let container = store.container
        let reusedContext = container.newBackgroundContext()
        var fresh = Checksum()
        var reused = Checksum()
        var pairs: [(fresh: UInt64, reused: UInt64)] = []
        pairs.reserveCapacity(ids.count / blockSize + 1)
        var block = 0
        var start = 0
        while start < ids.count {
            let slice = ids[start..<min(start + blockSize, ids.count)]
            var times: (fresh: UInt64, reused: UInt64) = (0, 0)
            // ABBA order: blocks 0 and 3 of every four run fresh first.
            let freshFirst = block % 4 == 0 || block % 4 == 3
            for variant in freshFirst ? [true, false] : [false, true] {
                let began = Clock.now()
                for id in slice {
                    let context = variant ? container.newBackgroundContext() : reusedContext
                    let amount = try await context.perform {
                        try context.existingObject(with: id, as: BenchRow.self).amount
                    }
                    if variant { fresh.add(amount: amount) } else { reused.add(amount: amount) }
                }
                let elapsed = Clock.now() - began
                if variant { times.fresh = elapsed } else { times.reused = elapsed }
            }
            pairs.append(times)
            block += 1
            start += blockSize
        }
        return ((pairs.reduce(0) { $0 + $1.fresh }, fresh), (pairs.reduce(0) { $0 + $1.reused }, reused))
    }
}
