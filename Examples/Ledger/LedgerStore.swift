import Foundation
import Ledger
import Strata
import StrataLMDB
import StrataPostgres
import StrataSQLite
import Synchronization

/// The one place the example chooses an engine: the services below never see it.
struct LedgerStore {
    let engineName: String
    /// Where the store is, for messages: a file path, or a schema on a server (the URL shown
    /// without its password).
    let location: String
    /// The global options that open this store again (`--engine … --store … [--schema …]`),
    /// without a password: libpq then takes it from `PGPASSWORD` or `~/.pgpass`.
    let reopenOptions: String
    let container: PersistentContainer
    let accounts: AccountService
    let transactions: TransactionService

    /// The default location for an embedded engine: `./ledger.sqlite` or `./ledger.lmdb`.
    static func defaultPath(engine: String) -> String {
        engine == "lmdb" ? "ledger.lmdb" : "ledger.sqlite"
    }

    /// A fresh temporary location, for `demo` without `--store`.
    static func temporaryPath(engine: String) -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ledger-demo-\(UUID().uuidString.prefix(8))")
        return base.path + (engine == "lmdb" ? ".lmdb" : ".sqlite")
    }

    /// Opens (creating when `create` is true) the store at `path` (for `postgres`, the server's
    /// URL, with the store in `schema`), migrating an older ledger store
    /// (``MigrationProgressLine`` shows it on standard error).
    /// - Throws: ``CLIError/noStore(path:)`` when a file store is missing and `create` is false,
    ///   and `StrataError` from the engine (not a store, another engine's store, damaged, newer
    ///   than this ledger, a missing schema on PostgreSQL when `create` is false, a server that
    ///   cannot be reached…).
    init(engine: String, path: String, schema: String? = nil, create: Bool) throws {
        let configuration: EngineConfiguration
        if engine == "postgres" {
            let schema = schema ?? CLIArguments.defaultSchema
            // Only `init` and `demo` make a store; every other command needs an existing one.
            let options = PostgresOptions(creation: create ? .createSchema : .requireExistingSchema)
            configuration = .postgres(url: path, schema: schema, options: options)
            // The engine's location: the URL without its password, with the schema.
            location = configuration.location.absoluteString
            reopenOptions = "--engine postgres --store '\(Self.serverURL(configuration.location))' --schema \(schema)"
        } else {
            let url = URL(fileURLWithPath: path)
            if !create && !Self.fileStoreExists(engine: engine, path: url.path) { throw CLIError.noStore(path: path) }
            configuration = engine == "lmdb" ? .lmdb(at: url) : .sqlite(at: url)
            location = url.path
            reopenOptions = "--engine \(engine) --store \(url.path)"
        }
        engineName = engine
        // A version 1 store is migrated here, with a progress line on standard error.
        let progressLine = MigrationProgressLine()
        do {
            container = try PersistentContainer(ledger: configuration) { progressLine.report($0) }
        } catch {
            progressLine.abandon()
            throw error
        }
        progressLine.finish()
        accounts = AccountService(contexts: container)
        transactions = TransactionService(contexts: container)
        Self.opened.withLock { $0.append(container) }
    }

    /// Every store this process opened, closed by ``closeAll()`` before it exits.
    private static let opened = Mutex<[PersistentContainer]>([])

    /// Closes every store this process opened. A command line calls it before it exits: a
    /// context's last release can come after the program's end, and the store then stays open
    /// to the end (on SQLite, its write-ahead log left beside the file instead of folded into it).
    static func closeAll() {
        for container in opened.withLock({ containers in
            defer { containers = [] }
            return containers
        }) {
            container.close()
        }
    }

    /// The server URL of a PostgreSQL store's location: the location without the `schema`
    /// query item the engine adds to it (libpq would refuse it).
    private static func serverURL(_ location: URL) -> String {
        guard var components = URLComponents(url: location, resolvingAgainstBaseURL: false) else {
            return location.absoluteString
        }
        let items = components.queryItems?.filter { $0.name != "schema" } ?? []
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? location.absoluteString
    }

    /// Opens the store the command line names (`--engine`, `--store`, `--schema`), or the
    /// engine's default file.
    init(_ arguments: CLIArguments, create: Bool) throws {
        try self.init(
            engine: arguments.engine, path: arguments.store ?? Self.defaultPath(engine: arguments.engine),
            schema: arguments.schema, create: create)
    }

    /// Whether the store the command line names exists already (for `init`'s message): its file,
    /// or on PostgreSQL, a ledger store in its schema.
    static func exists(_ arguments: CLIArguments) -> Bool {
        guard arguments.engine == "postgres" else {
            return fileStoreExists(
                engine: arguments.engine, path: arguments.store ?? defaultPath(engine: arguments.engine))
        }
        guard let store = try? LedgerStore(arguments, create: false) else { return false }
        store.container.close()
        return true
    }

    /// Whether a file store is at `path`: a SQLite file, or an LMDB directory holding LMDB's data
    /// file. An existing directory without `data.mdb` holds no LMDB store: opening it would make
    /// one, which only `init` and `demo` may do. A file where an LMDB directory should be counts
    /// as present, so that the engine's open says what it is.
    static func fileStoreExists(engine: String, path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return false }
        guard engine == "lmdb", attributes[.type] as? FileAttributeType == .typeDirectory else { return true }
        let dataFile = URL(fileURLWithPath: path).appendingPathComponent("data.mdb")
        return FileManager.default.fileExists(atPath: dataFile.path)
    }

    /// The URI of the account `reference` names: a URI as given, or the account with exactly
    /// that name.
    /// - Throws: ``CLIError/badInput(_:)`` when no account has that name, and service errors.
    func accountURI(_ reference: String) async throws -> String {
        if reference.hasPrefix("strata:") { return reference }
        if let match = try await accounts.list().first(where: { $0.name == reference }) { return match.id }
        throw CLIError.badInput(
            """
            No account is named \(String(reflecting: reference)), and it is not an account URI \
            (strata://…/Account/p…). Run `swift run ledger account list` to see the accounts.
            """
        )
    }
}
