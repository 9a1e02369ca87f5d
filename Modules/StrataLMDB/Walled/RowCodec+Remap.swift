import StrataStorage

/// A migration's byte-level row rewrite: each stored row re-encoded for a new column list with
/// its values copied, not decoded.
///
/// Walled file (strict memory safety), with `RowCodec.swift`: the row's bytes are read through
/// pointer loads, every length checked against the row first.
extension RowCodec {
    /// Re-encodes a stored row for a migration without materialising its values: the row is
    /// checked (checksum, format, column count, each value's tag, length and storage class, no
    /// NaN) against `plan.layout`, then each new column gets the bytes of its source column, or
    /// its fill when that is missing or null, or null (see ``RowRemap``). The row's version is kept.
    /// - Throws: `StrataError.storeCorrupt` naming the entity and key when the row is damaged.
    static func remap(_ bytes: RawSpan, key: Int64, plan: inout RowRemap, into out: ByteBuffer) throws(StrataError) {
        try unsafe bytes.withUnsafeBytes { (raw) throws(StrataError) in
            try unsafe remap(raw, key: key, plan: &plan, into: out)
        }
    }

    @unsafe
    private static func remap(
        _ bytes: UnsafeRawBufferPointer, key: Int64, plan: inout RowRemap, into out: ByteBuffer
    ) throws(StrataError) {
        let layout = plan.layout
        func corrupt(_ why: String) -> StrataError {
            .storeCorrupt("row \(key) of entity \(layout.name) cannot be decoded (\(why))")
        }
        let count = bytes.count
        guard count >= 14, let base = bytes.baseAddress else { throw corrupt("\(count) bytes is too short") }
        let body = count &- 4
        let storedCRC = unsafe UInt32(littleEndian: base.loadUnaligned(fromByteOffset: body, as: UInt32.self))
        guard unsafe CRC32C.checksum(base, count: body) == storedCRC else { throw corrupt("checksum mismatch") }
        guard unsafe base.load(as: UInt8.self) == formatVersion else { throw corrupt("unknown row format") }
        let version = unsafe UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
        var start = 9
        let columns = layout.classes.count
        guard let columnCount = unsafe readVarint(base, &start, end: body), columnCount == UInt64(columns),
            plan.boundaries.count == columns &+ 1
        else {
            throw corrupt("wrong column count")
        }
        // Where each old column's tagged value starts; the last entry is where the values end.
        try unsafe plan.boundaries.withUnsafeMutableBufferPointer { (starts) throws(StrataError) in
            var offset = start
            for column in 0..<columns {
                unsafe starts[column] = offset
                guard offset < body else { throw corrupt("truncated") }
                let tag = unsafe base.load(fromByteOffset: offset, as: UInt8.self)
                offset &+= 1
                let expected = layout.classes[column]
                switch tag {
                case tagNull:
                    break
                case tagInteger, tagReal:
                    guard offset &+ 8 <= body else { throw corrupt("truncated") }
                    guard expected == (tag == tagInteger ? .integer : .real) else {
                        throw corrupt("column \(column) holds a value of another class")
                    }
                    if tag == tagReal {
                        let raw = unsafe UInt64(
                            littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                        guard !Double(bitPattern: raw).isNaN else { throw corrupt("column \(column) holds NaN") }
                    }
                    offset &+= 8
                case tagText, tagBlob:
                    guard let length = unsafe readVarint(base, &offset, end: body), length <= UInt64(body &- offset)
                    else {
                        throw corrupt("bad length")
                    }
                    guard expected == (tag == tagText ? .text : .blob) else {
                        throw corrupt("column \(column) holds a value of another class")
                    }
                    offset &+= Int(length)
                default:
                    throw corrupt("unknown tag \(tag) in column \(column)")
                }
            }
            guard offset == body else { throw corrupt("trailing bytes") }
            unsafe starts[columns] = offset
        }
        out.reset()
        out.reserve(1 + 8 + 10 + body &+ plan.fillBytes.count)
        out.append(formatVersion)
        out.appendLittleEndian(version)
        out.appendVarint(UInt64(plan.sources.count))
        unsafe plan.fillBytes.withUnsafeBytes { fillBase in
            unsafe plan.boundaries.withUnsafeBufferPointer { starts in
                for (column, source) in plan.sources.enumerated() {
                    if source >= 0, source < columns,
                        unsafe base.load(fromByteOffset: starts[source], as: UInt8.self) != tagNull
                    {
                        let from = unsafe starts[source]
                        unsafe out.append(
                            UnsafeRawBufferPointer(start: base + from, count: starts[source &+ 1] &- from))
                    } else if !plan.fills[column].isEmpty {
                        unsafe out.append(UnsafeRawBufferPointer(rebasing: fillBase[plan.fills[column]]))
                    } else {
                        out.reserve(1)
                        out.append(tagNull)
                    }
                }
            }
        }
        let crc = out.withBytes { CRC32C.checksum($0) }
        out.reserve(4)
        out.appendLittleEndian(crc)
    }

    /// One value as ``remap(_:key:plan:into:)`` copies it: its tag and payload.
    static func encodedValue(_ value: StoredValue) -> [UInt8] {
        let row = encode(version: 0, values: [value])
        // format (1), version (8), a column count of 1 (1 byte) … value … checksum (4).
        return Array(row[10..<(row.count - 4)])
    }
}

/// How a migration maps the stored rows of an entity to a new column list, prepared once per
/// entity for ``RowCodec/remap(_:key:plan:into:)``.
struct RowRemap {
    /// The stored (old) columns' storage classes, and the entity name for messages.
    let layout: EntityLayout
    /// Per new column, the old column it takes its value from, or -1 for none.
    let sources: [Int]
    /// Per new column, the range of ``fillBytes`` holding the encoded value written when its
    /// source is missing or null (empty: null is written).
    let fills: [Range<Int>]
    /// The fills' encoded values (tag and payload), one after another.
    let fillBytes: [UInt8]
    /// Where each old column starts in the row being remapped (scratch space reused from row to row).
    var boundaries: [Int]

    init(layout: EntityLayout, sources: [Int?], fills: [StoredValue?]) {
        self.layout = layout
        self.sources = sources.map { $0 ?? -1 }
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for fill in fills {
            let encoded = fill.map(RowCodec.encodedValue) ?? []
            ranges.append(bytes.count..<(bytes.count + encoded.count))
            bytes += encoded
        }
        self.fills = ranges
        fillBytes = bytes
        boundaries = Array(repeating: 0, count: layout.classes.count + 1)
    }
}
