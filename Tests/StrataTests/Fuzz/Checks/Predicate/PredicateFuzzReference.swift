/// Evaluates a ``PredicateFuzzExpression`` directly with Strata's documented semantics: texts
/// compare, match prefixes and substrings by UTF-8 bytes; numbers as Swift compares them.
/// Written independently of `Filter.matches` so the two can be compared.
enum PredicateFuzzReference {
    static func evaluate(_ expression: PredicateFuzzExpression, _ item: FuzzItem) -> Bool {
        switch expression {
        case .and(let a, let b): return evaluate(a, item) && evaluate(b, item)
        case .or(let a, let b): return evaluate(a, item) || evaluate(b, item)
        case .not(let a): return !evaluate(a, item)
        case .literal(let value): return value
        case .flag: return item.flag
        case .flagEquals(let value, let equal): return (item.flag == value) == equal
        case .integer(let op, let c, let reversed): return reversed ? holds(op, c, item.int) : holds(op, item.int, c)
        case .real(let op, let c, let reversed): return reversed ? holds(op, c, item.real) : holds(op, item.real, c)
        case .text(let op, let c, let reversed):
            return reversed ? holds(op, Bytes(c), Bytes(item.text)) : holds(op, Bytes(item.text), Bytes(c))
        case .note(let equal, let c, _, _): return (item.note.map(Bytes.init) == c.map(Bytes.init)) == equal
        case .textStarts(let c): return Array(item.text.utf8).starts(with: c.utf8)
        case .textContains(let c): return contains(Array(item.text.utf8), Array(c.utf8))
        case .integerIn(let list): return list.contains(item.int)
        case .realIn(let list): return list.contains(item.real)
        case .textIn(let list): return list.map(Bytes.init).contains(Bytes(item.text))
        case .noteIn(let list): return list.map { $0.map(Bytes.init) }.contains(item.note.map(Bytes.init))
        case .noteCoalesced(let fallback, let equal, let c): return (Bytes(item.note ?? fallback) == Bytes(c)) == equal
        case .integerColumns(let op): return holds(op, item.int, item.int)
        case .integerConstants(let op, let a, let b): return holds(op, a, b)
        }
    }

    /// A string as its UTF-8 bytes, ordered lexicographically by byte.
    struct Bytes: Comparable {
        let units: [UInt8]
        init(_ text: String) { units = Array(text.utf8) }
        static func < (lhs: Bytes, rhs: Bytes) -> Bool { lhs.units.lexicographicallyPrecedes(rhs.units) }
    }

    static func holds<T: Comparable>(_ op: PredicateFuzzExpression.Relation, _ a: T, _ b: T) -> Bool {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        if needle.isEmpty { return true }
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }
}
