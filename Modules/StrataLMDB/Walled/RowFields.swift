import StrataStorage

/// One column of a row as ``RowFields/read(_:key:)`` notes it.
struct RowField {
    /// The value's tag (``RowCodec/tagNull`` … ``RowCodec/tagBlob``).
    var tag: UInt8
    /// An integer's or a real's bit pattern; a text's or a blob's offset in the row.
    var bits: UInt64
    /// A text's or a blob's length in bytes.
    var length: Int

    /// The integer of an integer field.
    var integer: Int64 { Int64(bitPattern: bits) }
    /// The real of a real field.
    var real: Double { Double(bitPattern: bits) }
}

/// A row's group key as ``RowFields/read(_:key:)`` returns it.
struct GroupKey {
    /// The key's bytes as two little-endian words, zeros past its end, when it has at most 16
    /// bytes; otherwise unspecified (the key is in ``RowFields/groupKey``).
    var words: (UInt64, UInt64)
    /// The key's length in bytes.
    var length: Int
}

/// A stored row's values read where they lie, for a scan that folds a few columns of every row
/// (an aggregate, ``LMDBAggregateFold``): ``read(_:key:)`` checks the row as
/// ``RowCodec/decode(_:key:layout:wanted:into:)-(RawSpan,_,_,_,_)`` checks it and notes each
/// column's tag and bits or place (``subscript(_:)``) instead of making ``StoredValue``s, then
/// returns the row's group key. Reused from row to row; one thread at a time.
///
/// Walled file (strict memory safety), beside ``RowCodec``: the row's bytes are read with pointer
/// loads, each length and varint checked against the row before a load, and the notes live in a
/// ``ScanScratch`` of one ``RowField`` per column (placed away from the scan's stack), read
/// through a bounds-checked subscript.
///
/// ```swift
/// let fields = RowFields(layout: entity.layout, checksText: flags, groupBy: plan.groupBy, anchor: .here())
/// let key = try fields.read(value, key: key)
/// let amount = fields[2].integer
/// ```
@safe final class RowFields {
    /// Per column: the tag its values carry when not null (the column's storage class), and
    /// whether a text there must be valid UTF-8 (a text a fold reads).
    private struct Column {
        var tag: UInt8
        var checksText: Bool
    }

    private let layout: EntityLayout
    /// The columns, one after another.
    private let columns: UnsafeMutablePointer<Column>
    /// One note per column, written on every row: placed away from the scan's stack
    /// (``ScanScratch``).
    private let notes: ScanScratch<RowField>
    /// The number of columns.
    let count: Int
    /// The columns whose values make ``groupKey``, in order.
    private let groupBy: UnsafeMutablePointer<Int>
    private let groupCount: Int
    /// The one group column whose key is its stored bytes (any class but real, whose -0.0 must
    /// read as 0.0), or -1 when the plan groups otherwise.
    private let keyColumn: Int
    /// Per column, whether a text there must be valid UTF-8: the decoder's `wanted` for a damaged row.
    private let checksText: ContiguousArray<Bool>
    /// ``CRC32C/usesHardware``, read once.
    private let hardwareCRC = CRC32C.usesHardware
    /// The row a damaged row is decoded into, for the decoder's own error.
    private var damaged = StoredRow(key: 0, version: 0, values: [])

    /// The last row's group key, when it has more than 16 bytes (``GroupKey/length``): per group column
    /// its tag, then an integer's 8 bytes, a real's 8 bytes (-0.0 written as 0.0), a text's or a
    /// blob's length (varint) and bytes. Two rows have the same key exactly when their group
    /// values are equal (``StoredValue``'s `==`: texts by bytes, -0.0 equal to 0.0).
    let groupKey = ByteBuffer(capacity: 64)

