@_spi(Benchmarks) import StrataLMDB

/// `strata-bench --row-decode`: the LMDB row decoder's cost per row, printed (moved here from
/// `LMDBRowCodecTests`, where it only printed).
enum RowDecodeTiming {
    static func run() throws {
        let (nanoseconds, bytes) = try LMDBRowDecodeTiming.nanosecondsPerRow(rounds: 1_000_000)
        print("LMDB row decode: \(Int(nanoseconds)) ns per 5-column row (\(bytes) bytes), mean of 1,000,000 decodes")
    }
}
