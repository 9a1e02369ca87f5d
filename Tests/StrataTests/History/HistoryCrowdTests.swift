import Foundation
import Strata
import Testing

/// Many observers on one container: every one of them gets every commit, however many read the
/// store at once (one commit wakes them all together). Serialized: a thousand observer tasks
/// per engine, one engine at a time.
@Suite("history crowd", .serialized, .timeLimit(.minutes(1)))
struct HistoryCrowdTests {
    @Test("a thousand observers of one container each get both commits", arguments: EngineKind.allCases)
    func thousandObservers(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let changes = container.changes()
        let observers = 1000
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: [HistoryToken].self) { group in
            for _ in 0..<observers {
                group.addTask {
                    var iterator = changes.makeAsyncIterator()
                    readyContinuation.yield()
                    var tokens: [HistoryToken] = []
                    while tokens.count < 2, let transaction = try await iterator.next() {
                        tokens.append(transaction.token)
                    }
                    return tokens
                }
            }
            var started = 0
            for await _ in ready {
                started += 1
                if started == observers { break }
            }
            try await HistoryMisuseTests.commit(container, count: 2)
            let expected = try await container.history().map(\.token)
            var finished = 0
            for try await tokens in group {
                #expect(tokens == expected)
                finished += 1
            }
            #expect(finished == observers)
        }
    }
}
