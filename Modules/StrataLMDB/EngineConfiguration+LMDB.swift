public import Foundation
public import StrataStorage

extension EngineConfiguration {
    /// An LMDB store in `directory` (created if missing, in a parent directory that must exist):
    /// one LMDB environment holding a database per entity, index and join direction.
    ///
    /// Creating a store is all or nothing: when it fails (a full disk, say), the files it made,
    /// and the directory if it made that, are removed, so a retry starts afresh; the files of a
    /// store that existed are never removed.
    ///
    /// ```swift
    /// let container = try PersistentContainer(schema: schema, engine: .lmdb(at: url))
    /// ```
    /// A process opens each store directory at most once; further engines for the same
    /// directory (even through a symlink) share that environment.
    ///
    /// Lifetime rule: the store stays open while any engine, container or context using it is
    /// alive. After `PersistentContainer.close()` every new read, save or key allocation throws
    /// `.misuse`; work already under way is not cut off: a snapshot begun before `close()` keeps
    /// reading until its `perform` returns, and a save already handed to the writer either
    /// completes or throws `.misuse` having written nothing. The environment closes when the
    /// last of them ends.
    /// - Parameters:
    ///   - directory: the store directory; it holds `data.mdb` and `lock.mdb` (LMDB's), and
    ///     `strata-open.lock` and `strata-write.lock` (Strata's inter-process locks).
    ///   - options: map sizing, reader limits and the busy timeout, see ``StrataLMDB/LMDBOptions``.
    /// - Returns: a configuration for `PersistentContainer`, whose opening throws
    ///   `StrataError.notAStore` (a file, a FIFO or a device, garbage,
    ///   an empty or foreign store), `.storeCorrupt` (a truncated or damaged file),
    ///   `.schemaMismatch`, `.misuse` (invalid `options`, or a data file with other hard links),
    ///   `.io` (the operating system refused: permissions, a read-only file system, a missing
    ///   parent directory), `.storeFull` (no room to create, open or grow the store: its
    ///   directory, its lock file's reader table, its data), `.busy` (another process held
    ///   `strata-open.lock` while opening or creating the store, or the write lock, for longer
    ///   than `options.busyTimeout`), and `.engineFailure` (a `NativeError` with engine "lmdb") for
    ///   any LMDB result code Strata does not classify (it keeps LMDB's code and message).
    public static func lmdb(at directory: URL, options: LMDBOptions = .init()) -> EngineConfiguration {
        EngineConfiguration(name: "lmdb", location: directory) { schema in
            try LMDBEngine.open(directory: directory, options: options, schema: schema)
        }
    }
}
