import Foundation
import StrataStorage
import StrataTestSupport

@testable import StrataPostgres

/// A `PostgresEngine` of its own for an engine-level test: a fresh schema on the test server
/// (`Scripts/with-postgres.sh`), opened and closed on a dispatch queue, because every call
/// blocks on the server and must not hold a cooperative thread.
enum PostgresEngineFixture {
    /// Opens a fresh store of `schema` with `options`, runs `body` with its engine, and closes it.
    /// `serverSettings` (`-c name=value …`) go into the URL's `options`, for every connection.
    /// - Throws: `.misuse` when no test server is set, else what the open or `body` throws.
    static func withEngine<T: Sendable>(
        _ schema: StoreSchema, options: PostgresOptions = PostgresOptions(), serverSettings: String? = nil,
        _ body: @escaping @Sendable (PostgresEngine) throws -> T
    ) async throws -> T {
        guard let serverURL = TestPostgres.url else {
            throw StrataError.misuse("\(TestPostgres.variable) is not set: run with Scripts/with-postgres.sh")
        }
        var url = serverURL
        if let serverSettings {
            let encoded = serverSettings.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            url += (url.contains("?") ? "&" : "?") + "options=" + encoded
        }
        let finalURL = url
        let schemaName = PostgresSQL.uniqueSchema("t_")
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        let engine = try PostgresEngine.open(
                            url: finalURL, schema: schemaName, storeSchema: schema, options: options)
                        defer { engine.close() }
                        return try body(engine)
                    })
            }
        }
    }
}
