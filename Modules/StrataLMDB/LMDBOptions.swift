/// Tuning for an LMDB store, passed to ``Strata/EngineConfiguration/lmdb(at:options:)``.
///
/// The defaults suit most stores; a test can start with a tiny map to exercise map growth.
///
/// ```swift
/// let options = LMDBOptions(initialMapSize: 1 << 20, maximumMapSize: 1 << 30)
/// let engine = EngineConfiguration.lmdb(at: directory, options: options)
/// ```
public struct LMDBOptions: Sendable, Hashable {
    /// The size of the memory map when the store is opened, in bytes (rounded up to whole
    /// pages). It is also the most the file can hold until the map grows. Default 64 MiB.
    public var initialMapSize: Int
    /// The largest the map may grow to, in bytes. A commit that does not fit even at this size
    /// fails with `StrataError.storeFull` and writes nothing. Default 64 GiB.
    public var maximumMapSize: Int
    /// How many times one commit may double the map before it gives up with
    /// `StrataError.storeFull`. Default 16.
    public var maxMapGrowthRetries: Int
    /// How many read snapshots may be open at once across every process using the store
    /// (LMDB's reader table). Only the first process to open the store sets it. Default 126.
    public var maxReaders: Int

    /// Creates options; every parameter has the documented default.
    public init(
        initialMapSize: Int = 64 << 20,
        maximumMapSize: Int = 64 << 30,
        maxMapGrowthRetries: Int = 16,
        maxReaders: Int = 126
    ) {
        self.initialMapSize = initialMapSize
        self.maximumMapSize = maximumMapSize
        self.maxMapGrowthRetries = maxMapGrowthRetries
        self.maxReaders = maxReaders
    }
}
