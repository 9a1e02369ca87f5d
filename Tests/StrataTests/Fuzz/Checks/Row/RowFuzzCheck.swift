import Foundation
import StrataStorage

@testable import Strata
@testable import StrataLMDB

/// The LMDB row decoder target. Input layout:
///
/// ```
/// mode:u8  columnCount:u8 (mod 9)  class:u8 (mod 4) × columnCount  row bytes…
/// ```
/// Mode bit 0 set appends the correct CRC-32C to the row bytes, so the parser behind the
/// checksum sees arbitrary bodies; clear, the bytes are decoded as they are.
///
/// Asserts: decoding never traps or reads outside the row (the row sits in an allocation of
/// exactly its size, so AddressSanitizer sees any over-read) and fails only with
/// `.storeCorrupt`; a decoded row has the layout's shape, holds no NaN, and re-encodes to
/// exactly the input bytes (the format has one encoding per row).
enum RowFuzzCheck {
    static let classes: [StorageClass] = [.integer, .real, .text, .blob]

    static func check(_ bytes: [UInt8]) throws(FuzzViolation) {
        guard bytes.count >= 2 else { return }
        let appendChecksum = bytes[0] & 1 == 1
        let columnCount = Int(bytes[1] % 9)
        guard bytes.count >= 2 + columnCount else { return }
        let layout = EntityLayout(
            name: "Fuzz", classes: ContiguousArray(bytes[2..<(2 + columnCount)].map { classes[Int($0 % 4)] }))
        var row = Array(bytes[(2 + columnCount)...])
        if appendChecksum {
            let crc = row.withUnsafeBytes { CRC32C.checksum($0) }
            withUnsafeBytes(of: crc.littleEndian) { row.append(contentsOf: $0) }
        }
        try check(row: row, layout: layout)
    }

    /// Decodes `row` from an allocation of exactly its size and checks the outcome.
    static func check(row: [UInt8], layout: EntityLayout) throws(FuzzViolation) {
        let key: Int64 = 7
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: row.count, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: row)
        let decoded: StoredRow
        do {
            decoded = try RowCodec.decode(UnsafeRawBufferPointer(buffer), key: key, layout: layout)
        } catch {
            guard case .storeCorrupt = error else {
                throw FuzzViolation("decoding \(hex(row)) failed with \(error), not .storeCorrupt")
            }
            return
        }
        guard decoded.key == key, decoded.values.count == layout.classes.count else {
            throw FuzzViolation(
                """
                \(hex(row)) decoded to key \(decoded.key) with \(decoded.values.count) values for \
                \(layout.classes.count) columns
                """
            )
        }
        for (value, storageClass) in zip(decoded.values, layout.classes) {
            guard storageClass.admits(value) else {
                throw FuzzViolation("\(hex(row)) decoded \(value) into a \(storageClass) column")
            }
            if case .real(let number) = value, number.isNaN { throw FuzzViolation("\(hex(row)) decoded NaN") }
        }
        let reencoded = RowCodec.encode(version: decoded.version, values: decoded.values)
        guard reencoded == row else {
            throw FuzzViolation("\(hex(row)) decodes but re-encodes as \(hex(reencoded))")
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
