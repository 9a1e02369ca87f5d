/// Keys of one entity that one commit inserted, updated (the same properties for each) or deleted
/// (with no tombstone): a batch insert's rows, or a batch update's. A ``HistoryRecord`` carries
/// them as one value (``HistoryRecord/keyRuns``), so that a save of a million rows neither builds
/// a million ``HistoryChange`` values nor writes a million changes; the engine stores the keys as
/// one range when they are consecutive, else as one list, and readers get one change per key.
///
/// ```swift
/// var record = HistoryRecord(author: "importer", changes: [])
/// record.keyRuns = [HistoryKeyRun(entity: "Entry", kind: .insert, keys: Array(101..<1_101))]
/// record.allChanges.count  // 1000
/// ```
public struct HistoryKeyRun: Sendable, Hashable {
    /// The entity's name.
    public var entity: String
    /// What happened to every key.
    public var kind: HistoryChange.Kind
    /// For updates, the properties changed for every key; empty otherwise.
    public var changedProperties: [String]
    /// The keys.
    public var keys: [Int64]

    /// A run.
    public init(entity: String, kind: HistoryChange.Kind, changedProperties: [String] = [], keys: [Int64]) {
        self.entity = entity
        self.kind = kind
        self.changedProperties = changedProperties
        self.keys = keys
    }

    /// Whether the keys ascend one by one (stored as a range).
    public var isConsecutive: Bool {
        guard let first = keys.first, let last = keys.last else { return false }
        let (span, overflow) = last.subtractingReportingOverflow(first)
        guard !overflow, span == Int64(keys.count - 1) else { return false }
        for index in keys.indices.dropFirst() where keys[index] != keys[index - 1] &+ 1 { return false }
        return true
    }

    /// One change per key.
    public var changes: [HistoryChange] {
        keys.map { HistoryChange(entity: entity, key: $0, kind: kind, changedProperties: changedProperties) }
    }
}
