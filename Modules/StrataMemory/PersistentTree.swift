/// An ordered map whose copies share their structure: a balanced (AVL) binary tree of immutable
/// nodes, each knowing how many entries it holds.
///
/// A write copies only the path from the root to the entry it changes (O(log n) new nodes) and
/// leaves every other node shared with the copies made before it. That is what lets a commit
/// change one row of a table of any size without copying the table, while a reader that took
/// the state before it keeps seeing every node as it was: nothing is ever changed in place.
///
/// ```swift
/// var rows = PersistentTree<Int64, String>()
/// rows[2] = "b"
/// rows[1] = "a"
/// let snapshot = rows        // shares every node
/// rows[3] = "c"              // copies the path to 3 only
/// print(snapshot.count, rows.count, Array(rows.lazy.map(\.key)))  // 2 3 [1, 2, 3]
/// ```
struct PersistentTree<Key: Comparable & Sendable, Value: Sendable>: Sendable {
    /// One entry and its subtrees; never changed after it is made.
    final class Node: Sendable {
        let key: Key
        let value: Value
        let left: Node?
        let right: Node?
        /// The height of this subtree (1 for a leaf).
        let height: Int
        /// The number of entries in this subtree.
        let count: Int

        init(_ key: Key, _ value: Value, _ left: Node?, _ right: Node?) {
            self.key = key
            self.value = value
            self.left = left
            self.right = right
            height = Swift.max(left?.height ?? 0, right?.height ?? 0) + 1
            count = (left?.count ?? 0) + (right?.count ?? 0) + 1
        }
    }

    /// One end of a range of keys: the key, and whether the range holds it.
    struct Bound: Sendable {
        /// The key at the end.
        var key: Key
        /// Whether `key` itself is in the range.
        var inclusive: Bool
    }

    private var root: Node?

    /// An empty tree.
    init() {}

    /// The number of entries.
    var count: Int { root?.count ?? 0 }

    /// Whether the tree holds no entry.
    var isEmpty: Bool { root == nil }

    /// The value stored under `key`; setting nil removes the entry.
    subscript(key: Key) -> Value? {
        get {
            var node = root
            while let current = node {
                if key < current.key {
                    node = current.left
                } else if current.key < key {
                    node = current.right
                } else {
                    return current.value
                }
            }
            return nil
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Stores `value` under `key` and returns the value it replaced, nil when there was none.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        var old: Value?
        root = Self.insert(root, key, value, replaced: &old)
        return old
    }

    /// Removes the entry `key` and returns its value, nil when there was none.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        var removed: Value?
        root = Self.remove(root, key, removed: &removed)
        return removed
    }

    /// How many keys lie between `lower` and `upper` (nil: unbounded on that side), in O(log n).
    func count(from lower: Bound?, to upper: Bound?) -> Int {
        let below = lower.map { rank(of: $0.key, counting: !$0.inclusive) } ?? 0
        let through = upper.map { rank(of: $0.key, counting: $0.inclusive) } ?? count
        return Swift.max(through - below, 0)
    }

    /// Calls `body` with every entry between `lower` and `upper` (nil: unbounded), in key order,
    /// until it returns false. O(log n) to find the first entry, then O(1) amortised per entry.
    func forEach(
        from lower: Bound?, to upper: Bound?, _ body: (Key, Value) throws -> Bool
    ) rethrows {
        // The nodes at or past `lower` on the way down, nearest last: the first entry is on top,
        // and each popped node's successors are its right subtree's left spine.
        var stack: [Node] = []
        var node = root
        while let current = node {
            if let lower, lower.inclusive ? current.key < lower.key : !(lower.key < current.key) {
                node = current.right
            } else {
                stack.append(current)
                node = current.left
            }
        }
        while let current = stack.popLast() {
            if let upper, upper.inclusive ? upper.key < current.key : !(current.key < upper.key) { return }
            guard try body(current.key, current.value) else { return }
            var next = current.right
            while let successor = next {
                stack.append(successor)
                next = successor.left
            }
        }
    }

