public import Foundation

/// The PostgreSQL server the tests use, and how a test store's location maps to a store on it.
///
/// The tests find the server through one environment variable, `STRATA_POSTGRES_URL`, which
/// `Scripts/test.sh` sets after starting a throwaway cluster (`Scripts/with-postgres.sh`).
/// A store location (a path inside a test's temporary directory, as for the embedded engines)
/// maps to a schema named after a hash of the path, so a second process given the same path
/// (`--store PATH`) opens the same store.
///
/// Needs no PostgreSQL client library: a test target that uses this product builds without
/// `libpq-dev`. (The project's own tests make their configurations with
/// `TestPostgres.configuration(at:options:)` from the non-product target `PostgresTestStores`.)
public enum TestPostgres {
    /// The variable that names the test server.
    public static let variable = "STRATA_POSTGRES_URL"

    /// The test server's URL, or nil when the variable is unset.
    public static var url: String? {
        ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The schema of the store at `location`: `s_` and 16 hex digits of the path's FNV-1a hash.
    public static func schema(for location: URL) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in location.standardizedFileURL.path.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "s_" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
