import Foundation
import Strata

/// Workloads 1–5 on a Strata store: each runs whole inside one `perform` of a fresh context,
/// the way an application would write it. The clock covers making the context and letting it
/// go, since an operation is not over before its objects are freed (the raw baselines free
/// their rows inside the clock too).
enum StrataWorkloads {
    /// 1. Inserts every row in one context and saves once. Each row refers to its account.
    static func insert(_ store: StrataStore, _ data: Dataset) async throws -> UInt64 {
        try await Clock.time {
            let context = store.container.newBackgroundContext()
            try await context.perform {
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
            }
        }.nanoseconds
    }

    /// 2. Fetches every row into managed objects and reads every attribute.
    static func fetchAll(_ store: StrataStore) async throws -> (UInt64, Checksum?) {
        let (time, sum) = try await Clock.time {
            let context = store.container.newBackgroundContext()
            return try await context.perform {
                var sum = Checksum()
                for row in try context.fetch(FetchRequest<BenchRow>()) { touch(row, &sum) }
                return sum
            }
        }
        return (time, sum)
    }

    /// 3. Looks every row up by object ID, in one context, and reads its amount.
    static func lookup(_ store: StrataStore, _ ids: [ObjectID]) async throws -> (UInt64, Checksum?) {
        let (time, sum) = try await Clock.time {
            let context = store.container.newBackgroundContext()
            return try await context.perform {
                var sum = Checksum()
                for id in ids { sum.add(amount: try context.existingObject(with: id, as: BenchRow.self).amount) }
                return sum
            }
        }
        return (time, sum)
    }

    /// 4. Fetches each amount window (1% of the rows, through the amount index), newest first,
    /// and reads each amount.
    static func predicate(_ store: StrataStore, _ windows: [Range<Int64>]) async throws -> (UInt64, Checksum?) {
        let (time, sum) = try await Clock.time {
            let context = store.container.newBackgroundContext()
            return try await context.perform {
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
        return (time, sum)
    }

    /// 5. Fetches every account, faults in its to-many relationship and reads each amount.
    static func toMany(_ store: StrataStore) async throws -> (UInt64, Checksum?) {
        let (time, sum) = try await Clock.time {
            let context = store.container.newBackgroundContext()
            return try await context.perform {
                var sum = Checksum()
                for account in try context.fetch(FetchRequest<BenchAccount>()) {
                    for row in account.rows { sum.add(amount: row.amount) }
                }
                return sum
            }
        }
        return (time, sum)
    }

    @inline(__always)
    static func touch(_ row: BenchRow, _ sum: inout Checksum) {
        sum.add(amount: row.amount, memo: row.memo, date: row.date.timeIntervalSinceReferenceDate)
    }
}
