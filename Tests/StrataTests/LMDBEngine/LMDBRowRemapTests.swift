import Foundation
import StrataStorage
import Testing

@testable import StrataLMDB

/// `RowCodec.remap`, which a migration uses to rewrite rows byte for byte: it must give exactly
/// what decoding, mapping and encoding the values gives, and refuse a damaged row.
@Suite("LMDB row remap")
struct LMDBRowRemapTests {
    static let layout = EntityLayout(name: "Account", classes: [.text, .integer, .text, .real, .blob])
    static let rows: [ContiguousArray<StoredValue>] = [
        [.text("Checking"), .integer(12_345), .null, .real(-0.0), .blob(Data([1, 2, 3]))],
        [.text("Épargne ✓"), .null, .text(""), .real(.infinity), .null],
        [.null, .integer(-1), .text(String(repeating: "x", count: 300)), .null, .blob(Data())],
    ]

    /// Remaps `values` (stored at version 7) through the byte path.
    private func remap(
        _ values: ContiguousArray<StoredValue>, sources: [Int?], fills: [StoredValue?]
    ) throws -> [UInt8] {
        let stored = RowCodec.encode(version: 7, values: values)
        let out = ByteBuffer()
        var boundaries: [Int] = []
        try RowCodec.remap(
            stored.span.bytes, key: 1, layout: Self.layout, sources: sources,
            fills: fills.map { $0.map(RowCodec.encodedValue) }, boundaries: &boundaries, into: out)
        return out.array
    }

    @Test("columns reordered, dropped, added with a fill and nulls filled give the re-encoded row")
    func remapMatchesReencoding() throws {
        // New layout: old 3 (real), old 0 (text, null → "none"), new column (fill 42), old 2 (text).
        let sources: [Int?] = [3, 0, nil, 2]
        let fills: [StoredValue?] = [nil, .text("none"), .integer(42), nil]
        for values in Self.rows {
            let expected: ContiguousArray<StoredValue> = ContiguousArray(
                zip(sources, fills).map { source, fill in
                    let value = source.map { values[$0] } ?? .null
                    return value.isNull ? (fill ?? .null) : value
                })
            #expect(try remap(values, sources: sources, fills: fills) == RowCodec.encode(version: 7, values: expected))
        }
    }

    @Test("a damaged row or one of another layout is refused as corrupt")
    func damagedRowsAreRefused() {
        let stored = RowCodec.encode(version: 7, values: Self.rows[0])
        var damaged = stored
        damaged[12] ^= 0x40
        let wrongLayout = EntityLayout(name: "Account", classes: [.integer, .integer, .text, .real, .blob])
        for (bytes, layout) in [(damaged, Self.layout), (stored, wrongLayout), (Array(stored.prefix(13)), Self.layout)]
        {
            let out = ByteBuffer()
            var boundaries: [Int] = []
            #expect {
                try RowCodec.remap(
                    bytes.span.bytes, key: 5, layout: layout, sources: [0], fills: [nil], boundaries: &boundaries,
                    into: out)
            } throws: { error in
                guard case .storeCorrupt(let detail, _)? = error as? StrataError else { return false }
                return detail.contains("row 5 of entity Account")
            }
        }
    }
}
