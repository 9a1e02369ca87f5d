import Foundation
import StrataStorage

/// The binary row format stored in an entity database.
///
/// ```
/// format:u8(=1) version:i64le columnCount:varint { tag:u8 payload }* crc32c:u32le
/// tag 0 null | 1 integer i64le | 2 real f64 bit pattern le | 3 text varint-len utf8 | 4 blob varint-len bytes
/// ```
/// The CRC covers every byte before it. Reals keep their exact bit pattern (-0.0, infinities).
enum RowCodec {
    static let formatVersion: UInt8 = 1
    static let tagNull: UInt8 = 0, tagInteger: UInt8 = 1, tagReal: UInt8 = 2, tagText: UInt8 = 3, tagBlob: UInt8 = 4

    /// Encodes a row: version plus values in column order.
    static func encode(version: Int64, values: ContiguousArray<StoredValue>) -> [UInt8] {
        let buffer = ByteBuffer()
        _ = encode(version: version, values: values, checking: nil, into: buffer)
        return buffer.array
    }

    /// Encodes a row into `out`, replacing its contents (a committer reuses one buffer for every row).
    ///
    /// With `classes` (one storage class per column), stops at the first value its column does
    /// not admit, or a NaN, and returns false (also when `classes` has another count than
    /// `values`); the caller reports the problem.
    static func encode(
        version: Int64, values: ContiguousArray<StoredValue>, checking classes: ContiguousArray<StorageClass>?,
        into out: ByteBuffer
    ) -> Bool {
        if let classes, classes.count != values.count { return false }
        out.reset()
        // Room for the header and the fixed-size values up front; every value still reserves its
        // own room, because a text or blob reserves only relative to where it starts. (Reserving
        // is an optimisation: the buffer checks every append and grows when it must.)
        out.reserve(1 + 8 + 10 + values.count &* 9 + 4)
        out.append(formatVersion)
        out.appendLittleEndian(UInt64(bitPattern: version))
        out.appendVarint(UInt64(values.count))
        for column in values.indices {
            switch values[column] {
            case .null:
                out.reserve(1)
                out.append(tagNull)
            case .integer(let v):
                if let classes, classes[column] != .integer { return false }
                out.reserve(9)
                out.append(tagInteger)
                out.appendLittleEndian(UInt64(bitPattern: v))
            case .real(let v):
                if let classes, classes[column] != .real || v.isNaN { return false }
                out.reserve(9)
                out.append(tagReal)
                out.appendLittleEndian(v.bitPattern)
            case .text(let text):
                if let classes, classes[column] != .text { return false }
                let utf8 = text.utf8
                out.reserve(11 &+ utf8.count)
                out.append(tagText)
                out.appendVarint(UInt64(utf8.count))
                out.append(utf8: text)
            case .blob(let data):
                if let classes, classes[column] != .blob { return false }
                out.reserve(11 &+ data.count)
                out.append(tagBlob)
                out.appendVarint(UInt64(data.count))
                out.append(contentsOf: data)
            }
        }
        let crc = out.withBytes { CRC32C.checksum($0) }
        out.reserve(4)
        out.appendLittleEndian(crc)
        return true
    }

    /// Decodes a stored row, checking its checksum and every value's storage class.
    /// - Throws: `StrataError.storeCorrupt` naming the entity and key when anything is off.
    static func decode(_ bytes: RawSpan, key: Int64, layout: EntityLayout) throws(StrataError) -> StoredRow {
        var row = StoredRow(key: key, version: 0, values: [])
        try decode(bytes, key: key, layout: layout, into: &row)
        return row
    }

    /// ``decode(_:key:layout:)`` of bytes in an array.
    static func decode(_ bytes: [UInt8], key: Int64, layout: EntityLayout) throws(StrataError) -> StoredRow {
        try unsafe bytes.span.withUnsafeBytes { (raw) throws(StrataError) in
            try unsafe decode(raw, key: key, layout: layout)
        }
    }

