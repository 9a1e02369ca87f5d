/// A predicate over ``FuzzItem``, as plain data: fuzz bytes choose it, then it is built both
/// as a Foundation `Predicate` (``PredicateFuzzBuilder``) and evaluated directly with Strata's
/// binary semantics (``PredicateFuzzReference``).
indirect enum PredicateFuzzExpression: CustomStringConvertible {
    /// The six comparison operators; ordering ones apply only to `Comparable` operands.
    enum Relation: CaseIterable {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    }

    case and(Self, Self)
    case or(Self, Self)
    case not(Self)
    case literal(Bool)
    /// `$0.flag` used as a condition.
    case flag
    /// `$0.flag == c` or `!=`.
    case flagEquals(Bool, equal: Bool)
    /// `$0.int op c`, or `c op $0.int` when reversed.
    case integer(Relation, Int64, reversed: Bool)
    case real(Relation, Double, reversed: Bool)
    case text(Relation, String, reversed: Bool)
    /// `$0.note == c` or `!=`; a nil `c` is written `nil` (NilLiteral) or as a `String?` value.
    case note(equal: Bool, String?, nilLiteral: Bool, reversed: Bool)
    /// `$0.text.starts(with: c)`.
    case textStarts(String)
    /// `$0.text.contains(c)`.
    case textContains(String)
    /// `[c…].contains($0.int)` and friends.
    case integerIn([Int64])
    case realIn([Double])
    case textIn([String])
    case noteIn([String?])
    /// `($0.note ?? d) == c` or `!=`: not compilable, evaluated by Foundation.
    case noteCoalesced(String, equal: Bool, String)
    /// `$0.int op $0.int`: two columns, not compilable.
    case integerColumns(Relation)
    /// `a op b` on two constants, not compilable.
    case integerConstants(Relation, Int64, Int64)

    /// Reads an expression of at most `depth` levels of `&&`, `||` and `!`.
    static func make(_ reader: inout FuzzReader, depth: Int, unicode: Bool) -> Self {
        let choice = reader.below(depth > 0 ? 22 : 18)
        func relation(_ reader: inout FuzzReader) -> Relation { Relation.allCases[reader.below(6)] }
        switch choice {
        case 0: return .literal(reader.bool())
        case 1: return .flag
        case 2: return .flagEquals(reader.bool(), equal: reader.bool())
        case 3, 4: return .integer(relation(&reader), reader.int64(), reversed: reader.bool())
        case 5, 6: return .real(relation(&reader), reader.double(), reversed: reader.bool())
        case 7, 8: return .text(relation(&reader), reader.string(unicode: unicode), reversed: reader.bool())
        case 9:
            let equal = reader.bool()
            let constant = reader.bool() ? reader.string(unicode: unicode) : nil
            return .note(equal: equal, constant, nilLiteral: reader.bool(), reversed: reader.bool())
        case 10: return .textStarts(reader.string(unicode: unicode))
        case 11: return .textContains(reader.string(unicode: unicode))
        case 12: return .integerIn((0..<reader.below(4)).map { _ in reader.int64() })
        case 13: return .realIn((0..<reader.below(4)).map { _ in reader.double() })
        case 14: return .textIn((0..<reader.below(4)).map { _ in reader.string(unicode: unicode) })
        case 15:
            return .noteIn((0..<reader.below(4)).map { _ in reader.bool() ? reader.string(unicode: unicode) : nil })
        case 16:
            return .noteCoalesced(
                reader.string(unicode: unicode), equal: reader.bool(), reader.string(unicode: unicode))
        case 17:
            return reader.bool()
                ? .integerColumns(relation(&reader))
                : .integerConstants(relation(&reader), reader.int64(), reader.int64())
        case 18: return .not(make(&reader, depth: depth - 1, unicode: unicode))
        case 19:
            return .or(
                make(&reader, depth: depth - 1, unicode: unicode), make(&reader, depth: depth - 1, unicode: unicode))
        default:
            return .and(
                make(&reader, depth: depth - 1, unicode: unicode), make(&reader, depth: depth - 1, unicode: unicode))
        }
    }

    /// Whether the compiler must push the whole expression down: `FetchRequest` documents that
    /// comparisons with a constant, `&&`, `||`, `!`, nil checks, `contains`, `starts(with:)` and
    /// membership in a constant collection run in the engine. NaN constants never do.
    var isDocumentedPushdown: Bool {
        switch self {
        case .and(let a, let b), .or(let a, let b): a.isDocumentedPushdown && b.isDocumentedPushdown
        case .not(let a): a.isDocumentedPushdown
        case .literal, .flag, .flagEquals, .integer, .text, .note, .textStarts, .textContains, .integerIn, .textIn,
            .noteIn:
            true
        case .real(_, let c, _): !c.isNaN
        case .realIn(let list): !list.contains { $0.isNaN }
        case .noteCoalesced, .integerColumns, .integerConstants: false
        }
    }

    var description: String {
        switch self {
        case .and(let a, let b): "(\(a) && \(b))"
        case .or(let a, let b): "(\(a) || \(b))"
        case .not(let a): "!\(a)"
        case .literal(let value): "\(value)"
        case .flag: "$0.flag"
        case .flagEquals(let value, let equal): "$0.flag \(equal ? "==" : "!=") \(value)"
        case .integer(let op, let c, let reversed): reversed ? "\(c) \(op) $0.int" : "$0.int \(op) \(c)"
        case .real(let op, let c, let reversed): reversed ? "\(c) \(op) $0.real" : "$0.real \(op) \(c)"
        case .text(let op, let c, let reversed):
            reversed ? "\(String(reflecting: c)) \(op) $0.text" : "$0.text \(op) \(String(reflecting: c))"
        case .note(let equal, let c, let nilLiteral, let reversed):
            """
            $0.note \(equal ? "==" : "!=") \
            \(c.map { String(reflecting: $0) } ?? (nilLiteral ? "nil" : "String?.none"))\(reversed ? " (reversed)" : "")
            """
        case .textStarts(let c): "$0.text.starts(with: \(String(reflecting: c)))"
        case .textContains(let c): "$0.text.contains(\(String(reflecting: c)))"
        case .integerIn(let list): "\(list).contains($0.int)"
        case .realIn(let list): "\(list).contains($0.real)"
        case .textIn(let list): "\(list).contains($0.text)"
        case .noteIn(let list): "\(list).contains($0.note)"
        case .noteCoalesced(let d, let equal, let c):
            "($0.note ?? \(String(reflecting: d))) \(equal ? "==" : "!=") \(String(reflecting: c))"
        case .integerColumns(let op): "$0.int \(op) $0.int"
        case .integerConstants(let op, let a, let b): "\(a) \(op) \(b)"
        }
    }
}
