// A helper for the crash-safety tests: saves transfers in a loop on a chosen engine and prints
// the sequence number of each save after `save()` returns ("acknowledged"). The test kills it
// with SIGKILL at random moments and checks the store afterwards. Each save's history author is
// `CrashModel.transferAuthor(sequence)` (the accounts' opening save: `CrashModel.setupAuthor`), and
// each transfer inserts two entries and a memo, updates two accounts and the previous memo, and
// deletes the memo that left the window, so the test can replay the history against the data.
//
//   strata-crash-writer --engine sqlite|lmdb|postgres --store PATH [--seed N]
//
// With `--seed N` the transfers (accounts and amounts) are the same on every run with that seed.
//
// `--mode migrate|open-old` runs a migration mode instead (MigrationModes.swift); `--mode bank`
// moves money through the ledger's TransactionService (BankMode.swift); `--mode consume` consumes
// the history after a cursor (ConsumerMode.swift); `--mode restart-open` opens a store while the
// test restarts its server (RestartMode.swift).

import CrashModels
import Foundation
import PostgresTestStores
import Strata
import StrataLMDB
import StrataPostgres
import StrataSQLite
import StrataTestSupport

let accountCount = CrashModel.accountCount
let openingBalance = CrashModel.openingBalance

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let storePath = argument("--store"), let engineName = argument("--engine") else {
    FileHandle.standardError.write(
        Data("usage: strata-crash-writer --engine sqlite|lmdb|postgres --store PATH [--seed N]\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: storePath)

/// The writer's PostgreSQL options: a pool of 4, the pid in the application name, and the
/// timeouts the bank mode's options give (in milliseconds), else the defaults.
func writerPostgresOptions() -> PostgresOptions {
    var options = PostgresOptions(poolSize: 4, applicationName: "strata-crash-writer \(getpid())")
    func milliseconds(_ name: String) -> Duration? { argument(name).flatMap { Int64($0) }.map { .milliseconds($0) } }
    if let timeout = milliseconds("--statement-timeout-ms") { options.statementTimeout = timeout }
    if let timeout = milliseconds("--resolution-timeout-ms") { options.commitResolutionTimeout = timeout }
    if let timeout = milliseconds("--connect-timeout-ms") { options.connectTimeout = timeout }
    return options
}
let engine: EngineConfiguration =
    switch engineName {
    case "lmdb": .lmdb(at: url)
    // The application name carries the pid, so the test can tell the server sessions of a
    // killed writer from a live one's (pg_stat_activity.application_name).
    case "postgres":
        TestPostgres.configuration(at: url, options: writerPostgresOptions())
    default: .sqlite(at: url)
    }
if argument("--mode") == "bank" { await runBankMode(engine: engine) }
if argument("--mode") == "consume" { await runConsumerMode(engine: engine) }
if argument("--mode") == "restart-open" { await runRestartOpenMode(store: url) }
if let mode = argument("--mode") { await runMigrationMode(mode, engine: engine) }
let seedArgument = argument("--seed")
guard seedArgument == nil || UInt64(seedArgument!) != nil else {
    FileHandle.standardError.write(
        Data("strata-crash-writer: --seed takes an unsigned 64-bit integer, got \(seedArgument!)\n".utf8))
    exit(2)
}
var generator = SeededGenerator(seed: seedArgument.flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max))

do {
    let container = try PersistentContainer(schema: try CrashModel.schema(), engine: engine)
    try await container.performUnitOfWork { context in
        guard try context.count(for: FetchRequest<CrashAccount>()) == 0 else { return }
        context.transactionAuthor = CrashModel.setupAuthor
        for number in 0..<accountCount {
            let account = CrashAccount(context: context)
            account.number = number
            account.balance = openingBalance
        }
        try context.save()
    }
    while true {
        let from = Int.random(in: 0..<accountCount, using: &generator)
        let to = (from + Int.random(in: 1..<accountCount, using: &generator)) % accountCount
        let amount = Int64.random(in: 1...50, using: &generator)
        let sequence = try await container.performUnitOfWork { context in
            let last =
                try context.fetch(
                    FetchRequest<CrashEntry>(sortBy: [SortDescriptor(\.sequence, order: .reverse)], fetchLimit: 1)
                ).first?.sequence ?? 0
            let accounts = try context.fetch(
                FetchRequest<CrashAccount>(predicate: #Predicate { $0.number == from || $0.number == to }))
            guard let source = accounts.first(where: { $0.number == from }),
                let target = accounts.first(where: { $0.number == to })
            else {
                throw StrataError.objectNotFound(
                    try ObjectID(parsing: "strata://00000000-0000-0000-0000-000000000000/Account/p1"))
            }
            // Two entries per transfer, one per account, so each balance is opening + its entries.
            for (account, signed) in [(source, -amount), (target, amount)] {
                let entry = CrashEntry(context: context)
                entry.sequence = last + (signed < 0 ? 1 : 2)
                entry.amount = signed
                entry.account = account
                account.balance += signed
            }
            let sequence = last + 2
            let previous = last
            let expired = sequence - 2 * CrashModel.memoWindow
            for memo in try context.fetch(
                FetchRequest<CrashMemo>(predicate: #Predicate { $0.sequence == previous || $0.sequence == expired }))
            {
                if memo.sequence == expired { context.delete(memo) } else { memo.followedBy = sequence }
            }
            CrashMemo(context: context).sequence = sequence
            context.transactionAuthor = CrashModel.transferAuthor(sequence)
            try context.save()
            return last + 2
        }
        FileHandle.standardOutput.write(Data("\(sequence)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("strata-crash-writer: \(error)\n".utf8))
    exit(1)
}
