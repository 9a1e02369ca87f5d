import Foundation
import StrataStorage
import Testing

@testable import StrataTool

/// The tool reads history in pages sized by the transactions it has seen, so that a history of a
/// few huge transactions (a batch import) is held one transaction at a time.
@Suite("Tool: history paging")
struct ToolHistoryPagingTests {
    static func page(_ sizes: [Int]) -> [HistoryTransaction] {
        sizes.enumerated().map { index, size in
            HistoryTransaction(
                token: Int64(index + 1), timestamp: Date(timeIntervalSince1970: 0), author: nil,
                changes: (0..<size).map {
                    HistoryChange(entity: "Entry", key: Int64($0 + 1), kind: .insert, changedProperties: [])
                })
        }
    }

    @Test("pages hold about 50,000 changes: huge transactions one at a time, small ones a thousand at a time")
    func pageSizes() {
        #expect(OpenedStore.nextPageSize(after: Self.page([100_000])) == 1)
        #expect(OpenedStore.nextPageSize(after: Self.page([50_000, 50_000])) == 1)
        #expect(OpenedStore.nextPageSize(after: Self.page([1_000])) == 50)
        #expect(OpenedStore.nextPageSize(after: Self.page([2, 3, 1])) == 1_000)
        #expect(OpenedStore.nextPageSize(after: Self.page([0])) == 1_000)
        #expect(OpenedStore.nextPageSize(after: []) == 1_000)
    }
}
