/// What an engine offers beyond what every engine must, so that the kit checks each engine for
/// what it promises: a check about durability, store files or other processes asserts, on an
/// engine without them, what that engine does instead. No check is skipped.
///
/// ```swift
/// try await check.run(engine: { .inMemory(name: $0.path) }, capabilities: .inProcess)
/// ```
public struct EngineCapabilities: Sendable, Hashable {
    /// The store outlives its containers and the process: what was saved is there after every
    /// container on it closed. Without it, the kit keeps the store open (one engine held by the
    /// harness) across a check's close-and-reopen, which then shows the store shared by name, and
    /// checks that the store is gone, empty and new, once its last container closed.
    public var isDurable: Bool
    /// The store is files at the configuration's `location` (or parts a server exposes through the
    /// kit's damage hook), which the kit overwrites to check the engine refuses them. Without it,
    /// the kit checks that using the store wrote no file at all and that its `location` is no
    /// file URL: there is nothing on disk to damage or copy.
    public var hasStoreFiles: Bool
    /// Another process can open the same store: the cross-process checks start a
    /// ``ConformancePeer``. Without it, they run the peer's work in this process, on a second
    /// container opened on the same store, and check the same outcome.
    public var sharesAcrossProcesses: Bool

    /// Capabilities.
    public init(isDurable: Bool, hasStoreFiles: Bool, sharesAcrossProcesses: Bool) {
        self.isDurable = isDurable
        self.hasStoreFiles = hasStoreFiles
        self.sharesAcrossProcesses = sharesAcrossProcesses
    }

    /// A durable store in files (or on a server) that several processes share: SQLite, LMDB,
    /// PostgreSQL. The default.
    public static let durable = EngineCapabilities(isDurable: true, hasStoreFiles: true, sharesAcrossProcesses: true)

    /// A store held in one process's memory, shared by name inside it (`.inMemory(name:)`).
    public static let inProcess = EngineCapabilities(
        isDurable: false, hasStoreFiles: false, sharesAcrossProcesses: false)
}
