import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

@Suite("LMDB row codec")
struct LMDBRowCodecTests {
    static let layout = EntityLayout(name: "Account", classes: [.text, .integer, .text, .real, .blob])
    static let values: ContiguousArray<StoredValue> = [
        .text("Checking"), .integer(12_345), .null, .real(-0.0), .blob(Data([1, 2, 3])),
    ]

    @Test("CRC-32C matches the standard check value")
    func crcCheckValue() {
        let bytes = Array("123456789".utf8)
        #expect(bytes.withUnsafeBytes { CRC32C.checksum($0) } == 0xE306_9283)
    }

    @Test("every single-bit flip of an encoded row is caught")
    func bitFlips() throws {
        let encoded = RowCodec.encode(version: 3, values: Self.values)
        let row = try encoded.withUnsafeBytes { try RowCodec.decode($0, key: 9, layout: Self.layout) }
        #expect(row == StoredRow(key: 9, version: 3, values: Self.values))
        for byte in encoded.indices {
            for bit in 0..<8 {
                var damaged = encoded
                damaged[byte] ^= UInt8(1 << bit)
                let error = LMDBFixture.strataError {
                    _ = try damaged.withUnsafeBytes { try RowCodec.decode($0, key: 9, layout: Self.layout) }
                }
                guard case .storeCorrupt(let detail, _)? = error else {
                    Issue.record("flip of bit \(bit) in byte \(byte) not caught")
                    return
                }
                #expect(detail.contains("Account") && detail.contains("9"))
            }
        }
        let wrongClass = EntityLayout(name: "Account", classes: [.integer, .integer, .text, .real, .blob])
        #expect(
            LMDBFixture.strataError {
                _ = try encoded.withUnsafeBytes { try RowCodec.decode($0, key: 9, layout: wrongClass) }
            } != nil)
    }

    @Test("invalid UTF-8 behind a valid checksum is corruption, never repaired text")
    func invalidUTF8() throws {
        var encoded = RowCodec.encode(
            version: 1, values: [.text("abcdefghé"), .integer(1), .null, .real(1), .blob(Data())])
        let index = try #require(encoded.firstIndex(of: 0xC3))
        encoded[index + 1] = 0x41
        let body = encoded.count - 4
        let crc = encoded.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<body])) }
        withUnsafeBytes(of: crc.littleEndian) { encoded.replaceSubrange(body..., with: $0) }
        let error = LMDBFixture.strataError {
            _ = try encoded.withUnsafeBytes { try RowCodec.decode($0, key: 5, layout: Self.layout) }
        }
        guard case .storeCorrupt(let detail, _)? = error else {
            Issue.record("expected .storeCorrupt, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("UTF-8"))
    }
}
