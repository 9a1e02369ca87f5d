import Foundation
import StrataStorage

/// A check of an LMDB data file's page structure, read from the file with ordinary reads, not
/// through LMDB. LMDB trusts its pages: a damaged branch or leaf page makes its cursors fail an
/// assertion, read through a wild pointer or loop, which stops the process instead of reporting
/// the damage. `strata verify` runs this audit first and reads through LMDB only a file it
/// passes.
///
/// One snapshot is audited: the caller holds a read transaction, so that no writer reuses the
/// pages of its snapshot meanwhile, and passes its ID; the meta page naming that transaction
/// gives the roots. Every tree (the free list, the main database and each named database) is
/// walked from its root. Each page must lie inside the snapshot, carry its own number and the
/// type its level needs (branch above the leaves, leaf at the database's depth, overflow where a
/// leaf points), hold node offsets, keys and values inside itself, and keep its keys in order;
/// no page may belong to two trees or to a tree and the free list; each database's counts must
/// match what its record says; and every page must be in use, free, or a meta page.
///
/// Layout (LMDB 0.9, 64-bit, little-endian): a page header of 16 bytes (`mp_pgno` u64, `mp_pad`
/// u16, `mp_flags` u16, `mp_lower`/`mp_upper` u16 each, or `mp_pages` u32 on an overflow page),
/// then node offsets (u16 each); a node is `mn_lo`, `mn_hi`, `mn_flags`, `mn_ksize` (u16 each),
/// the key, then the value (or an overflow page number). A database record is 48 bytes:
/// `md_pad` u32, `md_flags` u16, `md_depth` u16, then branch, leaf and overflow page counts,
/// entries and root (u64 each).
///
/// ```swift
/// let problems = try LMDBPageAudit.problems(dataFile: path, snapshot: txn.id)
/// ```
struct LMDBPageAudit {
    /// A database record (`MDB_db`).
    struct Database {
        var flags: UInt16
        var depth: Int
        var branchPages: UInt64
        var leafPages: UInt64
        var overflowPages: UInt64
        var entries: UInt64
        var root: UInt64

        /// The record at `offset` of `bytes`, which holds its 48 bytes.
        init(_ bytes: [UInt8], at offset: Int) {
            flags = UInt16(truncatingIfNeeded: LMDBPageAudit.little(bytes, offset + 4, 2))
            depth = Int(LMDBPageAudit.little(bytes, offset + 6, 2))
            branchPages = LMDBPageAudit.little(bytes, offset + 8, 8)
            leafPages = LMDBPageAudit.little(bytes, offset + 16, 8)
            overflowPages = LMDBPageAudit.little(bytes, offset + 24, 8)
            entries = LMDBPageAudit.little(bytes, offset + 32, 8)
            root = LMDBPageAudit.little(bytes, offset + 40, 8)
        }
    }

    /// What a tree's leaves hold, and so what the walk does with them.
    enum Tree {
        /// The free list: keys are transaction IDs, values lists of free page numbers.
        case freeList
        /// The main database: values are the records of the named databases.
        case main
        /// A named database: keys and values are Strata's.
        case named(String)

        var name: String {
            switch self {
            case .freeList: "the free list"
            case .main: "the main database"
            case .named(let name): "database \(name)"
            }
        }
    }

    static let headerSize = 16
    static let nodeHeaderSize = 8
    static let recordSize = 48
    static let branchPage: UInt16 = 0x01
    static let leafPage: UInt16 = 0x02
    static let overflowPage: UInt16 = 0x04
    /// The page-type bits of `mp_flags` (branch, leaf, overflow, meta, leaf2, sub-page).
    static let typeBits: UInt16 = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40
    static let bigData: UInt16 = 0x01
    static let subData: UInt16 = 0x02
    static let dupData: UInt16 = 0x04
    /// `MDB_INTEGERKEY`: the free list's keys compare as native integers.
    static let integerKey: UInt16 = 0x08
    static let noRoot = UInt64.max
    /// Problems kept before the audit stops: a badly damaged file would otherwise list thousands.
    static let problemLimit = 40

    private let file: FileHandle
    private let pageSize: Int
    private let lastPage: UInt64
    /// Per page: 0 not reached yet, 1 in a tree, 2 on the free list.
    private var marks: [UInt8]
    private(set) var problems: [String] = []
    private var freePages: [UInt64] = []
    private var pagesInTrees: UInt64 = 0

