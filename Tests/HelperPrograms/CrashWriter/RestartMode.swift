// The crash writer's restart mode, for `PostgresRestartOpenTests`:
//
//   strata-crash-writer --mode restart-open --engine postgres --store PATH
//     prints "open" and opens the store (made beforehand) with a connect timeout of 120 s: the
//     test has stopped the server and starts it once it reads "open", so the open has to wait
//     for it. Prints "opened", saves one account ("saved"), observes the store's changes (so a
//     listening connection is open), prints "ready" and waits for a line on standard input (the
//     test restarts the server meanwhile: every connection receives the server's FATAL), then
//     saves again ("saved again") and exits 0. On a failure it prints "failed <error>" and exits 1.
//     Whatever libpq prints lands on standard error, which the test expects empty.

import CrashModels
import Foundation
import PostgresTestStores
import Strata
import StrataPostgres
import StrataTestSupport

/// Opens while the server is down, then lives through a restart (see above).
func runRestartOpenMode(store: URL) async -> Never {
    let engine = TestPostgres.configuration(
        at: store, options: PostgresOptions(poolSize: 4, connectTimeout: .seconds(120)))
    do {
        say("open")
        let container = try PersistentContainer(schema: try CrashModel.schema(), engine: engine)
        say("opened")
        try await saveAccount(container, number: 1)
        say("saved")
        let changes = container.changes()
        let observer = Task {
            for try await _ in changes {}
        }
        // The listener connects on the observer's first wait: give it a moment to be up when the
        // server restarts (if it is not yet, the test is only less strict about libpq's output).
        try await Task.sleep(for: .milliseconds(500))
        say("ready")
        _ = readLine()
        try await saveAccount(container, number: 2)
        say("saved again")
        observer.cancel()
        container.close()
        exit(0)
    } catch {
        say("failed " + String(reflecting: error).replacingOccurrences(of: "\n", with: " "))
        exit(1)
    }
}

/// Saves an account numbered `number`, retrying a unit of work the restart broke.
private func saveAccount(_ container: PersistentContainer, number: Int) async throws {
    try await container.performUnitOfWork { context in
        let account = CrashAccount(context: context)
        account.number = number
        try context.save()
    }
}
