import StrataTestSupport
import Testing

@testable import StrataLMDB

@Suite("LMDB CRC-32C")
struct LMDBCRC32CTests {
    /// Bit by bit, straight from the definition: reflected polynomial 0x82F63B78, initial value
    /// and final XOR 0xFFFFFFFF.
    static func reference(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    /// The standard check value and the iSCSI (RFC 3720) test patterns.
    static let vectors: [(bytes: [UInt8], crc: UInt32)] = [
        (Array("123456789".utf8), 0xE306_9283),
        ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
    ]

    /// Runs `body` on random bytes of every length 0…300 at every start offset 0…7 from an
    /// 8-byte boundary.
    static func forEachLengthAndAlignment(_ body: (UnsafeRawBufferPointer) -> Void) {
        var random = SeededGenerator(seed: 0xC5C3_2C)
        let maxLength = 300
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: maxLength + 8, alignment: 8)
        defer { storage.deallocate() }
        for length in 0...maxLength {
            for offset in 0..<8 {
                for index in storage.indices { storage[index] = UInt8.random(in: 0...255, using: &random) }
                body(UnsafeRawBufferPointer(rebasing: storage[offset..<(offset + length)]))
            }
        }
    }

    @Test("the bitwise reference matches the known vectors")
    func referenceVectors() {
        for vector in Self.vectors {
            #expect(vector.bytes.withUnsafeBytes { Self.reference($0) } == vector.crc)
        }
    }

    @Test("checksum matches the known vectors and the reference")
    func checksum() {
        for vector in Self.vectors {
            #expect(vector.bytes.withUnsafeBytes { CRC32C.checksum($0) } == vector.crc)
        }
        Self.forEachLengthAndAlignment { bytes in
            #expect(CRC32C.checksum(bytes) == Self.reference(bytes), "length \(bytes.count)")
        }
    }

    @Test("the CPU instruction path matches the known vectors and the reference", .enabled(if: CRC32C.usesHardware))
    func hardware() throws {
        for vector in Self.vectors {
            let crc = vector.bytes.withUnsafeBytes { bytes in
                CRC32C.hardwareChecksum(bytes.baseAddress!, count: bytes.count)
            }
            #expect(crc == vector.crc)
        }
        Self.forEachLengthAndAlignment { bytes in
            let crc = CRC32C.hardwareChecksum(bytes.baseAddress!, count: bytes.count)
            #expect(crc == Self.reference(bytes), "length \(bytes.count)")
        }
    }

    @Test("the Swift slicing-by-8 fallback matches the known vectors and the reference")
    func software() {
        for vector in Self.vectors {
            let crc = vector.bytes.withUnsafeBytes { bytes in
                CRC32C.softwareChecksum(bytes.baseAddress!, count: bytes.count)
            }
            #expect(crc == vector.crc)
        }
        Self.forEachLengthAndAlignment { bytes in
            #expect(
                CRC32C.softwareChecksum(bytes.baseAddress!, count: bytes.count) == Self.reference(bytes),
                "length \(bytes.count)")
        }
    }
}
