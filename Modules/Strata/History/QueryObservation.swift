import StrataStorage

extension PersistentContainer {
    /// Observes a query: an `AsyncSequence` that yields `query`'s result now, then again after
    /// every commit (from any process on the store) that could change it, skipping a result
    /// equal to the one before.
    ///
    /// `query` runs inside `perform` on a fresh background context each time, so it may fetch,
    /// count and follow relationships; return `Sendable` values (never objects). A commit can
    /// change the result when it touches an entity the last evaluation read.
    ///
    /// ```swift
    /// let balances = container.observe { context in
    ///     try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map(\.balance)
    /// }
    /// for try await current in balances { print(current) }
    /// ```
    /// - Returns: the sequence. Iterating it throws what `query` throws, `.misuse` for an engine
    ///   without history or a closed container, and the store's errors. Cancelling the iterating
    ///   task ends it.
    public func observe<Value: Sendable & Equatable>(
        _ query: @escaping @Sendable (ObjectContext) throws -> Value
    ) -> QueryObservation<Value> {
        QueryObservation(container: self, start: HistoryStart(nil, container: self), query: query)
    }

    /// Observes a fetch request, mapping its objects to a `Sendable` value inside `perform`;
    /// see ``observe(_:)``.
    ///
    /// ```swift
    /// let names = container.observe(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])) { $0.map(\.name) }
    /// for try await current in names { print(current) }
    /// ```
    public func observe<Entity: ManagedObject, Value: Sendable & Equatable>(
        _ request: FetchRequest<Entity>, map: @escaping @Sendable ([Entity]) throws -> Value
    ) -> QueryObservation<Value> {
        observe { context in try map(try context.fetch(request)) }
    }
}

/// The sequence ``PersistentContainer/observe(_:)`` returns: a query's fresh result after each
/// commit that could change it, consecutive equal results delivered once.
///
/// ```swift
/// for try await count in container.observe({ try $0.count(for: FetchRequest<Account>()) }) { print(count) }
/// ```
public struct QueryObservation<Value: Sendable & Equatable>: AsyncSequence, Sendable {
    /// Each fresh result.
    public typealias Element = Value

    let container: PersistentContainer
    let start: HistoryStart
    let query: @Sendable (ObjectContext) throws -> Value

    /// An iterator that evaluates the query, then waits for commits that touch what it read.
    public func makeAsyncIterator() -> Iterator {
        Iterator(container: container, start: start, query: query)
    }

    /// Evaluates the query when needed; see ``QueryObservation``.
    public struct Iterator: AsyncIteratorProtocol {
        private let container: PersistentContainer
        private let follower: HistoryFollower
        private let query: @Sendable (ObjectContext) throws -> Value
        private var last: Value?
        private var region: Set<String> = []

        init(
            container: PersistentContainer, start: HistoryStart,
            query: @escaping @Sendable (ObjectContext) throws -> Value
        ) {
            self.container = container
            self.follower = HistoryFollower(container: container, start: start, entities: [])
            self.query = query
        }

        /// The next different result; nil once the task is cancelled.
        /// - Throws: see ``PersistentContainer/observe(_:)``.
        public mutating func next() async throws -> Value? {
            do {
                if last == nil {
                    _ = try follower.lastToken
                    let first = try await evaluate()
                    last = first
                    return first
                }
                while let batch = try await follower.nextStoredBatch() {
                    let touches = batch.contains { transaction in
                        transaction.changes.contains { region.contains($0.entity) }
                    }
                    guard touches else { continue }
                    let value = try await evaluate()
                    if value != last {
                        last = value
                        return value
                    }
                }
                return nil
            } catch is CancellationError {
                return nil
            }
        }

        private mutating func evaluate() async throws -> Value {
            let context = container.newBackgroundContext()
            let reads = ReadRegion()
            context.readRegion = reads
            let query = query
            let value = try await context.perform { try query(context) }
            region = reads.entityNames(in: container.schema)
            return value
        }
    }
}
