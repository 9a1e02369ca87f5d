import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// The walled rooms of the LMDB engine (the byte buffer, the row and index-key codecs, the
/// transaction wrapper) keep their promises in release builds: stored bytes that are cut short,
/// too long or lie about their lengths are a typed `.storeCorrupt`, values that do not match
/// their columns are refused, and no append or read goes outside its memory.
@Suite("LMDB hostile bytes")
struct LMDBHostileBytesTests {
    static let layout = EntityLayout(name: "Account", classes: [.text, .integer, .text, .real, .blob])
    static let values: ContiguousArray<StoredValue> = [
        .text("Checking"), .integer(12_345), .null, .real(-0.0), .blob(Data([1, 2, 3])),
    ]

    /// `body` followed by its CRC-32C, little-endian: bytes that pass the checksum, so that
    /// the decoder's structural checks are the ones tested.
    static func sealed(_ body: [UInt8]) -> [UInt8] {
        let crc = body.withUnsafeBytes { CRC32C.checksum($0) }
        return body + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
    }

    /// The decoding error of `bytes`, decoded from an allocation of exactly their size.
    static func decodingError(_ bytes: [UInt8], layout: EntityLayout = layout) -> StrataError? {
        LMDBFixture.strataError {
            let buffer = ByteBuffer(capacity: bytes.count)
            for byte in bytes { buffer.append(byte) }
            _ = try buffer.withBytes { (span) throws(StrataError) in try RowCodec.decode(span, key: 9, layout: layout) }
        }
    }