    /// The number of keys below `key`, and `key` itself too when `counting` is true.
    private func rank(of key: Key, counting: Bool) -> Int {
        var node = root
        var rank = 0
        while let current = node {
            let goesRight = counting ? !(key < current.key) : current.key < key
            if goesRight {
                rank += (current.left?.count ?? 0) + 1
                node = current.right
            } else {
                node = current.left
            }
        }
        return rank
    }

    // MARK: Balancing

    /// A node over `left` and `right`, rotated when their heights differ by two.
    private static func balanced(_ key: Key, _ value: Value, _ left: Node?, _ right: Node?) -> Node {
        let leftHeight = left?.height ?? 0
        let rightHeight = right?.height ?? 0
        if leftHeight > rightHeight + 1, let left {
            if (left.left?.height ?? 0) >= (left.right?.height ?? 0) {
                return Node(left.key, left.value, left.left, Node(key, value, left.right, right))
            }
            if let middle = left.right {
                return Node(
                    middle.key, middle.value, Node(left.key, left.value, left.left, middle.left),
                    Node(key, value, middle.right, right))
            }
        }
        if rightHeight > leftHeight + 1, let right {
            if (right.right?.height ?? 0) >= (right.left?.height ?? 0) {
                return Node(right.key, right.value, Node(key, value, left, right.left), right.right)
            }
            if let middle = right.left {
                return Node(
                    middle.key, middle.value, Node(key, value, left, middle.left),
                    Node(right.key, right.value, middle.right, right.right))
            }
        }
        return Node(key, value, left, right)
    }

    private static func insert(_ node: Node?, _ key: Key, _ value: Value, replaced: inout Value?) -> Node {
        guard let node else { return Node(key, value, nil, nil) }
        if key < node.key {
            return balanced(node.key, node.value, insert(node.left, key, value, replaced: &replaced), node.right)
        }
        if node.key < key {
            return balanced(node.key, node.value, node.left, insert(node.right, key, value, replaced: &replaced))
        }
        replaced = node.value
        return Node(key, value, node.left, node.right)
    }

    private static func remove(_ node: Node?, _ key: Key, removed: inout Value?) -> Node? {
        guard let node else { return nil }
        if key < node.key {
            let left = remove(node.left, key, removed: &removed)
            return removed == nil ? node : balanced(node.key, node.value, left, node.right)
        }
        if node.key < key {
            let right = remove(node.right, key, removed: &removed)
            return removed == nil ? node : balanced(node.key, node.value, node.left, right)
        }
        removed = node.value
        guard let left = node.left else { return node.right }
        guard let right = node.right else { return left }
        let (first, rest) = removeFirst(right)
        return balanced(first.key, first.value, left, rest)
    }

    /// `node`'s first entry, and the subtree without it.
    private static func removeFirst(_ node: Node) -> (first: Node, rest: Node?) {
        guard let left = node.left else { return (node, node.right) }
        let (first, rest) = removeFirst(left)
        return (first, balanced(node.key, node.value, rest, node.right))
    }
}

extension PersistentTree: Sequence {
    /// Walks the entries in key order, with a stack of the nodes whose right side is still to come.
    struct Iterator: IteratorProtocol {
        private var stack: [Node] = []

        init(_ root: Node?) {
            descend(root)
        }

        private mutating func descend(_ node: Node?) {
            var node = node
            while let current = node {
                stack.append(current)
                node = current.left
            }
        }

        mutating func next() -> (key: Key, value: Value)? {
            guard let node = stack.popLast() else { return nil }
            descend(node.right)
            return (node.key, node.value)
        }
    }

    func makeIterator() -> Iterator { Iterator(root) }

    var underestimatedCount: Int { count }

    /// The keys, ascending.
    var keys: [Key] { map(\.key) }
}
