/// Consecutive keys of one entity that one commit inserted, updated or deleted, with no property
/// named and no tombstone: a batch insert's rows, say. A ``HistoryRecord`` carries them as ranges
/// (``HistoryRecord/keyRuns``) so that a save of a million rows neither builds a million
/// ``HistoryChange`` values nor writes a million keys; readers get one change per key.
///
/// ```swift
/// var record = HistoryRecord(author: "importer", changes: [])
/// record.keyRuns = [HistoryKeyRun(entity: "Entry", kind: .insert, keys: 101..<1_101)]
/// record.allChanges.count  // 1000
/// ```
public struct HistoryKeyRun: Sendable, Hashable {
    /// The entity's name.
    public var entity: String
    /// What happened to every key.
    public var kind: HistoryChange.Kind
    /// The keys, ascending.
    public var keys: Range<Int64>

    /// A run.
    public init(entity: String, kind: HistoryChange.Kind, keys: Range<Int64>) {
        self.entity = entity
        self.kind = kind
        self.keys = keys
    }

    /// The runs of consecutive keys in `keys` (in their order: a key that does not follow the one
    /// before starts a new run).
    public static func runs(of keys: [Int64], entity: String, kind: HistoryChange.Kind) -> [HistoryKeyRun] {
        var runs: [HistoryKeyRun] = []
        var index = 0
        while index < keys.count {
            let first = keys[index]
            var end = index + 1
            while end < keys.count, keys[end - 1] < Int64.max, keys[end] == keys[end - 1] + 1 { end += 1 }
            runs.append(HistoryKeyRun(entity: entity, kind: kind, keys: first..<(keys[end - 1] + 1)))
            index = end
        }
        return runs
    }

    /// One change per key.
    public var changes: [HistoryChange] {
        keys.map { HistoryChange(entity: entity, key: $0, kind: kind, changedProperties: []) }
    }
}
