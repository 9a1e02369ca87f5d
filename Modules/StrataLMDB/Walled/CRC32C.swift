import CStrataCRC

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
///
/// Every stored row carries this checksum so that damaged bytes become
/// `StrataError.storeCorrupt` instead of wrong data.
///
/// `checksum` uses the CPU's CRC-32C instruction when it has one — SSE4.2 `crc32` on x86_64,
/// the CRC extension's `crc32c` on arm64 — through the C target `CStrataCRC`, which checks
/// the CPU once. Otherwise (another architecture, or a CPU without the feature) it falls
/// back to `softwareChecksum`, slicing-by-8 in Swift. Both give the same result.
///
/// Walled file (strict memory safety): the pointer-taking functions are `@unsafe`; safe code
/// calls ``checksum(_:)-(RawSpan)``.
enum CRC32C {
    /// Whether `checksum` runs on the CPU's CRC-32C instruction (checked once).
    static let usesHardware = strata_crc32c_hardware_available()

    /// The checksum of `count` bytes at `start`.
    @unsafe
    static func checksum(_ start: UnsafeRawPointer, count: Int) -> UInt32 {
        unsafe checksum(start, count: count, hardware: usesHardware)
    }

    /// ``checksum(_:count:)`` for a caller that read ``usesHardware`` once and passes it as
    /// `hardware` (a scan checking every row saves the lazy global's check per row).
    @unsafe @inline(__always)
    static func checksum(_ start: UnsafeRawPointer, count: Int, hardware: Bool) -> UInt32 {
        guard hardware else { return unsafe softwareChecksum(start, count: count) }
        return unsafe ~strata_crc32c_hardware_update(0xFFFF_FFFF, start, count)
    }

    /// The checksum of the bytes of a span.
    @inline(__always)
    static func checksum(_ bytes: RawSpan) -> UInt32 {
        unsafe bytes.withUnsafeBytes { unsafe checksum($0) }
    }

    /// The checksum of an array's bytes.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        unsafe bytes.withUnsafeBytes { unsafe checksum($0) }
    }

    /// The checksum of a byte buffer.
    @unsafe
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        return unsafe checksum(base, count: bytes.count)
    }

    /// The checksum computed with the CPU's CRC-32C instruction, or `nil` when it has none.
    @unsafe
    static func hardwareChecksum(_ start: UnsafeRawPointer, count: Int) -> UInt32? {
        var crc: UInt32 = 0xFFFF_FFFF
        return unsafe strata_crc32c(&crc, start, count) ? ~crc : nil
    }

    /// Eight 256-entry tables, laid out one after another (table `t` starts at `t * 256`).
    static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            table[byte] = crc
        }
        for byte in 0..<256 {
            var crc = table[byte]
            for slice in 1..<8 {
                crc = table[Int(crc & 0xFF)] ^ (crc >> 8)
                table[slice * 256 + byte] = crc
            }
        }
        return table
    }()

    /// The checksum computed slicing-by-8 in Swift, the fallback without the instruction.
    @unsafe
    static func softwareChecksum(_ start: UnsafeRawPointer, count: Int) -> UInt32 {
        unsafe table.withUnsafeBufferPointer { tablePointer in
            let t = unsafe tablePointer.baseAddress.unsafelyUnwrapped
            var crc: UInt32 = 0xFFFF_FFFF
            var p = unsafe start
            var remaining = count
            while remaining >= 8 {
                let word = unsafe UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
                let low = UInt32(truncatingIfNeeded: word) ^ crc
                let high = UInt32(truncatingIfNeeded: word &>> 32)
                let a = unsafe t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low &>> 8) & 0xFF)]
                let b = unsafe t[5 * 256 + Int((low &>> 16) & 0xFF)] ^ t[4 * 256 + Int(low &>> 24)]
                let c = unsafe t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high &>> 8) & 0xFF)]
                let d = unsafe t[1 * 256 + Int((high &>> 16) & 0xFF)] ^ t[Int(high &>> 24)]
                crc = a ^ b ^ c ^ d
                unsafe p += 8
                remaining &-= 8
            }
            while remaining > 0 {
                crc = unsafe t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (crc &>> 8)
                unsafe p += 1
                remaining &-= 1
            }
            return ~crc
        }
    }
}