    /// Notes for rows laid out as `layout`; `checksText` has one flag per column, and `groupBy`
    /// names columns of the layout. `anchor` is the stack of the scan (``ScanScratch``); the
    /// notes start ``notesDistance`` bytes after it in their page (rounded up to 64).
    init(layout: EntityLayout, checksText: ContiguousArray<Bool>, groupBy: [Int], anchor: StackAnchor) {
        precondition(checksText.count == layout.classes.count, "one flag per column")
        precondition(groupBy.allSatisfy { layout.classes.indices.contains($0) }, "group columns of the layout")
        self.layout = layout
        self.checksText = checksText
        count = layout.classes.count
        unsafe columns = .allocate(capacity: max(count, 1))
        for (column, storageClass) in layout.classes.enumerated() {
            let tag =
                switch storageClass {
                case .integer: RowCodec.tagInteger
                case .real: RowCodec.tagReal
                case .text: RowCodec.tagText
                case .blob: RowCodec.tagBlob
                }
            unsafe (columns + column).initialize(to: Column(tag: tag, checksText: checksText[column]))
        }
        notes = ScanScratch(
            count: count, repeating: RowField(tag: RowCodec.tagNull, bits: 0, length: 0), anchor: anchor,
            distance: Self.notesDistance)
        groupCount = groupBy.count
        keyColumn = groupBy.count == 1 && layout.classes[groupBy[0]] != .real ? groupBy[0] : -1
        unsafe self.groupBy = .allocate(capacity: max(groupBy.count, 1))
        for (position, column) in groupBy.enumerated() { unsafe (self.groupBy + position).initialize(to: column) }
    }

    deinit {
        unsafe columns.deallocate()
        unsafe groupBy.deallocate()
    }

    /// The note of `column` from the last read.
    @inline(__always)
    subscript(_ column: Int) -> RowField { notes[column] }

    /// How far after the scan's stack, in their page, the notes start (``ScanScratch``, rounded
    /// up to 64 bytes); what else a fold writes on every row goes after them (``notesEnd``).
    static let notesDistance = 1024

    /// Where in its 4 KiB page the first note lies (for tests of the placement).
    var notesPageOffset: Int { notes.elementAddress(0) & (StackAnchor.pageSize &- 1) }

    /// How far after the scan's stack, in their page, the notes end: where a fold's next scratch
    /// starts.
    var notesEnd: Int { notes.endDistance }

    /// Reads a stored row (`key` its primary key for messages) into the notes, and returns its
    /// group key (written into ``groupKey`` when longer than 16 bytes).
    /// - Throws: `StrataError.storeCorrupt` naming the entity and key when anything is off: the
    ///   error of ``RowCodec/decode(_:key:layout:wanted:into:)-(RawSpan,_,_,_,_)`` for the row,
    ///   which a damaged row is decoded with to say what is wrong.
    @inline(__always)
    func read(_ bytes: RawSpan, key: Int64) throws(StrataError) -> GroupKey {
        let sound = unsafe bytes.withUnsafeBytes { unsafe read($0) }
        if let sound { return sound }
        try RowCodec.decode(bytes, key: key, layout: layout, wanted: checksText, into: &damaged)
        throw .storeCorrupt("row \(key) of entity \(layout.name) cannot be decoded (it breaks the row format)")
    }

