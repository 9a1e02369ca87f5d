import Foundation
import Testing

@testable import Strata

/// Each `perform` notes the body it was called from, so that a wait through other contexts'
/// bodies is detected. A loop that reschedules itself from inside its own body must not keep
/// every finished call's note alive.
@Suite("perform token chain")
struct PerformTokenChainTests {
    /// Holds the first call's token weakly.
    final class WeakToken: @unchecked Sendable {
        weak var token: PerformToken?
    }

    @Test(
        "a perform loop that reschedules itself from its own body keeps no finished calls alive",
        arguments: EngineKind.allCases)
    func selfReschedulingLoop(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let first = WeakToken()
        let (ended, signal) = AsyncStream<Bool>.makeStream()
        let depth = 30
        // The first call's token is the caller's until its `perform` has returned to it, which on
        // a loaded machine can come after the chain's 30 hops: the last call waits for that.
        let firstReturned = DispatchSemaphore(value: 0)

        @Sendable func iterate(_ remaining: Int) async throws {
            try await context.perform {
                _ = try context.count(for: FetchRequest<Account>())
                if remaining == depth { first.token = context.currentPerform }
                if remaining == 0 {
                    // 30 calls later, the first call has returned: nothing may hold its token.
                    guard firstReturned.wait(timeout: .now() + 60) == .success else {
                        Issue.record("the first call did not return within 60 s")
                        return
                    }
                    signal.yield(first.token == nil)
                    return
                }
                Task { try await iterate(remaining - 1) }
            }
        }
        try await iterate(depth)
        firstReturned.signal()
        var freed: Bool?
        for await value in ended {
            freed = value
            break
        }
        #expect(freed == true, "the first call's token is still alive at the end of the chain")
    }
}
