import Foundation
import StrataStorage

/// Times the LMDB row decoder in isolation, for `strata-bench --row-decode` (not an API for apps).
///
/// ```swift
/// let nanoseconds = LMDBRowDecodeTiming.nanosecondsPerRow(rounds: 100_000)
/// ```
@_spi(Benchmarks)
public enum LMDBRowDecodeTiming {
    /// The mean time to decode one encoded 5-column row (text, integer, null, real, blob), in
    /// nanoseconds, over `rounds` decodes, and the row's encoded size in bytes.
    /// - Throws: `StrataError.storeCorrupt` if the row does not decode (it always should).
    public static func nanosecondsPerRow(rounds: Int) throws -> (nanoseconds: Double, bytes: Int) {
        let layout = EntityLayout(name: "Account", classes: [.text, .integer, .text, .real, .blob])
        let encoded = RowCodec.encode(
            version: 1, values: [.text("Checking"), .integer(12_345), .null, .real(-0.0), .blob(Data([1, 2, 3]))])
        let rounds = max(rounds, 1)
        var total = 0
        let elapsed = try ContinuousClock().measure {
            let buffer = ByteBuffer(capacity: encoded.count)
            for byte in encoded { buffer.append(byte) }
            try buffer.withBytes { (bytes) throws(StrataError) in
                for _ in 0..<rounds { total &+= try RowCodec.decode(bytes, key: 1, layout: layout).values.count }
            }
        }
        guard total == rounds &* 5 else { return (.nan, encoded.count) }
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        return (nanoseconds / Double(rounds), encoded.count)
    }
}
