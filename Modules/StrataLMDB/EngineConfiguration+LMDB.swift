public import Foundation
public import Strata

extension EngineConfiguration {
    /// An LMDB store in `directory` (created if missing): one LMDB environment holding a
    /// database per entity, index and join direction.
    ///
    /// ```swift
    /// let container = try PersistentContainer(schema: schema, engine: .lmdb(at: url))
    /// ```
    /// A process opens each store directory at most once; further engines for the same
    /// directory (even through a symlink) share that environment.
    /// - Parameters:
    ///
    /// Lifetime rule: the store stays open while any engine, container or context using it is
    /// alive; `PersistentContainer.close()` closes it at once (later calls throw `.misuse`).
    /// - Parameters:
    ///   - directory: the store directory; it holds `data.mdb` and `lock.mdb` (LMDB's), and
    ///     `strata-open.lock` and `strata-write.lock` (Strata's inter-process locks).
    ///   - options: map sizing, reader limits and the busy timeout, see ``LMDBOptions``.
    /// - Returns: a configuration whose `open` throws `StrataError.notAStore` (a file, garbage,
    ///   an empty or foreign store), `.storeCorrupt` (a truncated or damaged file),
    ///   `.schemaMismatch`, `.io`, or `.busy` (another process kept the store locked for
    ///   longer than `options.busyTimeout` while opening or writing it).
    public static func lmdb(at directory: URL, options: LMDBOptions = .init()) -> EngineConfiguration {
        EngineConfiguration(name: "lmdb", location: directory) { schema in
            try LMDBEngine.open(directory: directory, options: options, schema: schema)
        }
    }
}
