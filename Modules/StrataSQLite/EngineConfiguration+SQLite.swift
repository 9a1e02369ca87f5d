public import Foundation
public import StrataStorage

extension EngineConfiguration {
    /// A SQLite store in one file (plus its `-wal` and `-shm` companions while open).
    ///
    /// The file is created when missing: built complete under a temporary name in the same
    /// directory (`.<name>.strata-new-<pid>-<uuid>`) and hard-linked into place, so processes
    /// that open a new store at the same moment all open the one store that the first of them
    /// linked, and the path never holds a half-made store. It is an ordinary SQLite database:
    /// one table per entity, one per many-to-many join, and a `strata_metadata` table; the
    /// `sqlite3` tool can read it.
    ///
    /// ```swift
    /// let url = URL(filePath: "/var/lib/app/ledger.sqlite")
    /// let container = try PersistentContainer(schema: schema, engine: .sqlite(at: url))
    /// ```
    /// - Parameters:
    ///   - url: the store file's location (a file URL).
    ///   - options: busy timeout, read-connection pool size and durability.
    /// - Returns: a configuration that creates or opens the store when the container opens. It throws
    ///   `StrataError.notAStore` for a file that is not a Strata SQLite store (garbage, an empty
    ///   file, a directory such as an LMDB store, a device such as `/dev/null`, a FIFO or anything
    ///   else that is not a regular file, another application's database),
    ///   `.schemaMismatch` when the store has another shape under the same schema version,
    ///   `.storeNewerThanModel` for a store of a newer version; an older store is migrated at
    ///   open in one transaction, or left exactly as it was with `.migrationNotInferable`,
    ///   `.migrationStageFailed` or `.constraintViolation` (rows that break a new unique constraint);
    ///   `.invalidSchema` when the schema cannot be laid out as tables, `.misuse` when the
    ///   file has other hard links, `.busy` when another connection holds the write lock past
    ///   the busy timeout, `.io` / `.storeCorrupt` as SQLite reports, and
    ///   `.engineFailure` (a `NativeError` with engine "sqlite") for any SQLite result code Strata
    ///   does not classify (it keeps the extended code, the message and the statement).
    public static func sqlite(at url: URL, options: SQLiteOptions = .init()) -> EngineConfiguration {
        EngineConfiguration(name: "sqlite", location: url) { schema in
            try SQLiteEngine(url: url, schema: schema, options: options)
        }
    }
}
