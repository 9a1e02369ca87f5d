import Foundation
import Ledger
import Strata
import StrataLMDB
import StrataSQLite

/// The one place the example chooses an engine: the services below never see it.
struct LedgerStore {
    let engineName: String
    let url: URL
    let container: PersistentContainer
    let accounts: AccountService
    let transactions: TransactionService

    /// The default location for an engine: `./ledger.sqlite` or `./ledger.lmdb`.
    static func defaultPath(engine: String) -> String {
        engine == "lmdb" ? "ledger.lmdb" : "ledger.sqlite"
    }

    /// A fresh temporary location, for `demo` without `--store`.
    static func temporaryPath(engine: String) -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ledger-demo-\(UUID().uuidString.prefix(8))")
        return base.path + (engine == "lmdb" ? ".lmdb" : ".sqlite")
    }

    /// Opens (creating when `create` is true) the store at `path`, migrating an older ledger
    /// store (``MigrationProgressLine`` shows it on standard error).
    /// - Throws: ``CLIError/noStore(path:)`` when it is missing and `create` is false, and
    ///   `StrataError` from the engine (not a store, another engine's store, damaged, newer
    ///   than this ledger…).
    init(engine: String, path: String, create: Bool) throws {
        let url = URL(fileURLWithPath: path)
        if !create && !FileManager.default.fileExists(atPath: url.path) { throw CLIError.noStore(path: path) }
        let configuration: EngineConfiguration = engine == "lmdb" ? .lmdb(at: url) : .sqlite(at: url)
        engineName = engine
        self.url = url
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
