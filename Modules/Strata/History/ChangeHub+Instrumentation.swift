import StrataStorage

extension ChangeHub {
    /// Runs `body` on the engine, reported as the engine call `operation` when the container has
    /// a hook.
    func timed<T>(_ operation: StrataEvent.EngineOperation, _ body: (any HistoryStore) throws -> T) throws -> T {
        let engine = self.engine
        guard let instrumentation else { return try body(engine) }
        return try instrumentation.timed(operation, entity: nil) { try body(engine) }
    }

    /// Deletes the history before `token` (see ``PersistentContainer/deleteHistory(before:force:)``)
    /// and, when the container has a hook, reports the engine call and the trim.
    func trimHistory(before token: Int64, force: Bool) throws -> Int64 {
        guard let instrumentation else { return try engine.deleteHistory(before: token, force: force) }
        let start = ContinuousClock.now
        let bound = try timed(.historyTrim) { try $0.deleteHistory(before: token, force: force) }
        instrumentation.emit(
            .historyTrimmed(.init(requestedBefore: token, keptFrom: bound, forced: force, duration: .now - start)))
        return bound
    }
}