    @Test("every truncation and every extension of a row, re-sealed with a valid checksum, is storeCorrupt")
    func truncatedAndOversizedRows() throws {
        let encoded = RowCodec.encode(version: 3, values: Self.values)
        let body = Array(encoded.dropLast(4))
        #expect(
            try RowCodec.decode(encoded, key: 9, layout: Self.layout)
                == StoredRow(key: 9, version: 3, values: Self.values))
        for cut in 0..<body.count {
            let error = Self.decodingError(Self.sealed(Array(body[..<cut])))
            guard case .storeCorrupt(let detail, _)? = error else {
                Issue.record("a row cut to \(cut) of \(body.count) bytes gave \(String(describing: error))")
                continue
            }
            #expect(detail.contains("row 9 of entity Account"))
        }
        for extra in [[0], [0, 0, 0, 0], [UInt8](repeating: 0xFF, count: 64)] as [[UInt8]] {
            guard case .storeCorrupt(let detail, _)? = Self.decodingError(Self.sealed(body + extra)) else {
                Issue.record("a row with \(extra.count) extra bytes decoded")
                continue
            }
            #expect(detail.contains("trailing bytes"))
        }
    }

    /// The header of a one-text-column row: format 1, version 1, one column, the text tag.
    static let textHeader: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0, 0, 1, RowCodec.tagText]

    @Test("a text or blob whose length runs past the row, up to 2^64 - 1, is storeCorrupt, not an over-read")
    func lyingLengths() {
        let layout = EntityLayout(name: "Account", classes: [.text])
        let payload = Array("abc".utf8)
        let lengths: [[UInt8]] = [
            [4], // one byte past the end
            [0x80, 0x80, 0x80, 0x80, 0x08], // 2^31
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], // 2^63 - 1
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], // 2^64 - 1
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], // past 64 bits
        ]
        #expect(Self.decodingError(Self.sealed(Self.textHeader + [3] + payload), layout: layout) == nil)
        for length in lengths {
            let error = Self.decodingError(Self.sealed(Self.textHeader + length + payload), layout: layout)
            guard case .storeCorrupt(let detail, _)? = error else {
                Issue.record("length bytes \(length) gave \(String(describing: error))")
                continue
            }
            #expect(detail.contains("bad length"))
        }
        let blobLayout = EntityLayout(name: "Account", classes: [.blob])
        var blobRow = Self.textHeader
        blobRow[blobRow.count - 1] = RowCodec.tagBlob
        guard
            case .storeCorrupt? = Self.decodingError(
                Self.sealed(blobRow + [0x80, 0x80, 0x80, 0x80, 0x08] + payload), layout: blobLayout)
        else {
            Issue.record("a blob of length 2^31 in 3 bytes decoded")
            return
        }
    }

    @Test("a column count of 2^62 or an overlong one is storeCorrupt, before any value is read")
    func lyingColumnCounts() {
        let layout = EntityLayout(name: "Account", classes: [.integer])
        let header: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0, 0]
        let value: [UInt8] = [RowCodec.tagInteger, 1, 0, 0, 0, 0, 0, 0, 0]
        #expect(Self.decodingError(Self.sealed(header + [1] + value), layout: layout) == nil)
        for count in [[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40], [0x81, 0x00], [0]] as [[UInt8]] {
            guard
                case .storeCorrupt(let detail, _)? = Self.decodingError(
                    Self.sealed(header + count + value), layout: layout)
            else {
                Issue.record("column count bytes \(count) decoded")
                continue
            }
            #expect(detail.contains("column count"))
        }
    }

    @Test("encoding refuses values its storage classes do not describe, however many there are")
    func encodingWithMismatchedClasses() {
        let buffer = ByteBuffer()
        let three: ContiguousArray<StoredValue> = [.integer(1), .integer(2), .integer(3)]
        #expect(RowCodec.encode(version: 1, values: three, checking: [.integer, .integer, .integer], into: buffer))
        #expect(
            !RowCodec.encode(
                version: 1, values: three, checking: [.integer, .integer, .integer, .integer], into: buffer))
        // Fewer classes than values used to be read past their end.
        #expect(!RowCodec.encode(version: 1, values: three, checking: [.integer], into: buffer))
        #expect(!RowCodec.encode(version: 1, values: three, checking: [], into: buffer))
    }

    @Test("appends past the reserved room grow the buffer, in release builds too, with every byte kept")
    func appendsWithoutReserve() {
        let buffer = ByteBuffer(capacity: 16)
        var expected: [UInt8] = []
        for round in 0..<300 {
            let byte = UInt8(truncatingIfNeeded: round)
            buffer.append(byte)
            expected.append(byte)
            buffer.appendBigEndian(UInt64(round))
            expected += (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(round) >> (8 * $0)) }
            buffer.appendVarint(UInt64.max)
            expected += [UInt8](repeating: 0xFF, count: 9) + [0x01]
        }
        let blob = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        buffer.append(contentsOf: blob)
        expected += blob
        buffer.append(utf8: String(repeating: "é", count: 3_000))
        expected += Array(String(repeating: "é", count: 3_000).utf8)
        #expect(buffer.count == expected.count)
        #expect(buffer.count <= buffer.capacity)
        #expect(buffer.array == expected)
    }

    @Test("an 8-byte key is read only when 8 bytes are there, at any offset a caller passes")
    func primaryKeyBounds() {
        let buffer = ByteBuffer()
        for byte in IndexKeyCodec.primaryKey(0x0102_0304_0506_0708) { buffer.append(byte) }
        buffer.withBytes { span in
            #expect(IndexKeyCodec.readPrimaryKey(span) == 0x0102_0304_0506_0708)
            #expect(IndexKeyCodec.readPrimaryKey(span, at: 1) == nil)
            #expect(IndexKeyCodec.readPrimaryKey(span, at: -1) == nil)
            #expect(IndexKeyCodec.readPrimaryKey(span, at: Int.max) == nil)
            #expect(IndexKeyCodec.readPrimaryKey(span, at: Int.min) == nil)
        }
    }

    @Test("hostile bytes written into a real store file reach the reader as storeCorrupt on every read path")
    func hostileStoreFile() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        let lmdb = try #require(engine as? LMDBEngine)
        try LMDBFixture.insert(engine, LMDBFixture.account, 1, [.text("good"), .integer(1), .null])
        let account = lmdb.catalog.entities[LMDBFixture.account]
        // Row 2: a name whose length runs past the row, behind a valid checksum.
        let lying = Self.sealed([1, 1, 0, 0, 0, 0, 0, 0, 0, 3, RowCodec.tagText, 0x80, 0x80, 0x04] + Array("bad".utf8))
        try lmdb.environment.write("test") { txn in
            try txn.put(account.dbi, primaryKey: 2, lying)
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.row(entity: LMDBFixture.account, key: 1)?.values == [.text("good"), .integer(1), .null])
        let lookup = LMDBFixture.strataError { _ = try reader.row(entity: LMDBFixture.account, key: 2) }
        let scan = LMDBFixture.strataError { _ = try reader.rows(for: FetchPlan(entity: LMDBFixture.account)) }
        let count = LMDBFixture.strataError {
            _ = try reader.count(entity: LMDBFixture.account, filter: .compare(column: 1, .equal, .integer(1)))
        }
        // Aggregates over every row read the rows in place: grouped by the damaged column, and
        // reading none of it (a column nobody reads is still checked).
        let grouped = LMDBFixture.strataError {
            _ = try reader.aggregate(
                AggregatePlan(entity: LMDBFixture.account, groupBy: [0], functions: [.sum(column: 1)]))
        }
        let counted = LMDBFixture.strataError {
            _ = try reader.aggregate(AggregatePlan(entity: LMDBFixture.account, functions: [.count]))
        }
        let paths = [
            ("lookup", lookup), ("scan", scan), ("filtered count", count), ("grouped aggregate", grouped),
            ("counting aggregate", counted),
        ]
        for (path, error) in paths {
            guard case .storeCorrupt(let detail, _)? = error else {
                Issue.record("\(path): expected storeCorrupt, got \(String(describing: error))")
                continue
            }
            #expect(detail.contains("row 2 of entity Account"), "\(path): \(detail)")
            #expect(detail.contains("bad length"), "\(path): \(detail)")
        }
    }

    @Test("a key or index entry of the wrong length in a real store file is storeCorrupt")
    func malformedKeysInStoreFile() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        let lmdb = try #require(engine as? LMDBEngine)
        try LMDBFixture.insert(engine, LMDBFixture.account, 1, [.text("good"), .integer(1), .null])
        let account = lmdb.catalog.entities[LMDBFixture.account]
        let index = try #require(account.indexes.first)
        // A 7-byte key in the entity database, and an index entry whose value is 3 bytes.
        try lmdb.environment.write("test") { txn in
            try txn.put(
                account.dbi, [0, 0, 0, 0, 0, 0, 9],
                RowCodec.encode(version: 1, values: [.text("short"), .integer(1), .null]))
            var key: [UInt8] = []
            IndexKeyCodec.append(.text("zzz"), to: &key)
            try txn.put(index.dbi, key, [0, 0, 1])
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let scan = LMDBFixture.strataError { _ = try reader.rows(for: FetchPlan(entity: LMDBFixture.account)) }
        guard case .storeCorrupt(let detail, _)? = scan else {
            Issue.record("scan: expected storeCorrupt, got \(String(describing: scan))")
            return
        }
        #expect(detail.contains("malformed key of 7 bytes"))
        let byIndex = LMDBFixture.strataError {
            _ = try reader.rows(
                for: FetchPlan(entity: LMDBFixture.account, filter: .compare(column: 0, .equal, .text("zzz"))))
        }
        guard case .storeCorrupt(let indexDetail, _)? = byIndex else {
            Issue.record("index lookup: expected storeCorrupt, got \(String(describing: byIndex))")
            return
        }
        #expect(indexDetail.contains("malformed entry"))
    }
}
