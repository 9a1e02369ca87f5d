import Strata

/// Workload 6: the cost of a fresh context per operation. Each operation fetches one row by ID
/// inside `perform`; one variant makes a new context for every operation, the other reuses one.
///
/// Both variants cross two threads per operation (into the context's queue and back), which
/// costs far more than the context itself and varies with scheduling. So the operations run in
/// alternating blocks (fresh, reused, reused, fresh, …) and each variant's blocks are summed:
/// both see the same conditions, and the difference is the context's own cost.
enum FreshContextWorkload {
    /// Operations per block.
    static let blockSize = 100

    /// Runs every operation once per variant: returns (fresh, reused) nanoseconds and checksums.
    static func run(_ store: StrataStore, _ ids: [ObjectID]) async throws -> (fresh: (UInt64, Checksum), reused: (UInt64, Checksum)) {
        let container = store.container
        let reusedContext = container.newBackgroundContext()
        var fresh: (time: UInt64, sum: Checksum) = (0, Checksum())
        var reused: (time: UInt64, sum: Checksum) = (0, Checksum())
        var block = 0
        var start = 0
        while start < ids.count {
            let slice = ids[start..<min(start + blockSize, ids.count)]
            // ABBA order: blocks 0 and 3 of every four run fresh first.
            let freshFirst = block % 4 == 0 || block % 4 == 3
            for variant in freshFirst ? [true, false] : [false, true] {
                let began = Clock.now()
                for id in slice {
                    let context = variant ? container.newBackgroundContext() : reusedContext
                    let amount = try await context.perform { try context.existingObject(with: id, as: BenchRow.self).amount }
                    if variant { fresh.sum.add(amount: amount) } else { reused.sum.add(amount: amount) }
                }
                let elapsed = Clock.now() - began
                if variant { fresh.time += elapsed } else { reused.time += elapsed }
            }
            block += 1
            start += blockSize
        }
        return ((fresh.time, fresh.sum), (reused.time, reused.sum))
    }
}