    /// The structural problems of the snapshot of transaction `snapshot` in the data file at
    /// `path` (empty when it is sound), or nil when neither meta page names that transaction
    /// any more (writers committed twice since the caller's read began: pin a newer one).
    /// - Throws: `.io` when the file cannot be read.
    static func problems(dataFile path: String, snapshot: UInt64) throws(StrataError) -> [String]? {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw .io("cannot read \(path): permission denied or not a regular file")
        }
        defer { try? file.close() }
        let first = try read(file, path, at: 0, count: 4096)
        guard let firstMeta = LMDBFileCheck.parseMeta(Data(first)) else {
            return ["\(path) does not start with an LMDB meta page"]
        }
        let pageSize = firstMeta.pageSize
        var metaPage: [UInt8]?
        for number in 0..<2 {
            let page = try read(file, path, at: UInt64(number * pageSize), count: pageSize)
            if page.count == pageSize, LMDBFileCheck.parseMeta(Data(page))?.transactionID == snapshot {
                metaPage = page
            }
        }
        guard let metaPage else { return nil }
        let lastPage = little(metaPage, 136, 8)
        // A bitmap with a byte per page: a store of 2^31 pages (8 TiB) or more is not audited.
        guard lastPage >= 1, lastPage < 1 << 31 else {
            return ["the meta page of transaction \(snapshot) names \(lastPage) as its last page"]
        }
        var audit = LMDBPageAudit(
            file: file, pageSize: pageSize, lastPage: lastPage,
            marks: [UInt8](repeating: 0, count: Int(lastPage) + 1))
        try audit.run(path, free: Database(metaPage, at: 40), main: Database(metaPage, at: 88))
        return audit.problems
    }

    private init(file: FileHandle, pageSize: Int, lastPage: UInt64, marks: [UInt8]) {
        self.file = file
        self.pageSize = pageSize
        self.lastPage = lastPage
        self.marks = marks
    }

    private mutating func run(_ path: String, free: Database, main: Database) throws(StrataError) {
        marks[0] = 1
        marks[1] = 1
        _ = try walk(.freeList, free, path)
        let named = try walk(.main, main, path)
        for (name, record) in named where problems.count < Self.problemLimit {
            if record.flags != 0 {
                note("database \(name): its record has flags \(record.flags), which Strata never sets")
            }
            _ = try walk(.named(name), record, path)
        }
        guard problems.count < Self.problemLimit else { return }
        for page in freePages {
            guard page >= 2 && page <= lastPage else {
                note("the free list names page \(page), outside the file's pages 2...\(lastPage)")
                continue
            }
            if marks[Int(page)] != 0 {
                note("page \(page) is on the free list and \(marks[Int(page)] == 1 ? "in use" : "listed twice")")
            }
            marks[Int(page)] = 2
        }
        let accounted = pagesInTrees + UInt64(freePages.count) + 2
        if problems.isEmpty && accounted != lastPage + 1 {
            note(
                """
                the file's \(lastPage + 1) pages are not all accounted for: \(pagesInTrees) in use, \
                \(freePages.count) free, 2 meta pages
                """)
        }
    }

    /// Walks one tree from its root, in key order; returns the named databases a main database
    /// lists.
    private mutating func walk(
        _ tree: Tree, _ record: Database, _ path: String
    ) throws(StrataError)
        -> [(String, Database)]
    {
        var named: [(String, Database)] = []
        if record.root == Self.noRoot {
            if record.depth != 0 || record.entries != 0 || record.leafPages != 0 || record.branchPages != 0 {
                note("\(tree.name) has no root but its record counts \(record.entries) entries")
            }
            return named
        }
        guard record.depth >= 1 && record.depth <= 64 else {
            note("\(tree.name): its record gives a depth of \(record.depth)")
            return named
        }
        var counted = Database(flags: record.flags, root: record.root)
        var previousKey: [UInt8]?
        var lowerBound: [UInt8]?
        // (page, level, the separator its subtree's keys may not go below)
        var stack: [(UInt64, Int, [UInt8]?)] = [(record.root, 1, nil)]
        while let (number, level, bound) = stack.popLast(), problems.count < Self.problemLimit {
            if let bound { lowerBound = bound }
            let isLeaf = level == record.depth
            guard let page = try treePage(number, tree, isLeaf: isLeaf, path) else { continue }
            if isLeaf { counted.leafPages += 1 } else { counted.branchPages += 1 }
            var children: [(UInt64, Int, [UInt8]?)] = []
            for node in 0..<page.count {
                guard let (flags, size, key, valueStart) = nodeParts(page.bytes, node, page.upper, tree, number)
                else { break }
                if isLeaf {
                    if let previousKey, !ordered(previousKey, key, record.flags) {
                        note("\(tree.name): page \(number) holds keys out of order")
                    }
                    if let bound = lowerBound, !ordered(bound, key, record.flags, equalAllowed: true) {
                        note("\(tree.name): page \(number) holds a key below its branch's separator")
                    }
                    lowerBound = nil
                    previousKey = key
                    counted.entries += 1
                    if let record = try leafValue(
                        page.bytes, valueStart: valueStart, flags: flags, size: size, tree, number, path, &counted)
                    {
                        named.append((String(decoding: key, as: UTF8.self), record))
                    }
                } else {
                    // A branch node's child page number is in mn_lo, mn_hi and mn_flags.
                    let child = UInt64(size) | UInt64(flags) << 32
                    if node > 0, let previous = children.last?.2, !ordered(previous, key, record.flags) {
                        note("\(tree.name): branch page \(number) holds keys out of order")
                    }
                    children.append((child, level + 1, node == 0 ? nil : key))
                }
            }
            stack.append(contentsOf: children.reversed())
        }
        guard problems.count < Self.problemLimit else { return named }
        counted.depth = record.depth
        if counted.branchPages != record.branchPages || counted.leafPages != record.leafPages
            || counted.overflowPages != record.overflowPages || counted.entries != record.entries
        {
            note(
                """
                \(tree.name): its record counts \(record.branchPages) branch, \(record.leafPages) leaf and \
                \(record.overflowPages) overflow pages and \(record.entries) entries; the walk found \
                \(counted.branchPages), \(counted.leafPages), \(counted.overflowPages) and \(counted.entries)
                """)
        }
        return named
    }

    /// A branch or leaf page of a tree: its bytes and node count, or nil (noted) when it is not one.
    private mutating func treePage(
        _ number: UInt64, _ tree: Tree, isLeaf: Bool, _ path: String
    ) throws(StrataError) -> TreePage? {
        guard claim(number, pages: 1, tree) else { return nil }
        let bytes = try Self.read(file, path, at: number &* UInt64(pageSize), count: pageSize)
        guard bytes.count == pageSize else {
            note("\(tree.name): page \(number) lies past the end of the file")
            return nil
        }
        let stored = Self.little(bytes, 0, 8)
        let type = UInt16(truncatingIfNeeded: Self.little(bytes, 10, 2)) & Self.typeBits
        let expected = isLeaf ? Self.leafPage : Self.branchPage
        guard stored == number, type == expected else {
            note(
                """
                \(tree.name): page \(number) should be a \(isLeaf ? "leaf" : "branch") page but its header says \
                page \(stored), type \(type)
                """)
            return nil
        }
        let lower = Int(Self.little(bytes, 12, 2))
        let upper = Int(Self.little(bytes, 14, 2))
        guard lower >= Self.headerSize, lower <= upper, upper <= pageSize, (lower - Self.headerSize) % 2 == 0,
            lower > Self.headerSize
        else {
            note("\(tree.name): page \(number) has free-space bounds \(lower)...\(upper), which no page has")
            return nil
        }
        return TreePage(bytes: bytes, count: (lower - Self.headerSize) / 2, upper: upper)
    }

    /// A node's flags, its size field (a leaf's value size, or a branch's child page number's low
    /// 32 bits), its key and where its value starts (after the key), or nil (noted) when the node
    /// does not lie inside its page.
    private mutating func nodeParts(
        _ bytes: [UInt8], _ node: Int, _ upper: Int, _ tree: Tree, _ number: UInt64
    ) -> (UInt16, UInt32, [UInt8], Int)? {
        let offset = Int(Self.little(bytes, Self.headerSize + 2 * node, 2))
        guard offset >= upper, offset + Self.nodeHeaderSize <= pageSize else {
            note("\(tree.name): page \(number) places node \(node) at \(offset), outside its nodes")
            return nil
        }
        let size = UInt32(truncatingIfNeeded: Self.little(bytes, offset, 4))
        let flags = UInt16(truncatingIfNeeded: Self.little(bytes, offset + 4, 2))
        let keySize = Int(Self.little(bytes, offset + 6, 2))
        guard offset + Self.nodeHeaderSize + keySize <= pageSize else {
            note("\(tree.name): page \(number): the key of node \(node) runs past the page")
            return nil
        }
        let keyStart = offset + Self.nodeHeaderSize
        return (flags, size, Array(bytes[keyStart..<keyStart + keySize]), keyStart + keySize)
    }

    /// Checks a leaf node's value (in the page or on overflow pages) and returns the database
    /// record a main database's node holds; collects the free list's page numbers.
    private mutating func leafValue(
        _ bytes: [UInt8], valueStart: Int, flags: UInt16, size: UInt32, _ tree: Tree, _ number: UInt64,
        _ path: String, _ counted: inout Database
    ) throws(StrataError) -> Database? {
        var value: [UInt8]?
        if flags & Self.dupData != 0 {
            note("\(tree.name): page \(number) holds duplicate values, which Strata's databases never have")
            return nil
        }
        if flags & Self.bigData != 0 {
            guard valueStart + 8 <= pageSize else {
                note("\(tree.name): page \(number): an overflow reference runs past the page")
                return nil
            }
            let first = Self.little(bytes, valueStart, 8)
            let pages = (Self.headerSize - 1 + Int(size)) / pageSize + 1
            guard claim(first, pages: pages, tree) else { return nil }
            counted.overflowPages += UInt64(pages)
            let head = try Self.read(file, path, at: first &* UInt64(pageSize), count: Self.headerSize)
            let type = head.count == Self.headerSize ? UInt16(truncatingIfNeeded: Self.little(head, 10, 2)) : 0
            guard head.count == Self.headerSize, Self.little(head, 0, 8) == first,
                type & Self.typeBits == Self.overflowPage, Self.little(head, 12, 4) == UInt64(pages)
            else {
                note("\(tree.name): page \(number) points at overflow page \(first), whose header does not match")
                return nil
            }
            if case .named = tree { return nil }
            value = Array(
                try Self.read(file, path, at: first &* UInt64(pageSize) + UInt64(Self.headerSize), count: Int(size)))
        } else {
            guard valueStart + Int(size) <= pageSize else {
                note("\(tree.name): page \(number): a value of \(size) bytes runs past the page")
                return nil
            }
            if case .named = tree { return nil }
            value = Array(bytes[valueStart..<valueStart + Int(size)])
        }
        guard let value, value.count == Int(size) else {
            note("\(tree.name): page \(number): a value could not be read whole")
            return nil
        }
        switch tree {
        case .freeList:
            guard value.count >= 8, value.count % 8 == 0, Self.little(value, 0, 8) == UInt64(value.count / 8 - 1)
            else {
                note("the free list: page \(number) holds a list whose length does not match its size")
                return nil
            }
            for index in 1..<(value.count / 8) { freePages.append(Self.little(value, index * 8, 8)) }
            return nil
        case .main:
            guard flags & Self.subData != 0, value.count == Self.recordSize else { return nil }
            return Database(value, at: 0)
        case .named:
            return nil
        }
    }

    /// Marks `pages` pages from `first` as in use by `tree`; false (noted) when one is outside
    /// the snapshot or already taken.
    private mutating func claim(_ first: UInt64, pages: Int, _ tree: Tree) -> Bool {
        let (end, overflow) = first.addingReportingOverflow(UInt64(pages))
        guard first >= 2, !overflow, end <= lastPage + 1 else {
            note("\(tree.name) points at page \(first), outside the file's pages 2...\(lastPage)")
            return false
        }
        for page in Int(first)..<Int(end) where marks[page] != 0 {
            note("page \(page) is used twice (the second time by \(tree.name))")
            return false
        }
        for page in Int(first)..<Int(end) { marks[page] = 1 }
        pagesInTrees += UInt64(pages)
        return true
    }

    private mutating func note(_ problem: String) {
        if problems.count < Self.problemLimit { problems.append(problem) }
    }

    /// Whether `lhs` sorts before `rhs` (or equals it, when allowed) in a database with `flags`:
    /// bytes in order, a prefix first; integer keys (the free list) as native 8-byte integers.
    private func ordered(_ lhs: [UInt8], _ rhs: [UInt8], _ flags: UInt16, equalAllowed: Bool = false) -> Bool {
        if flags & Self.integerKey != 0 && lhs.count == 8 && rhs.count == 8 {
            let (left, right) = (Self.little(lhs, 0, 8), Self.little(rhs, 0, 8))
            return left < right || (equalAllowed && left == right)
        }
        for (left, right) in zip(lhs, rhs) where left != right { return left < right }
        return lhs.count < rhs.count || (equalAllowed && lhs.count == rhs.count)
    }

    /// The little-endian integer of `size` bytes at `offset` of `bytes`; zero past their end.
    static func little(_ bytes: [UInt8], _ offset: Int, _ size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (offset..<offset + size).reversed() where index >= 0 && index < bytes.count {
            value = value << 8 | UInt64(bytes[index])
        }
        return value
    }

    /// Up to `count` bytes of the file from `offset` (fewer at its end).
    static func read(_ file: FileHandle, _ path: String, at offset: UInt64, count: Int) throws(StrataError) -> [UInt8] {
        do {
            try file.seek(toOffset: offset)
            return [UInt8](try file.read(upToCount: count) ?? Data())
        } catch {
            throw .io("cannot read \(path): \(error.localizedDescription)")
        }
    }
}

/// A branch or leaf page read for ``LMDBPageAudit``.
private struct TreePage {
    let bytes: [UInt8]
    /// How many nodes it holds.
    let count: Int
    /// Where its nodes start (`mp_upper`).
    let upper: Int
}

extension LMDBPageAudit.Database {
    /// An empty count, for a walk to fill.
    init(flags: UInt16, root: UInt64) {
        self.flags = flags
        depth = 0
        branchPages = 0
        leafPages = 0
        overflowPages = 0
        entries = 0
        self.root = root
    }
}
