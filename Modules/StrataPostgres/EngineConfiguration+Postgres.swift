import Foundation
public import StrataStorage

extension EngineConfiguration {
    /// A store in one schema (namespace) of a PostgreSQL database, shared by every process and
    /// machine that opens the same URL and schema.
    ///
    /// Several stores can share one database, each in its own schema. The schema is created when
    /// missing (unless `options.creation` is `.requireExistingSchema`); it then holds one table
    /// per entity, one per many-to-many join and a `strata_metadata` table, which `psql` reads
    /// like any other database.
    ///
    /// The password may be in the URL, in `PGPASSWORD`, or in the file `PGPASSFILE` names
    /// (`~/.pgpass` by default). It never appears in an error message, a log or
    /// ``StrataStorage/EngineConfiguration/location``, which holds the URL without it.
    ///
    /// ```swift
    /// let engine = EngineConfiguration.postgres(
    ///     url: "postgresql://app@db.internal:5432/ledger", schema: "books")
    /// let container = try PersistentContainer(schema: schema, engine: engine)
    /// ```
    /// - Parameters:
    ///   - url: a libpq connection URL (`postgresql://user@host:port/database?param=value`) or
    ///     key-value string (`host=… dbname=…`).
    ///   - schema: the store's schema: 1 to 63 bytes, not starting with `pg_`.
    ///   - options: pool size, timeouts and creation.
    /// - Returns: a configuration that creates or opens the store when the container opens. It
    ///   throws `StrataError.misuse` for a malformed URL or schema name, `.io` when the server
    ///   cannot be reached within the connect timeout or refuses the login, `.notAStore` for a
    ///   missing database, a missing schema (with `.requireExistingSchema`) or a schema holding
    ///   tables that are not a Strata store, and the same schema errors as the other engines
    ///   (`.schemaMismatch`, `.storeNewerThanModel`, migration errors). Every error keeps the
    ///   server's SQLSTATE and message in its `NativeError`.
    public static func postgres(
        url: String, schema: String, options: PostgresOptions = .init()
    )
        -> EngineConfiguration
    {
        var configuration = EngineConfiguration(
            name: "postgres", location: PostgresLocation.url(redacting: url, schema: schema)
        ) { storeSchema in
            try PostgresEngine.open(url: url, schema: schema, storeSchema: storeSchema, options: options)
        }
        configuration.storeContents = PostgresStoreContents.contents(url: url, schema: schema, options: options)
        return configuration
    }
}
