import StrataStorage

/// The links of one many-to-many join, looked up from either side.
struct MemoryJoin: Sendable {
    /// Left key → its right keys.
    var rightsOf: [Int64: Set<Int64>] = [:]
    /// Right key → its left keys.
    var leftsOf: [Int64: Set<Int64>] = [:]

    /// Adds a link (nothing when it exists).
    mutating func link(left: Int64, right: Int64) {
        rightsOf[left, default: []].insert(right)
        leftsOf[right, default: []].insert(left)
    }

    /// Removes a link (nothing when it does not exist).
    mutating func unlink(left: Int64, right: Int64) {
        Self.remove(right, from: left, in: &rightsOf)
        Self.remove(left, from: right, in: &leftsOf)
    }

    /// Removes every link naming `key` on `side`.
    mutating func removeLinks(of key: Int64, on side: JoinSide) {
        switch side {
        case .left:
            for right in rightsOf.removeValue(forKey: key) ?? [] { Self.remove(key, from: right, in: &leftsOf) }
        case .right:
            for left in leftsOf.removeValue(forKey: key) ?? [] { Self.remove(key, from: left, in: &rightsOf) }
        }
    }

    /// The keys linked to `key` on `side`, ascending.
    func linked(to key: Int64, from side: JoinSide) -> [Int64] {
        switch side {
        case .left: (rightsOf[key] ?? []).sorted()
        case .right: (leftsOf[key] ?? []).sorted()
        }
    }

    /// The same links with the sides exchanged.
    var swapped: MemoryJoin { MemoryJoin(rightsOf: leftsOf, leftsOf: rightsOf) }

    private static func remove(_ value: Int64, from key: Int64, in map: inout [Int64: Set<Int64>]) {
        guard var set = map[key] else { return }
        set.remove(value)
        map[key] = set.isEmpty ? nil : set
    }
}
