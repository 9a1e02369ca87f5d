/// The mark of a store that `strata copy` is still writing, or stopped writing before it
/// finished: a history cursor the copy sets right after it creates the target and removes once
/// the target is verified. Such a store holds only part of the source's rows; the tool reports
/// it (`strata inspect`, `verify`, and a second copy onto it).
package enum UnfinishedCopy {
    /// The history cursor's name.
    package static let marker = "strata-copy-unfinished"

    /// Whether `engine`'s store carries the mark (false for an engine that keeps no history): as
    /// its open read it (``UnfinishedCopyAtOpen``: SQLite, LMDB and PostgreSQL, with no read or
    /// round trip of its own), else from its cursors (the in-memory engine).
    /// - Throws: the engine's errors from reading its cursors.
    package static func isMarked(_ engine: any StorageEngine) throws -> Bool {
        if let atOpen = engine as? any UnfinishedCopyAtOpen { return atOpen.wasUnfinishedCopyAtOpen }
        guard let history = engine as? any HistoryStore else { return false }
        return try history.historyCursors()[marker] != nil
    }

    /// Closes `engine` and throws when its store carries the mark, so that an application never
    /// works on part of a copy; `location` names the store in the message.
    ///
    /// ```swift
    /// let engine = try configuration.open(schema)
    /// try UnfinishedCopy.refuseOpening(engine, at: configuration.location.path)
    /// ```
    /// - Throws: ``StrataError/notAStore(path:reason:native:)`` for a marked store, and the
    ///   engine's errors from reading its cursors (the engine is closed then too).
    package static func refuseOpening(_ engine: any StorageEngine, at location: String) throws {
        let marked: Bool
        do {
            marked = try isMarked(engine)
        } catch {
            engine.close()
            throw error
        }
        guard marked else { return }
        engine.close()
        throw StrataError.notAStore(
            path: location,
            reason: """
                it is the target of a `strata copy` that has not finished (it stopped, or is still running), so \
                it holds only part of the source's rows; delete it and run the copy again (`strata verify` \
                names it; the mark is the history cursor \(marker))
                """)
    }
}

/// An engine that reads the unfinished-copy mark in its opening transaction, so that checking it
/// takes no read of its own (on LMDB a read of its own takes a reader slot, which changes the
/// lock file around an open that is then refused).
package protocol UnfinishedCopyAtOpen: StorageEngine {
    /// Whether the store carried ``UnfinishedCopy/marker`` when the engine opened it.
    var wasUnfinishedCopyAtOpen: Bool { get }
}