    /// ``decode(_:key:layout:)`` of bytes behind a pointer (tests and fuzzing).
    @unsafe
    static func decode(
        _ bytes: UnsafeRawBufferPointer, key: Int64, layout: EntityLayout
    ) throws(StrataError) -> StoredRow {
        var row = StoredRow(key: key, version: 0, values: [])
        try unsafe decode(bytes, key: key, layout: layout, into: &row)
        return row
    }

    /// Decodes a stored row into `row`, reusing its value array's storage when nothing else
    /// holds it (see the overload below).
    /// - Throws: `StrataError.storeCorrupt` naming the entity and key when anything is off.
    ///
    /// With `wanted` (one flag per column), a text or blob column whose flag is false is checked
    /// (tag, length, storage class; the checksum covers its bytes) but not made into a value: it
    /// reads as `.null`. A scan that uses a few columns (an aggregate) then makes no text or
    /// blob it does not use.
    static func decode(
        _ bytes: RawSpan, key: Int64, layout: EntityLayout, wanted: ContiguousArray<Bool>? = nil,
        into row: inout StoredRow
    ) throws(StrataError) {
        try unsafe bytes.withUnsafeBytes { (raw) throws(StrataError) in
            try unsafe decode(raw, key: key, layout: layout, wanted: wanted, into: &row)
        }
    }

