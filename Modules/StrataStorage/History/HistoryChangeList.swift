import Foundation

/// The changes of a stored history transaction as ``HistoryJSON`` writes them: a JSON array
/// whose entries are single changes (``HistoryChange``'s own coding) or runs,
/// `{"entity":"Row","keys":[7,8,9],"kind":"insert"}`, or ranges of keys,
/// `{"count":3,"entity":"Row","first":7,"kind":"insert"}`, each key one change that keeps no
/// tombstone and names the run's `changedProperties` (none when the run has no such field).
///
/// ```swift
/// let changes = try JSONDecoder().decode(HistoryChangeList.self, from: json).changes
/// ```
package struct HistoryChangeList: Decodable {
    /// The changes, in stored order.
    package var changes: [HistoryChange]

    private enum RunKeys: String, CodingKey { case entity, keys, kind, first, count, changedProperties }

    /// Reads an array of single changes and runs.
    /// - Throws: `DecodingError` for JSON of another shape.
    package init(from decoder: any Decoder) throws {
        var entries = try decoder.unkeyedContainer()
        var changes: [HistoryChange] = []
        if let count = entries.count { changes.reserveCapacity(count) }
        while !entries.isAtEnd {
            let entry = try entries.superDecoder()
            let fields = try entry.container(keyedBy: RunKeys.self)
            if fields.contains(.keys) {
                let entity = try fields.decode(String.self, forKey: .entity)
                let kind = try fields.decode(HistoryChange.Kind.self, forKey: .kind)
                let properties = try fields.decodeIfPresent([String].self, forKey: .changedProperties) ?? []
                for key in try fields.decode([Int64].self, forKey: .keys) {
                    changes.append(HistoryChange(entity: entity, key: key, kind: kind, changedProperties: properties))
                }
            } else if fields.contains(.first) {
                let entity = try fields.decode(String.self, forKey: .entity)
                let kind = try fields.decode(HistoryChange.Kind.self, forKey: .kind)
                let first = try fields.decode(Int64.self, forKey: .first)
                let count = try fields.decode(Int64.self, forKey: .count)
                let properties = try fields.decodeIfPresent([String].self, forKey: .changedProperties) ?? []
                // The last key, first + count - 1, must exist: a run may end at Int64.max.
                let (last, overflow) = first.addingReportingOverflow(count - 1)
                guard count >= 1, count <= Int64(Int32.max), !overflow else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .count, in: fields,
                        debugDescription: "a run of \(count) keys from \(first) is not a range")
                }
                for key in first...last {
                    changes.append(HistoryChange(entity: entity, key: key, kind: kind, changedProperties: properties))
                }
            } else {
                changes.append(try HistoryChange(from: entry))
            }
        }
        self.changes = changes
    }
}