    /// ``read(_:key:)`` of the bytes behind a pointer: the row's group key, or nil when the row is
    /// not sound (the notes are then left half written).
    @unsafe
    private func read(_ bytes: UnsafeRawBufferPointer) -> GroupKey? {
        let size = bytes.count
        guard size >= 14, let base = bytes.baseAddress else { return nil }
        // One note per column (`count` of them): the loop's `column` is below `count`.
        let notes = unsafe self.notes.elements
        let body = size &- 4
        let storedCRC = unsafe UInt32(littleEndian: base.loadUnaligned(fromByteOffset: body, as: UInt32.self))
        guard unsafe CRC32C.checksum(base, count: body, hardware: hardwareCRC) == storedCRC,
            unsafe base.load(as: UInt8.self) == RowCodec.formatVersion
        else { return nil }
        var offset = 9
        guard let columnCount = unsafe Self.varint(base, &offset, end: body), columnCount == UInt64(count) else {
            return nil
        }
        // Where the value of a group column whose key is its bytes in the row starts and ends.
        var keyStart = 0
        var keyEnd = 0
        for column in 0..<count {
            guard offset < body else { return nil }
            let start = offset
            let tag = unsafe base.load(fromByteOffset: offset, as: UInt8.self)
            offset &+= 1
            let plan = unsafe columns[column]
            if tag == RowCodec.tagNull {
                unsafe notes[column] = RowField(tag: tag, bits: 0, length: 0)
            } else if tag != plan.tag {
                return nil
            } else if tag == RowCodec.tagInteger || tag == RowCodec.tagReal {
                guard offset &+ 8 <= body else { return nil }
                let bits = unsafe UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                if tag == RowCodec.tagReal && Double(bitPattern: bits).isNaN { return nil }
                unsafe notes[column] = RowField(tag: tag, bits: bits, length: 0)
                offset &+= 8
            } else {
                // `varint` leaves `offset` at most `body`, so the room left is not negative, and a
                // length within it fits an Int.
                guard let stored = unsafe Self.varint(base, &offset, end: body),
                    stored <= UInt64(truncatingIfNeeded: body &- offset)
                else { return nil }
                let length = Int(truncatingIfNeeded: stored)
                if tag == RowCodec.tagText && plan.checksText {
                    let text = unsafe UnsafeRawBufferPointer(start: base + offset, count: length)
                    guard unsafe RowCodec.makeString(text) != nil else { return nil }
                }
                unsafe notes[column] = RowField(tag: tag, bits: UInt64(truncatingIfNeeded: offset), length: length)
                offset &+= length
            }
            if column == keyColumn {
                keyStart = start
                keyEnd = offset
            }
        }
        guard offset == body else { return nil }
        // One group column of a class other than real: its key is the value's bytes as stored
        // (tag, then the integer, or the varint length and the bytes), read as two words when
        // they are at most 16 bytes and 16 bytes from their start lie in the row.
        let direct = keyEnd &- keyStart
        if keyColumn >= 0 && direct <= 16 && keyStart &+ 16 <= size {
            let mask = Self.masks(direct)
            let words = unsafe (
                base.loadUnaligned(fromByteOffset: keyStart, as: UInt64.self) & mask.0,
                base.loadUnaligned(fromByteOffset: keyStart &+ 8, as: UInt64.self) & mask.1
            )
            return GroupKey(words: words, length: direct)
        }
        groupKey.reset()
        for position in 0..<groupCount {
            let note = self.notes[unsafe groupBy[position]]
            groupKey.append(note.tag)
            switch note.tag {
            case RowCodec.tagInteger:
                groupKey.appendLittleEndian(note.bits)
            case RowCodec.tagReal:
                // -0.0 equals 0.0: one key for both.
                groupKey.appendLittleEndian(note.bits == (-0.0 as Double).bitPattern ? 0 : note.bits)
            case RowCodec.tagText, RowCodec.tagBlob:
                groupKey.appendVarint(UInt64(note.length))
                unsafe groupKey.append(UnsafeRawBufferPointer(start: base + Int(note.bits), count: note.length))
            default:
                break
            }
        }
        let length = groupKey.count
        return GroupKey(words: length <= 16 ? groupKey.leadingWords() : (0, 0), length: length)
    }

    /// The masks that keep the first `count` (at most 16) bytes of two little-endian words.
    @inline(__always)
    private static func masks(_ count: Int) -> (UInt64, UInt64) {
        func keep(_ bytes: Int) -> UInt64 {
            bytes >= 8 ? .max : bytes <= 0 ? 0 : (1 &<< (8 &* UInt64(bytes))) &- 1
        }
        return (keep(count), keep(count &- 8))
    }

    /// ``RowCodec/readVarint(_:_:end:)`` with the one-byte case (every length under 128) inline.
    @inline(__always) @unsafe
    private static func varint(_ base: UnsafeRawPointer, _ offset: inout Int, end: Int) -> UInt64? {
        guard offset < end else { return nil }
        let first = unsafe base.load(fromByteOffset: offset, as: UInt8.self)
        if first < 0x80 {
            offset &+= 1
            return UInt64(first)
        }
        return unsafe RowCodec.readVarint(base, &offset, end: end)
    }
}
