import StrataStorage

extension ObjectContext {
    /// `engine.allocateKeys`, reported as an engine call when the container has a hook.
    func allocateKeys(entity number: Int, count: Int) throws -> Range<Int64> {
        guard let instrumentation else { return try engine.allocateKeys(entity: number, count: count) }
        return try instrumentation.timed(
            .allocateKeys, entity: entityName(number), count: { $0.count },
            {
                try engine.allocateKeys(entity: number, count: count)
            })
    }

    /// Runs `commit` (the save's engine commit), reported as an engine call when the container
    /// has a hook; returns its duration then, nil without a hook.
    func timedCommit(_ commit: () throws -> Void) throws -> Duration? {
        guard let instrumentation else {
            try commit()
            return nil
        }
        let start = ContinuousClock.now
        try instrumentation.timed(.commit, entity: nil, commit)
        return .now - start
    }

    /// Reports a save's successful commit of `changes`.
    func reportCommit(_ changes: ChangeSet, duration: Duration, retriedCommits: Int, to hook: Instrumentation) {
        // Counted per entity number (an array), named once per entity at the end. Every row of a
        // change set names an entity of this context's schema.
        var counts = [StrataEvent.RowCounts](repeating: .init(), count: schema.models.count)
        for row in changes.inserts where row.entity < counts.count { counts[row.entity].inserted += 1 }
        for row in changes.updates where row.entity < counts.count { counts[row.entity].updated += 1 }
        for row in changes.deletes where row.entity < counts.count { counts[row.entity].deleted += 1 }
        var byEntity: [String: StrataEvent.RowCounts] = [:]
        for (number, rows) in counts.enumerated() where rows != .init() { byEntity[schema.models[number].name] = rows }
        hook.emit(
            .commit(
                .init(
                    inserted: changes.inserts.count, updated: changes.updates.count, deleted: changes.deletes.count,
                    touched: changes.touches.count, linked: changes.links.count, unlinked: changes.unlinks.count,
                    setWrites: changes.setWrites.count, byEntity: byEntity, duration: duration,
                    retriedCommits: retriedCommits)))
    }

    /// The name of entity `number`, or its number as text for one the schema does not list.
    func entityName(_ number: Int) -> String {
        number >= 0 && number < schema.models.count ? schema.models[number].name : "#\(number)"
    }
}
