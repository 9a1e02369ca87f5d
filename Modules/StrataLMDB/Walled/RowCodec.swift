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
            guard appendValue(values[column], checking: classes?[column], into: out) else { return false }
        }
        let crc = out.withBytes { CRC32C.checksum($0) }
        out.reserve(4)
        out.appendLittleEndian(crc)
        return true
    }

    /// Appends one value, its tag and payload. With `storageClass`, appends nothing and returns
    /// false for a value of another class, or a NaN (null fits every column).
    @inline(__always)
    static func appendValue(_ value: StoredValue, checking storageClass: StorageClass?, into out: ByteBuffer) -> Bool {
        switch value {
        case .null:
            out.reserve(1)
            out.append(tagNull)
        case .integer(let v):
            if let storageClass, storageClass != .integer { return false }
            out.reserve(9)
            out.append(tagInteger)
            out.appendLittleEndian(UInt64(bitPattern: v))
        case .real(let v):
            if let storageClass, storageClass != .real || v.isNaN { return false }
            out.reserve(9)
            out.append(tagReal)
            out.appendLittleEndian(v.bitPattern)
        case .text(let text):
            if let storageClass, storageClass != .text { return false }
            let utf8 = text.utf8
            out.reserve(11 &+ utf8.count)
            out.append(tagText)
            out.appendVarint(UInt64(utf8.count))
            out.append(utf8: text)
        case .blob(let data):
            if let storageClass, storageClass != .blob { return false }
            out.reserve(11 &+ data.count)
            out.append(tagBlob)
            out.appendVarint(UInt64(data.count))
            out.append(contentsOf: data)
        }
        return true
    }

    /// Re-encodes a stored row at `version` with the columns in `replaced` taken from `values`
    /// and every other column's bytes copied from `original` as they are: an update that changes a
    /// few columns makes no value of the others (no text or blob is decoded or encoded again).
    ///
    /// `original` must be a row that ``decode(_:key:layout:wanted:into:)-(RawSpan,_,_,_,_)``
    /// accepted. Returns false, with `out` unspecified, when a replaced value is not of its column's
    /// class in `classes` (or is NaN), or when `original` does not parse.
    static func splice(
        _ original: RawSpan, version: Int64, values: ContiguousArray<StoredValue>, replaced: [Int],
        classes: ContiguousArray<StorageClass>, into out: ByteBuffer
    ) -> Bool {
        unsafe original.withUnsafeBytes { raw in
            let count = raw.count
            guard count >= 14, let base = raw.baseAddress, classes.count == values.count else { return false }
            let body = count &- 4
            var offset = 9
            guard let columnCount = unsafe readVarint(base, &offset, end: body), columnCount == UInt64(values.count)
            else { return false }
            out.reset()
            out.reserve(count &+ 32)
            out.append(formatVersion)
            out.appendLittleEndian(UInt64(bitPattern: version))
            out.appendVarint(UInt64(values.count))
            for column in values.indices {
                let start = offset
                guard offset < body else { return false }
                let tag = unsafe base.load(fromByteOffset: offset, as: UInt8.self)
                offset &+= 1
                switch tag {
                case tagNull: break
                case tagInteger, tagReal: offset &+= 8
                case tagText, tagBlob:
                    guard let length = unsafe readVarint(base, &offset, end: body), length <= UInt64(body &- offset)
                    else { return false }
                    offset &+= Int(length)
                default: return false
                }
                guard offset <= body else { return false }
                if replaced.contains(column) {
                    guard appendValue(values[column], checking: classes[column], into: out) else { return false }
                } else {
                    unsafe out.append(UnsafeRawBufferPointer(start: base + start, count: offset &- start))
                }
            }
            guard offset == body else { return false }
            let crc = out.withBytes { CRC32C.checksum($0) }
            out.reserve(4)
            out.appendLittleEndian(crc)
            return true
        }
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