    /// Decodes a stored row into `row`, reusing its value array's storage when nothing else
    /// holds it: a scan that hands each row to a consumer that copies the values out allocates
    /// one array for all its rows instead of one per row.
    /// - Throws: `StrataError.storeCorrupt` naming the entity and key when anything is off
    ///   (`row` is then left with the values decoded so far).
    @unsafe
    static func decode(
        _ bytes: UnsafeRawBufferPointer, key: Int64, layout: EntityLayout, wanted: ContiguousArray<Bool>? = nil,
        into row: inout StoredRow
    ) throws(StrataError) {
        func corrupt(_ why: String) -> StrataError {
            .storeCorrupt("row \(key) of entity \(layout.name) cannot be decoded (\(why))")
        }
        precondition(wanted.map { $0.count == layout.classes.count } ?? true, "one wanted flag per column")
        let count = bytes.count
        guard count >= 14, let base = bytes.baseAddress else { throw corrupt("\(count) bytes is too short") }
        let body = count &- 4
        let storedCRC = unsafe UInt32(littleEndian: base.loadUnaligned(fromByteOffset: body, as: UInt32.self))
        guard unsafe CRC32C.checksum(base, count: body) == storedCRC else { throw corrupt("checksum mismatch") }
        guard unsafe base.load(as: UInt8.self) == formatVersion else { throw corrupt("unknown row format") }
        let version = unsafe Int64(
            bitPattern: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 1, as: UInt64.self)))
        var offset = 9
        guard let columnCount = unsafe readVarint(base, &offset, end: body), columnCount == UInt64(layout.classes.count)
        else {
            throw corrupt("wrong column count")
        }
        row.key = key
        row.version = version
        unsafe try row.overwriteValues(count: Int(columnCount)) { values throws(StrataError) in
            unsafe try decodeValues(base, from: offset, to: body, layout: layout, wanted: wanted, into: values, corrupt)
        }
    }

    /// Decodes the column values that start at `start` over the elements of `values`.
    private static func decodeValues(
        _ base: UnsafeRawPointer, from start: Int, to body: Int, layout: EntityLayout, wanted: ContiguousArray<Bool>?,
        into values: UnsafeMutableBufferPointer<StoredValue>, _ corrupt: (String) -> StrataError
    ) throws(StrataError) {
        var offset = start
        for column in values.indices {
            guard offset < body else { throw corrupt("truncated") }
            let tag = unsafe base.load(fromByteOffset: offset, as: UInt8.self)
            offset &+= 1
            let expected = layout.classes[column]
            switch tag {
            case tagNull:
                unsafe values[column] = .null
            case tagInteger, tagReal:
                guard offset &+ 8 <= body else { throw corrupt("truncated") }
                let raw = unsafe UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset &+= 8
                if tag == tagInteger {
                    guard expected == .integer else { throw corrupt("column \(column) holds an integer") }
                    unsafe values[column] = .integer(Int64(bitPattern: raw))
                } else {
                    guard expected == .real else { throw corrupt("column \(column) holds a real") }
                    let real = Double(bitPattern: raw)
                    guard !real.isNaN else { throw corrupt("column \(column) holds NaN") }
                    unsafe values[column] = .real(real)
                }
            case tagText, tagBlob:
                guard let length = unsafe readVarint(base, &offset, end: body), length <= UInt64(body &- offset) else {
                    throw corrupt("bad length")
                }
                let slice = unsafe UnsafeRawBufferPointer(start: base + offset, count: Int(length))
                offset &+= Int(length)
                if let wanted, !wanted[column] {
                    guard expected == (tag == tagText ? .text : .blob) else {
                        throw corrupt("column \(column) holds \(tag == tagText ? "text" : "a blob")")
                    }
                    unsafe values[column] = .null
                } else if tag == tagText {
                    guard expected == .text else { throw corrupt("column \(column) holds text") }
                    guard let text = unsafe makeString(slice) else {
                        throw corrupt("column \(column) holds invalid UTF-8")
                    }
                    unsafe values[column] = .text(text)
                } else {
                    guard expected == .blob else { throw corrupt("column \(column) holds a blob") }
                    unsafe values[column] = unsafe .blob(
                        Data(bytes: base + (offset &- Int(length)), count: Int(length)))
                }
            default:
                throw corrupt("unknown tag \(tag) in column \(column)")
            }
        }
        guard offset == body else { throw corrupt("trailing bytes") }
    }

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

    /// A string from UTF-8 bytes, or nil when they are not valid UTF-8 (never repaired).
    @inline(__always)
    static func makeString(_ bytes: UnsafeRawBufferPointer) -> String? {
        let units = unsafe bytes.bindMemory(to: UInt8.self)
        var index = 0
        var isASCII = true
        while index &+ 8 <= units.count {
            if unsafe bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                isASCII = false
                break
            }
            index &+= 8
        }
        while isASCII && index < units.count {
            if unsafe units[index] >= 0x80 { isASCII = false }
            index &+= 1
        }
        // ASCII is valid UTF-8, so decoding cannot repair anything; otherwise validate.
        return unsafe isASCII ? String(decoding: units, as: UTF8.self) : String(validating: units, as: UTF8.self)
    }

    /// Reads a varint in its shortest form, the only one `ByteBuffer.appendVarint` writes: an overlong
    /// encoding (a final zero group) or one with bits past 64 is nil, so a row has one encoding.
    @inline(__always)
    static func readVarint(_ base: UnsafeRawPointer, _ offset: inout Int, end: Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < end, shift < 64 {
            let byte = unsafe base.load(fromByteOffset: offset, as: UInt8.self)
            offset &+= 1
            if shift == 63 && byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return byte == 0 && shift > 0 ? nil : result }
            shift += 7
        }
        return nil
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

/// What decoding needs to know about an entity: its name and each column's storage class.
struct EntityLayout: Sendable {
    var name: String
    var classes: ContiguousArray<StorageClass>
}

/// The row a reader decodes every key lookup into: its value array's storage serves the next
/// lookup when the caller copied the values out and kept no reference to the row.
///
/// Exempt from dynamic exclusivity checks (`@exclusivity(unchecked)`, an unsafe construct, so
/// it lives in this walled file): the check costs every lookup two runtime calls that can find
/// nothing, because ``decode(_:key:layout:)`` calls out to nothing that could reach the row
/// again, and the type is not `Sendable`, so one thread at a time uses it.
@safe final class ReusedRow {
    @exclusivity(unchecked) private var row = StoredRow(key: 0, version: 0, values: [])

    /// Decodes a stored row into the reused row and returns it.
    /// - Throws: `StrataError.storeCorrupt`, as ``RowCodec/decode(_:key:layout:)-(RawSpan,_,_)``.
    @inline(__always)
    func decode(_ bytes: RawSpan, key: Int64, layout: EntityLayout) throws(StrataError) -> StoredRow {
        try unsafe RowCodec.decode(bytes, key: key, layout: layout, into: &row)
        return unsafe row
    }
}
