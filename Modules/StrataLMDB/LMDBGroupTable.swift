/// The distinct group keys an aggregate meets (``RowFields``), numbered in the order they come:
/// an open-addressed hash table. A key of up to 16 bytes (an integer, a short text) is kept,
/// hashed and compared as two words (``GroupKey/words``); a longer one as bytes, kept one
/// after another in one buffer. A key equal to the last one found is found without hashing.
///
/// ```swift
/// var table = LMDBGroupTable()
/// let key = try fields.read(value, key: rowKey)
/// let (group, isNew) = table.group(words: key.words, length: key.length)
/// ```
struct LMDBGroupTable {
    /// One key: its words when it has at most 16 bytes, its length, its hash and, when longer,
    /// where it ends in ``keys``.
    private struct Entry {
        var words: (UInt64, UInt64)
        var length: Int
        var hash: UInt64
        var end: Int
    }

    /// Every key of more than 16 bytes, one after another.
    private let keys = ByteBuffer(capacity: 256)
    private var entries: [Entry] = []
    /// Group numbers, or -1 for an empty slot; a power of two long, at most half full.
    private var slots = [Int](repeating: -1, count: 16)
    /// The group found or added last.
    private var last = -1
    /// This table's hash seed, so that which keys collide differs from table to table.
    private let seed = UInt64.random(in: .min ... .max)

    /// The number of distinct keys.
    var count: Int { entries.count }

    /// The number of the group whose key has `length` bytes, at most 16, that read as `words` (two
    /// little-endian words, zeros past the key's end); added with the next number when there is
    /// none (`isNew`).
    @inline(__always)
    mutating func group(words: (UInt64, UInt64), length: Int) -> (number: Int, isNew: Bool) {
        if last >= 0 {
            let entry = entries[last]
            if entry.length == length && entry.words == words { return (last, false) }
        }
        let hash = Self.hash(words, length, seed)
        let mask = slots.count &- 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let found = slots[slot]
            if found < 0 { break }
            let entry = entries[found]
            if entry.hash == hash && entry.length == length && entry.words == words {
                last = found
                return (found, false)
            }
            slot = (slot &+ 1) & mask
        }
        return (add(nil, words: words, length: length, hash: hash, slot: slot), true)
    }

    /// The number of the group whose key equals `key` (of any length), added with the next number
    /// when there is none (`isNew`).
    mutating func group(of key: ByteBuffer) -> (number: Int, isNew: Bool) {
        let length = key.count
        if length <= 16 { return group(words: key.leadingWords(), length: length) }
        if last >= 0 && matches(entries[last], key) { return (last, false) }
        let hash = key.hash(seed: seed)
        let mask = slots.count &- 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let found = slots[slot]
            if found < 0 { break }
            let entry = entries[found]
            if entry.hash == hash && matches(entry, key) {
                last = found
                return (found, false)
            }
            slot = (slot &+ 1) & mask
        }
        return (add(key, words: (0, 0), length: length, hash: hash, slot: slot), true)
    }

    /// Adds a key (its bytes in `key` when it has more than 16, its words otherwise) in the empty
    /// `slot` its probe ended at; returns its group number.
    private mutating func add(
        _ key: ByteBuffer?, words: (UInt64, UInt64), length: Int, hash: UInt64, slot: Int
    ) -> Int {
        let number = entries.count
        if let key { keys.append(contentsOf: key) }
        entries.append(Entry(words: words, length: length, hash: hash, end: keys.count))
        slots[slot] = number
        last = number
        if entries.count &* 2 > slots.count { grow() }
        return number
    }

    /// Whether `entry` holds the bytes of `key`.
    private func matches(_ entry: Entry, _ key: ByteBuffer) -> Bool {
        entry.length == key.count && keys.bytes(in: (entry.end &- entry.length)..<entry.end, equal: key)
    }

    /// The hash of a key of at most 16 bytes from its words.
    @inline(__always)
    private static func hash(_ words: (UInt64, UInt64), _ length: Int, _ seed: UInt64) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var hash = (seed ^ UInt64(length) ^ words.0) &* multiplier
        hash = (hash ^ (hash &>> 29) ^ words.1) &* multiplier
        return hash ^ (hash &>> 29)
    }

    /// Doubles the slots and places every key again.
    private mutating func grow() {
        slots = [Int](repeating: -1, count: slots.count &* 2)
        let mask = slots.count &- 1
        for (number, entry) in entries.enumerated() {
            var slot = Int(truncatingIfNeeded: entry.hash) & mask
            while slots[slot] >= 0 { slot = (slot &+ 1) & mask }
            slots[slot] = number
        }
    }
}
