extension PersistentContainer {
    /// Opens (creating if needed) the store, like ``init(schema:engine:recordsHistory:)``, with a
    /// hook that receives the container's events (see ``Instrumentation`` and ``StrataEvent``).
    ///
    /// ```swift
    /// let hook = Instrumentation { event in
    ///     if case .engineCall(let call) = event, call.duration > .milliseconds(100) {
    ///         print("slow \(call.operation) on \(call.entity ?? "the store"): \(call.duration)")
    ///     }
    /// }
    /// let container = try PersistentContainer(schema: schema, engine: .sqlite(at: url), instrumentation: hook)
    /// ```
    ///
    /// Lifetime rule: the hook serves this container and every context it makes until the last
    /// of them is released; it is called synchronously after each event, from any thread.
    /// - Parameters:
    ///   - schema: the model classes and version.
    ///   - engine: the engine and location, e.g. `.sqlite(at: url)` or `.lmdb(at: url)`.
    ///   - recordsHistory: whether saves append persistent history (on by default).
    ///   - instrumentation: the hook; nil reports nothing (as the other initializers do).
    /// - Throws: everything ``init(schema:engine:recordsHistory:)`` throws.
    public convenience init(
        schema: Schema, engine: EngineConfiguration, recordsHistory: Bool = true, instrumentation: Instrumentation?
    ) throws {
        try self.init(
            schema: schema, migrationPlan: nil, engine: engine, progress: nil, recordsHistory: recordsHistory,
            instrumentation: instrumentation)
    }
}
