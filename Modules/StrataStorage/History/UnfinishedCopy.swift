/// The mark of a store that `strata copy` is still writing, or stopped writing before it
/// finished: a history cursor the copy sets right after it creates the target and removes once
/// the target is verified. Such a store holds only part of the source's rows; the tool reports
/// it (`strata inspect`, `verify`, and a second copy onto it).
package enum UnfinishedCopy {
    /// The history cursor's name.
    package static let marker = "strata-copy-unfinished"

    /// Whether `engine`'s store carries the mark (false for an engine that keeps no history).
    /// - Throws: the engine's errors from reading its cursors.
    package static func isMarked(_ engine: any StorageEngine) throws -> Bool {
        guard let history = engine as? any HistoryStore else { return false }
        return try history.historyCursors()[marker] != nil
    }
}
