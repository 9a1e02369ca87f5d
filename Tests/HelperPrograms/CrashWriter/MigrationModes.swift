// The crash writer's migration modes, for `MigrationCrashTests`:
//
//   strata-crash-writer --mode migrate --target inferred|staged --engine E --store PATH
//     prints "open" just before it opens a version-1 store with version 2 (`MigrationCrash.Target`),
//     "migrating" at the migration's first progress report, "migrated" when the open returned, then
//     "timing U T": nanoseconds from "open" to "migrating" (U, -1 without a report) and to "migrated" (T).
//     With `--kill-after-ns N` it sends itself SIGKILL N nanoseconds after "open", timed on a
//     thread of its own, so the kill lands at that moment of the child's own run (a test process
//     under load would read "open" late and kill late).
//   strata-crash-writer --mode open-old --engine E --store PATH
//     opens the store with version 1 and prints "refused storeNewerThanModel S M" (exit 0) for the
//     typed refusal, "opened N" (exit 3) when it read N items, "refused <error>" (exit 4) otherwise.
//   strata-crash-writer --mode hold-old --engine E --store PATH
//     opens the store with version 1 and prints "open", waits for a line on standard input (the
//     test migrates the store meanwhile), then saves one new item and counts the items, printing
//     "save: <outcome>" and "read: <outcome>" (an outcome is "ok", "ok N", "storeNewerThanModel S M"
//     or "error <error>"), and exits 0.

import CrashModels
import Foundation
import Strata
import Synchronization

/// Writes one line to standard output at once (unbuffered, so a killed process loses nothing it printed).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Runs the migration mode `mode` on `engine` and exits.
func runMigrationMode(_ mode: String, engine: EngineConfiguration) async -> Never {
    switch mode {
    case "migrate":
        guard let target = argument("--target").flatMap(MigrationCrash.Target.init(rawValue:)) else {
            FileHandle.standardError.write(Data("strata-crash-writer: --target inferred|staged\n".utf8))
            exit(2)
        }
        migrate(to: target, engine: engine)
    case "open-old":
        await openWithTheOldSchema(engine: engine)
    case "hold-old":
        await holdWithTheOldSchema(engine: engine)
    default:
        FileHandle.standardError.write(Data("strata-crash-writer: unknown --mode \(mode)\n".utf8))
        exit(2)
    }
}

/// Opens the store with version 2, which migrates a version-1 store, then closes it.
func migrate(to target: MigrationCrash.Target, engine: EngineConfiguration) -> Never {
    let untilMigrating = Atomic<Int64>(-1)
    do {
        let schema = try target.schema()
        say("open")
        let opened = ContinuousClock.now
        if let delay = argument("--kill-after-ns").flatMap(Int64.init) {
            killSelf(at: opened + .nanoseconds(delay))
        }
        let container = try PersistentContainer(schema: schema, migrationPlan: target.plan, engine: engine) { _ in
            let since = opened.duration(to: .now).nanoseconds
            if untilMigrating.compareExchange(expected: -1, desired: since, ordering: .relaxed).exchanged {
                say("migrating")
            }
        }
        let total = opened.duration(to: .now).nanoseconds
        say("migrated")
        say("timing \(untilMigrating.load(ordering: .relaxed)) \(total)")
        container.close()
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-crash-writer: \(error)\n".utf8))
        say("failed \(error)")
        exit(1)
    }
}

/// Sends this process SIGKILL at `deadline`, from a thread of its own.
func killSelf(at deadline: ContinuousClock.Instant) {
    let thread = Thread {
        let remaining = ContinuousClock.now.duration(to: deadline)
        if remaining > .zero { Thread.sleep(forTimeInterval: Double(remaining.nanoseconds) / 1e9) }
        kill(getpid(), SIGKILL)
    }
    thread.start()
}

/// Opens the store with version 1, as an older copy of the app would, and reports what happened.
func openWithTheOldSchema(engine: EngineConfiguration) async -> Never {
    do {
        let container = try PersistentContainer(schema: try MigrationCrashV1.schema(), engine: engine)
        let context = container.newBackgroundContext()
        let count = try await context.perform { try context.count(for: FetchRequest<MigrationCrashV1.Item>()) }
        say("opened \(count)")
        container.close()
        exit(3)
    } catch StrataError.storeNewerThanModel(let storeVersion, let modelVersion) {
        say("refused storeNewerThanModel \(storeVersion) \(modelVersion)")
        exit(0)
    } catch {
        say("refused \(String(reflecting: error).replacingOccurrences(of: "\n", with: " "))")
        exit(4)
    }
}

/// Holds the store open with version 1 while the test migrates it, then writes and reads.
func holdWithTheOldSchema(engine: EngineConfiguration) async -> Never {
    func outcome(_ error: any Error) -> String {
        if case .storeNewerThanModel(let storeVersion, let modelVersion)? = error as? StrataError {
            return "storeNewerThanModel \(storeVersion) \(modelVersion)"
        }
        return "error " + String(reflecting: error).replacingOccurrences(of: "\n", with: " ")
    }
    do {
        let container = try PersistentContainer(schema: try MigrationCrashV1.schema(), engine: engine)
        say("open")
        _ = readLine()
        let context = container.newBackgroundContext()
        do {
            try await context.perform {
                let item = MigrationCrashV1.Item(context: context)
                item.number = 1_000_000
                item.title = "late"
                try context.save()
            }
            say("save: ok")
        } catch {
            say("save: \(outcome(error))")
        }
        do {
            let reader = container.newBackgroundContext()
            let count = try await reader.perform { try reader.count(for: FetchRequest<MigrationCrashV1.Item>()) }
            say("read: ok \(count)")
        } catch {
            say("read: \(outcome(error))")
        }
        container.close()
        exit(0)
    } catch {
        say("failed \(outcome(error))")
        exit(1)
    }
}
