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
    ///   - directory: the store directory; it holds `data.mdb` and `lock.mdb`.
    ///   - options: map sizing and reader limits, see ``LMDBOptions``.
    /// - Returns: a configuration whose `open` throws `StrataError.notAStore` (a file, garbage,
    ///   an empty or foreign store), `.storeCorrupt` (a truncated or damaged file),
    ///   `.schemaMismatch`, `.io` or `.busy`.
    public static func lmdb(at directory: URL, options: LMDBOptions = .init()) -> EngineConfiguration {
        EngineConfiguration(name: "lmdb", location: directory) { schema in
            try LMDBEngine.open(directory: directory, options: options, schema: schema)
        }
    }
}
