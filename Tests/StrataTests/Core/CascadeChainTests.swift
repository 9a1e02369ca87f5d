import Foundation
import Strata
import Testing

/// A node whose children cascade: a chain of them is a cascade as deep as the chain.
final class CascadeChainNode: ManagedObject {
    @Attribute var depth: Int64 = 0
    @Relationship(inverse: \CascadeChainNode.parent, deleteRule: .cascade) var children:
        RelatedObjects<CascadeChainNode>
    @Relationship var parent: CascadeChainNode?
}

/// Deleting the root of a 5,000-deep cascade chain deletes every node in one save. Each step
/// faults a to-many while the context's deleted list grows; that check used to rescan the whole
/// list per fault, so the save took time quadratic in the depth (10 s at 10,000 nodes, found by
/// an outside-in probe). The time is printed, not asserted (`Docs/Benchmarks.md` holds figures).
@Suite("cascade chains")
struct CascadeChainTests {
    static let depth = 5_000

    @Test("deleting the root of a 5,000-deep cascade chain deletes every node", arguments: EngineKind.allCases)
    func deepCascade(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open(schema: try Schema([CascadeChainNode.self]))
        defer { container.close() }
        let builder = container.newBackgroundContext()
        try await builder.perform {
            var parent = CascadeChainNode(context: builder)
            for depth in 1..<Int64(Self.depth) {
                let node = CascadeChainNode(context: builder)
                node.depth = depth
                node.parent = parent
                parent = node
            }
            try builder.save()
        }
        let context = container.newBackgroundContext()
        let start = ContinuousClock.now
        let left = try await context.perform {
            let root = try context.fetch(FetchRequest<CascadeChainNode>(predicate: #Predicate { $0.depth == 0 }))
            context.delete(try #require(root.first))
            try context.save()
            return try context.count(for: FetchRequest<CascadeChainNode>())
        }
        print("cascade chain \(kind): \(Self.depth) nodes deleted in one save in \(ContinuousClock.now - start)")
        #expect(left == 0)
    }
}
