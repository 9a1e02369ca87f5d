import Foundation
public import StrataStorage

extension EngineConfiguration {
    /// A store held in this process's memory, shared by name: for tests, previews and caches.
    ///
    /// ```swift
    /// let schema = try Schema(version: 1, [Account.self])
    /// let container = try PersistentContainer(schema: schema, engine: .inMemory(name: "accounts"))
    /// let second = try PersistentContainer(schema: schema, engine: .inMemory(name: "accounts"))
    /// // `second` sees what `container` saves, as a second container on one SQLite file would.
    /// ```
    ///
    /// It behaves as the durable engines do for everything that happens inside the process: every
    /// context reads one snapshot per read, saves are atomic and checked (row versions,
    /// `requireUnchanged`, unique constraints), history, cursors and observation work across every
    /// container open on the name, batch writes and aggregates run in the engine, and opening with
    /// a newer model migrates the store (an older container then gets `.storeNewerThanModel`).
    ///
    /// Lifetime rule: the store exists while at least one container (or context) opened on `name`
    /// is neither closed nor released. When the last one goes, so does every row, and opening the
    /// name again makes a new, empty store with a new identifier. Nothing is ever written to disk,
    /// and another process opening the same name gets a store of its own: the name is not a path.
    /// - Parameter name: the store's name in this process; any non-empty string.
    /// - Returns: a configuration for `PersistentContainer`, whose opening throws
    ///   `StrataError.misuse` for an empty name, `.schemaMismatch` when the store is open with
    ///   another shape under the same schema version, `.storeNewerThanModel` when it was migrated
    ///   to a newer version than this model's, and, when it migrates the store,
    ///   `.migrationNotInferable`, `.migrationStageFailed` or `.constraintViolation` (rows that break
    ///   a new unique constraint), the store then left as it was; `.busy` when a migration stage
    ///   opens the store it migrates, or when another container's open or commit held the store
    ///   for five seconds.
    public static func inMemory(name: String) -> EngineConfiguration {
        EngineConfiguration(name: "memory", location: inMemoryLocation(name)) { schema in
            try MemoryEngine.open(name: name, schema: schema)
        }
    }

    /// The `location` of an in-memory store: `strata-memory:` and the name, percent-encoded; never
    /// a file URL, so nothing mistakes it for a path.
    static func inMemoryLocation(_ name: String) -> URL {
        var components = URLComponents()
        components.scheme = "strata-memory"
        components.percentEncodedPath = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return components.url ?? URL(fileURLWithPath: "/dev/null")
    }
}
