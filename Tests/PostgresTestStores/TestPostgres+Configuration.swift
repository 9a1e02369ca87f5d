public import Foundation
public import StrataPostgres
public import StrataStorage
public import StrataTestSupport

/// The project's own PostgreSQL test stores: kept out of the `StrataTestSupport` product so that a
/// user's test target depending on it does not need the PostgreSQL client library.
extension TestPostgres {
    /// The configuration of the test store at `location` (its `location` is that path, not the
    /// server's URL). Without a server, opening fails loudly with `.misuse` naming the variable:
    /// the PostgreSQL engine is never skipped.
    public static func configuration(
        at location: URL, options: PostgresOptions = PostgresOptions(poolSize: 4)
    ) -> EngineConfiguration {
        guard let url else {
            return EngineConfiguration(name: "postgres", location: location) { _ in
                throw StrataError.misuse(
                    """
                    \(variable) is not set, so the PostgreSQL tests have no server: run them with \
                    `bash Scripts/test.sh`, which starts one, or set \(variable) to a server's URL
                    """)
            }
        }
        var configuration = EngineConfiguration.postgres(url: url, schema: schema(for: location), options: options)
        // The location stays the path the test chose (the engine itself never reads it): a
        // second process handed `--store <location.path>` maps it to the same schema, and the
        // tests key their stores by path on every engine.
        configuration.location = location
        return configuration
    }
}
