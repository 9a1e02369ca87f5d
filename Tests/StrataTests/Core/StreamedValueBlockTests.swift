import Foundation
import Testing

@testable import Strata

/// `forEachBatch` keeps a batch's values in shared blocks (`DetachedValues`), on every engine. A
/// block must go with its batch: an object still held after its batch (changed, so the context
/// keeps it; or kept by the caller) gets values of its own, or one object per batch would keep
/// every block, and with them the whole result, in memory.
@Suite("streamed batches free their value blocks")
struct StreamedValueBlockTests {
    @Test(
        "a block goes with its batch, though one of its objects is changed and another kept",
        arguments: EngineKind.allCases)
    func blocksGoWithTheirBatch(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        try await container.performUnitOfWork { context in
            try context.batchInsert(Account.self, from: 0..<300) { index, row in
                row[\.name] = "a\(index)"
                row[\.balance] = Int64(index)
            }
            try context.save()
        }
        let context = container.newBackgroundContext()
        let (blocksLeft, values) = try await context.perform {
            var blocks: [WeakBlock] = []
            var kept: [Account] = []
            try context.forEachBatch(of: FetchRequest<Account>(), size: 100) { accounts in
                // accounts[0] is left alone: it goes with the batch, and its block with it.
                blocks.append(WeakBlock(accounts[0].detachedValues))
                accounts[1].balance += 1_000
                kept.append(accounts[2])
            }
            let left = blocks.filter { $0.block != nil }.count
            let changed = try context.fetch(FetchRequest<Account>(predicate: #Predicate { $0.balance >= 1_000 }))
            let values = (changed + kept).map { "\($0.name)=\($0.balance)" }.sorted()
            try context.save()
            return (left, values)
        }
        #expect(blocksLeft == 0, "blocks kept alive after their batches: \(blocksLeft) of 3")
        #expect(
            values == ["a1=1001", "a101=1101", "a102=102", "a2=2", "a201=1201", "a202=202"].sorted(),
            "the changed and kept objects' values, read after their blocks went")
    }

    /// A weak reference to a block, to see whether it was freed.
    struct WeakBlock {
        weak var block: DetachedValues?
        init(_ block: DetachedValues?) { self.block = block }
    }
}
