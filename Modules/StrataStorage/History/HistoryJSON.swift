import Foundation

/// The JSON of history entries, written by hand for the engines' append.
///
/// `JSONEncoder` cost about 65,000 instructions per ``HistoryChange`` (its generic containers,
/// a dictionary per object, key sorting), three times what the rest of an insert costs; see
/// `Docs/Benchmarks.md`, workload 10. This writes the same JSON that `JSONEncoder` with
/// `.sortedKeys` writes (slashes unescaped) for each single change, which `JSONDecoder` reads
/// back unchanged:
///
/// ```swift
/// let bytes = try HistoryJSON.encode(changes)
/// // [{"changedProperties":["amount"],"entity":"Row","key":7,"kind":"update","tombstone":{}}]
/// ```
///
/// Consecutive changes of one entity and kind that name the same properties and keep no
/// tombstone are written as one run, `{"entity":"Row","keys":[7,8,9],"kind":"insert"}` (the
/// objects of a bulk insert, whose properties the reader lists from the model) or
/// `{"changedProperties":["amount"],"entity":"Row","keys":[7,9],"kind":"update"}` (objects whose
/// save changed the same attributes), which ``HistoryChangeList`` reads back as one change per
/// key: a bulk save's history costs little more than its keys (a save updating one attribute of
/// 10,000 objects wrote about 1 MB as single changes, and writes about 55 KB as a run).
///
/// Tombstones (only deletes of entities with `.preserveAfterDeletion` attributes have them)
/// still go through `JSONEncoder`, so ``RecordedValue``'s encoding stays in one place.
package enum HistoryJSON {
    /// `changes` as a JSON array.
    /// - Throws: `EncodingError` when a tombstone value does not encode (as `JSONEncoder` would).
    package static func encode(_ changes: [HistoryChange]) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(changes.count * 128 + 2)
        try append(changes, keyRuns: [], to: &out)
        return out
    }

    /// A record's changes and key runs as one JSON array: its changes as ``encode(_:)`` writes
    /// them, then each run of keys (``appendKeyRun(_:to:)``).
    /// - Throws: as ``encode(_:)``.
    package static func encode(_ record: HistoryRecord) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(record.changes.count * 128 + record.keyRuns.count * 64 + 2)
        try append(record.changes, keyRuns: record.keyRuns, to: &out)
        return out
    }

    /// `transaction` as a JSON object with the keys `author` (left out when nil), `changes`,
    /// `timestamp` (seconds since 2001, `Date`'s own encoding) and `token`.
    /// - Throws: as ``encode(_:)``.
    package static func encode(_ transaction: HistoryTransaction, keyRuns: [HistoryKeyRun] = []) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(transaction.changes.count * 128 + 80)
        out.append(UInt8(ascii: "{"))
        if let author = transaction.author {
            out.append(contentsOf: #""author":"#.utf8)
            appendString(author, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""changes":"#.utf8)
        try append(transaction.changes, keyRuns: keyRuns, to: &out)
        out.append(contentsOf: #","timestamp":"#.utf8)
        out.append(contentsOf: String(transaction.timestamp.timeIntervalSinceReferenceDate).utf8)
        out.append(contentsOf: #","token":"#.utf8)
        appendInteger(transaction.token, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func append(
        _ changes: [HistoryChange], keyRuns: [HistoryKeyRun], to out: inout [UInt8]
    ) throws {
        out.append(UInt8(ascii: "["))
        var index = 0
        while index < changes.count {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            let end = runEnd(changes, from: index)
            if end - index >= 2 {
                appendRun(changes[index..<end], to: &out)
                index = end
            } else {
                try appendChange(changes[index], to: &out)
                index += 1
            }
        }
        var first = changes.isEmpty
        for run in keyRuns where !run.keys.isEmpty {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            appendKeyRun(run, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Where the run of changes starting at `start` ends: following changes of one entity and
    /// kind that name the same properties and keep no tombstone (a bulk insert's or delete's
    /// objects, or objects whose save changed the same attributes).
    private static func runEnd(_ changes: [HistoryChange], from start: Int) -> Int {
        let first = changes[start]
        guard first.tombstone.isEmpty else { return start + 1 }
        var end = start + 1
        while end < changes.count, changes[end].kind == first.kind, changes[end].tombstone.isEmpty,
            changes[end].entity == first.entity, changes[end].changedProperties == first.changedProperties
        {
            end += 1
        }
        return end
    }

    /// A run of changes as one entry: `{"entity":…,"keys":[…],"kind":…}`, one change per key, led
    /// by `"changedProperties":[…]` when the run's changes name properties.
    private static func appendRun(_ run: ArraySlice<HistoryChange>, to out: inout [UInt8]) {
        let first = run[run.startIndex]
        out.append(UInt8(ascii: "{"))
        if !first.changedProperties.isEmpty {
            out += Literal.runProperties
            appendNames(first.changedProperties, to: &out)
            out += Literal.runPropertiesEnd
        }
        out += Literal.listEntity
        appendString(first.entity, to: &out)
        out += Literal.runKeys
        var firstKey = true
        for change in run {
            if !firstKey { out.append(UInt8(ascii: ",")) }
            firstKey = false
            appendInteger(change.key, to: &out)
        }
        switch first.kind {
        case .insert: out += Literal.runInsert
        case .update: out += Literal.runUpdate
        case .delete: out += Literal.runDelete
        }
    }

    /// A record's run of keys: `{"count":3,"entity":"Row","first":7,"kind":"insert"}` when the keys
    /// are consecutive, `{"entity":"Row","keys":[7,9],"kind":"delete"}` otherwise; an update's run
    /// leads with `"changedProperties":[…]`.
    private static func appendKeyRun(_ run: HistoryKeyRun, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        if !run.changedProperties.isEmpty {
            out += Literal.runProperties
            appendNames(run.changedProperties, to: &out)
            out += Literal.runPropertiesEnd
        }
        if run.isConsecutive {
            out += Literal.rangeCount
            appendInteger(Int64(run.keys.count), to: &out)
            out += Literal.rangeEntity
            appendString(run.entity, to: &out)
            out += Literal.rangeFirst
            appendInteger(run.keys[0], to: &out)
            out.append(UInt8(ascii: ","))
        } else {
            out += Literal.listEntity
            appendString(run.entity, to: &out)
            out += Literal.runKeys
            for (index, key) in run.keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendInteger(key, to: &out)
            }
            out += Literal.listKeysEnd
        }
        switch run.kind {
        case .insert: out += Literal.rangeInsert
        case .update: out += Literal.rangeUpdate
        case .delete: out += Literal.rangeDelete
        }
    }

    /// Names as JSON strings separated by commas (the inside of an array).
    private static func appendNames(_ names: [String], to out: inout [UInt8]) {
        for (index, name) in names.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(name, to: &out)
        }
    }

    private static func appendChange(_ change: HistoryChange, to out: inout [UInt8]) throws {
        out += Literal.changedProperties
        appendNames(change.changedProperties, to: &out)
        out += Literal.entity
        appendString(change.entity, to: &out)
        out += Literal.key
        appendInteger(change.key, to: &out)
        switch change.kind {
        case .insert: out += Literal.insert
        case .update: out += Literal.update
        case .delete: out += Literal.delete
        }
        if change.tombstone.isEmpty {
            out += Literal.emptyTombstone
        } else {
            out += Literal.tombstone
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            out.append(contentsOf: try encoder.encode(change.tombstone))
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The fixed parts of a change, as bytes (appending an array is one copy; appending a
    /// string's UTF-8 view goes byte by byte).
    private enum Literal {
        static let changedProperties = Array(#"{"changedProperties":["#.utf8)
        static let entity = Array(#"],"entity":"#.utf8)
        static let key = Array(#","key":"#.utf8)
        static let insert = Array(#","kind":"insert","#.utf8)
        static let update = Array(#","kind":"update","#.utf8)
        static let delete = Array(#","kind":"delete","#.utf8)
        static let emptyTombstone = Array(#""tombstone":{}}"#.utf8)
        static let tombstone = Array(#""tombstone":"#.utf8)
        static let runKeys = Array(#","keys":["#.utf8)
        static let runInsert = Array(#"],"kind":"insert"}"#.utf8)
        static let runUpdate = Array(#"],"kind":"update"}"#.utf8)
        static let runDelete = Array(#"],"kind":"delete"}"#.utf8)
        static let runProperties = Array(#""changedProperties":["#.utf8)
        static let runPropertiesEnd = Array(#"],"#.utf8)
        static let rangeCount = Array(#""count":"#.utf8)
        static let rangeEntity = Array(#","entity":"#.utf8)
        static let rangeFirst = Array(#","first":"#.utf8)
        static let listEntity = Array(#""entity":"#.utf8)
        static let listKeysEnd = Array(#"],"#.utf8)
        static let rangeInsert = Array(#""kind":"insert"}"#.utf8)
        static let rangeUpdate = Array(#""kind":"update"}"#.utf8)
        static let rangeDelete = Array(#""kind":"delete"}"#.utf8)
    }

    /// `value` in decimal.
    private static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let start = out.count
        for _ in 0..<digits { out.append(UInt8(ascii: "0")) }
        rest = magnitude
        for index in stride(from: start + digits - 1, through: start, by: -1) {
            out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }

    /// Whether `string` holds a byte JSON needs escaped: a quote, a backslash or a control character.
    private static func needsEscaping(_ string: String) -> Bool {
        let bytes = string.utf8.span
        for index in bytes.indices {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
        }
        return false
    }

    /// `string` as a JSON string: quotes, backslashes and control characters escaped.
    private static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let utf8 = string.utf8
        if !needsEscaping(string) {
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
