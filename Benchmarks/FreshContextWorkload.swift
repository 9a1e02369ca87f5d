import Strata

/// Workload 6: the cost of a fresh context per operation. Each operation fetches one row by
/// ID inside `perform`; one variant makes a new context for every operation, the other reuses one.
enum FreshContextWorkload {
    /// Every operation in its own new context.
    static func fresh(_ store: StrataStore, _ ids: [ObjectID]) async throws -> (UInt64, Checksum?) {
        let container = store.container
        let (time, sum) = try await Clock.time {
            var sum = Checksum()
            for id in ids {
                let context = container.newBackgroundContext()
                let current = sum
                sum = try await context.perform {
                    var next = current
                    StrataWorkloads.touch(try context.existingObject(with: id, as: BenchRow.self), &next)
                    return next
                }
            }
            return sum
        }
        return (time, sum)
    }

    /// Every operation in one reused context.
    static func reused(_ store: StrataStore, _ ids: [ObjectID]) async throws -> (UInt64, Checksum?) {
        let context = store.container.newBackgroundContext()
        let (time, sum) = try await Clock.time {
            var sum = Checksum()
            for id in ids {
                let current = sum
                sum = try await context.perform {
                    var next = current
                    StrataWorkloads.touch(try context.existingObject(with: id, as: BenchRow.self), &next)
                    return next
                }
            }
            return sum
        }
        return (time, sum)
    }
}
