import Foundation
import Strata

/// Persistent history and observation (issue 15): history is atomic with the data and names
/// what each save did; observers receive every commit exactly once and in order, from this
/// process and another; trimming respects cursors; tombstones; query observation; cancellation;
/// merging history into a long-lived context.
enum HistoryChecks {
    static let group = "History and observation"

    static let all: [ConformanceCheck] =
        HistoryAtomicityChecks.all + HistoryContentChecks.all + HistoryDeliveryChecks.all + HistoryTrimmingChecks.all
        + HistoryTombstoneChecks.all + HistoryQueryChecks.all + HistoryMergeChecks.all + HistoryProcessChecks.all
        + HistoryPagingChecks.all + HistoryCursorSaveChecks.all
}

extension ConformanceHarness {
    /// The value of `task`, failing the check when it has not finished within `limit`: a guard
    /// against a hang (a stuck observer would otherwise stall the whole run), not a speed
    /// requirement. A task that runs too long is cancelled.
    func value<T: Sendable>(
        of task: Task<T, any Error>, _ what: @autoclosure () -> String, within limit: Duration = .seconds(120),
        file: String = #fileID, line: Int = #line
    ) async throws -> T {
        let done = Task<Bool, any Error> {
            _ = try? await task.value
            return true
        }
        guard await ConcurrencyChecks.finishes(done, within: limit) else {
            task.cancel()
            throw fail("\(what()) did not finish within \(limit): something is stuck", file: file, line: line)
        }
        return try await task.value
    }

    /// Starts receiving `count` transactions from `changes` (fewer when the sequence ends first).
    func receive(_ count: Int, from changes: HistoryChanges) -> Task<[PersistentHistoryTransaction], any Error> {
        Task {
            var received: [PersistentHistoryTransaction] = []
            guard count > 0 else { return received }
            for try await transaction in changes {
                received.append(transaction)
                if received.count == count { break }
            }
            return received
        }
    }

    /// Fails unless the tokens strictly increase.
    func expectIncreasing(
        _ transactions: [PersistentHistoryTransaction], _ what: String, file: String = #fileID, line: Int = #line
    ) throws {
        let tokens = transactions.map(\.token.rawValue)
        for (earlier, later) in zip(tokens, tokens.dropFirst()) where later <= earlier {
            throw fail(
                "\(what): token \(later) follows \(earlier); tokens must strictly increase", file: file, line: line)
        }
    }
}

extension PersistentHistoryTransaction {
    /// The transaction's changes as comparable text, `Entity#key kind [properties]`, sorted.
    var summary: [String] {
        changes.map { "\($0.objectID.label) \($0.kind) \($0.changedProperties.sorted())" }.sorted()
    }
}

extension ObjectID {
    /// `Entity#key`, as in ``PersistentHistoryTransaction/summary``.
    var label: String { "\(entityName)#\(primaryKey.map(String.init) ?? "?")" }
}
