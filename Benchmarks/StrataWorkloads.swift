import Foundation
import Glibc
import Strata

/// Workloads 1–5 on a Strata store: each runs whole inside one `perform` of a fresh context,
/// the way an application would write it.
enum StrataWorkloads {
    /// 1. Inserts every row in one context and saves once. Each row refers to its account.
    static func insert(_ store: StrataStore, _ data: Dataset) async throws -> UInt64 {
        try await timedInFreshContext(store) { context in
            let accounts = try context.fetch(FetchRequest<BenchAccount>())
            guard accounts.count == Dataset.accountCount else {
                throw BenchmarkError.mismatch("expected \(Dataset.accountCount) accounts, found \(accounts.count)")
            }
            for i in 0..<data.rowCount {
                let row = BenchRow(context: context)
                row.amount = data.amounts[i]
                row.memo = data.memos[i]
                row.date = Date(timeIntervalSinceReferenceDate: data.dates[i])
                row.account = accounts[Int(data.accounts[i] - 1)]
            }
            try context.save()
        }.nanoseconds
    }

    /// 2. Fetches every row into managed objects and reads every attribute.
    static func fetchAll(_ store: StrataStore) async throws -> (UInt64, Checksum?) {
        try await timedInFreshContext(store) { context in
            var sum = Checksum()
            for row in try context.fetch(FetchRequest<BenchRow>()) {
                sum.add(amount: row.amount, memo: row.memo, date: row.date.timeIntervalSinceReferenceDate)
            }
            return sum
        }
    }

    /// 3. Looks every row up by object ID, in one context, and reads its amount.
    static func lookup(_ store: StrataStore, _ ids: [ObjectID]) async throws -> (UInt64, Checksum?) {
        try await timedInFreshContext(store) { context in
            var sum = Checksum()
            for id in ids { sum.add(amount: try context.existingObject(with: id, as: BenchRow.self).amount) }
            return sum
        }
    }

    /// 4. Fetches each amount window (1% of the rows, through the amount index), newest first,
    /// and reads each amount.
    static func predicate(_ store: StrataStore, _ windows: [Range<Int64>]) async throws -> (UInt64, Checksum?) {
        try await timedInFreshContext(store) { context in
            var sum = Checksum()
            for window in windows {
                let low = window.lowerBound
                let high = window.upperBound
                let request = FetchRequest<BenchRow>(
                    predicate: #Predicate { $0.amount >= low && $0.amount < high },
                    sortBy: [SortDescriptor(\.date, order: .reverse)])
                for row in try context.fetch(request) { sum.add(amount: row.amount) }
            }
            return sum
        }
    }

    /// 5. Fetches every account, faults in its to-many relationship and reads each amount. The
    /// first fault loads the relationship for every account of the fetch (batch faulting).
    static func toMany(_ store: StrataStore) async throws -> (UInt64, Checksum?) {
        try await timedInFreshContext(store) { context in
            var sum = Checksum()
            for account in try context.fetch(FetchRequest<BenchAccount>()) {
                for row in account.rows { sum.add(amount: row.amount) }
            }
            return sum
        }
    }

    /// 13. Workload 5 with the relationship prefetched by the fetch
    /// (`relationshipKeyPathsForPrefetching`) instead of faulted on the first account.
    static func toManyPrefetched(_ store: StrataStore) async throws -> (UInt64, Checksum?) {
        try await timedInFreshContext(store) { context in
            var sum = Checksum()
            let request = FetchRequest<BenchAccount>(relationshipKeyPathsForPrefetching: [\.rows])
            for account in try context.fetch(request) {
                for row in account.rows { sum.add(amount: row.amount) }
            }
            return sum
        }
    }

    /// Times one unit of work: a fresh context, `body` inside its `perform`, and the context's
    /// teardown, so an operation's clock stops only once its objects are freed (the raw
    /// baselines free their rows inside the clock too).
    ///
    /// The queue that ran `body` may still hold the context for an instant after the caller
    /// resumes; waiting for it makes the teardown happen here, inside the clock, instead of on
    /// that worker thread while the next measurement runs.
    static func timedInFreshContext<T: Sendable>(
        _ store: StrataStore, _ body: @escaping @Sendable (ObjectContext) throws -> T
    ) async throws -> (nanoseconds: UInt64, value: T) {
        try await Clock.time {
            var context: ObjectContext? = store.container.newBackgroundContext()
            let value = try await perform(body, in: context!)
            while !isKnownUniquelyReferenced(&context) { sched_yield() }
            context = nil
            return value
        }
    }

    private static func perform<T: Sendable>(
        _ body: @escaping @Sendable (ObjectContext) throws -> T, in context: ObjectContext
    ) async throws -> T {
        try await context.perform { try body(context) }
    }
}
