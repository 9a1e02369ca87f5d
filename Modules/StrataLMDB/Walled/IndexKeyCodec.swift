import Foundation
import StrataStorage

/// Order-preserving byte encoding of index keys.
///
/// Each value is a tag byte followed by its payload, so that comparing encoded keys bytewise
/// (LMDB's default order) orders values like `StoredValue.order` within one storage class, with
/// null first:
/// - null `00`
/// - integer `01` + 8 bytes big-endian with the sign bit flipped
/// - real `02` + 8 bytes: the bit pattern made order-preserving (-0.0 is stored as 0.0)
/// - text `03` / blob `04` + bytes with `00` escaped as `00 FF`, terminated by `00 00`
///
/// Every component is self-delimiting, so keys of several columns compare column by column, and
/// the primary key (8 bytes big-endian) can follow them.
enum IndexKeyCodec {
    static let tagNull: UInt8 = 0, tagInteger: UInt8 = 1, tagReal: UInt8 = 2, tagText: UInt8 = 3, tagBlob: UInt8 = 4

    /// The tag non-null values of a storage class start with.
    static func tag(of storageClass: StorageClass) -> UInt8 {
        switch storageClass {
        case .integer: tagInteger
        case .real: tagReal
        case .text: tagText
        case .blob: tagBlob
        }
    }

    static func append(_ value: StoredValue, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(tagNull)
        case .integer(let v):
            out.append(tagInteger)
            appendBigEndian(UInt64(bitPattern: v) ^ (1 << 63), to: &out)
        case .real(let v):
            out.append(tagReal)
            let bits = (v == 0 ? 0.0 : v).bitPattern
            appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), to: &out)
        case .text(let text):
            out.append(tagText)
            appendEscaped(text.utf8, to: &out)
            out.append(contentsOf: [0, 0])
        case .blob(let data):
            out.append(tagBlob)
            appendEscaped(data, to: &out)
            out.append(contentsOf: [0, 0])
        }
    }

    /// ``append(_:to:)`` into a ``ByteBuffer``, byte for byte the same encoding.
    static func append(_ value: StoredValue, to out: ByteBuffer) {
        switch value {
        case .null:
            out.reserve(1)
            out.append(tagNull)
        case .integer(let v):
            out.reserve(9)
            out.append(tagInteger)
            out.appendBigEndian(UInt64(bitPattern: v) ^ (1 << 63))
        case .real(let v):
            out.reserve(9)
            out.append(tagReal)
            let bits = (v == 0 ? 0.0 : v).bitPattern
            out.appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63))
        case .text(let text):
            let utf8 = text.utf8
            out.reserve(3 &+ 2 &* utf8.count)
            out.append(tagText)
            if unsafe utf8.withContiguousStorageIfAvailable({
                unsafe appendEscaped(UnsafeRawBufferPointer($0), to: out)
            }) == nil {
                var copy = text
                copy.withUTF8 { unsafe appendEscaped(UnsafeRawBufferPointer($0), to: out) }
            }
            out.append(0)
            out.append(0)
        case .blob(let data):
            out.reserve(3 &+ 2 &* data.count)
            out.append(tagBlob)
            unsafe data.withUnsafeBytes { unsafe appendEscaped($0, to: out) }
            out.append(0)
            out.append(0)
        }
    }

    /// Appends `bytes` with `00` escaped as `00 FF` (reserving room for twice the bytes saves
    /// the buffer's growth checks their slow path).
    @inline(__always) @unsafe
    private static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to out: ByteBuffer) {
        // (An index loop: `swift format` would glue `for unsafe byte` into one word.)
        let count = bytes.count
        for index in 0..<count {
            let byte = unsafe bytes[index]
            out.append(byte)
            if byte == 0 { out.append(0xFF) }
        }
    }

    /// The encoded prefix shared by every text value starting with `prefix`.
    static func textPrefix(_ prefix: String) -> [UInt8] {
        var out: [UInt8] = [tagText]
        appendEscaped(prefix.utf8, to: &out)
        return out
    }

    static func appendEscaped(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        for byte in bytes {
            out.append(byte)
            if byte == 0 { out.append(0xFF) }
        }
    }

    static func appendBigEndian(_ value: UInt64, to out: inout [UInt8]) {
        var shift: UInt64 = 56
        while true {
            out.append(UInt8(truncatingIfNeeded: value &>> shift))
            if shift == 0 { return }
            shift &-= 8
        }
    }

    /// An entity or join key: 8 bytes big-endian (primary keys are positive, so this orders them).
    static func primaryKey(_ key: Int64) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(8)
        appendBigEndian(UInt64(bitPattern: key), to: &out)
        return out
    }

    /// Reads an 8-byte big-endian key at `offset`; nil when the bytes end before it (or
    /// `offset` is negative).
    @inline(__always)
    static func readPrimaryKey(_ bytes: RawSpan, at offset: Int = 0) -> Int64? {
        guard offset >= 0, bytes.byteCount - offset >= 8 else { return nil }
        return unsafe bytes.withUnsafeBytes {
            Int64(bitPattern: UInt64(bigEndian: unsafe $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        }
    }

    /// The primary key of a row in an entity database, whose keys are exactly 8 bytes.
    /// - Throws: `.storeCorrupt` naming the entity for a key of another length (real damage:
    ///   the engine writes no other key there).
    @inline(__always)
    static func rowKey(_ bytes: RawSpan, entity: String) throws(StrataError) -> Int64 {
        guard bytes.byteCount == 8, let key = readPrimaryKey(bytes) else {
            throw .storeCorrupt("entity \(entity) holds a malformed key of \(bytes.byteCount) bytes")
        }
        return key
    }

    /// A copy of the bytes of a span.
    static func array(_ bytes: RawSpan) -> [UInt8] {
        unsafe bytes.withUnsafeBytes { unsafe Array($0) }
    }

    /// The smallest byte string greater than every string that starts with `prefix`, or nil when
    /// there is none (the prefix is all `FF`).
    static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var out = prefix
        while let last = out.last {
            if last == 0xFF {
                out.removeLast()
            } else {
                out[out.count - 1] = last + 1
                return out
            }
        }
        return nil
    }
}
