// The crash writer's bank mode, for the PostgreSQL server tests (`PostgresAppServerTests`): one
// of several "app servers" moving money through the ledger's `TransactionService`.
//
//   strata-crash-writer --mode bank --engine E --store PATH --count N [--seed S]
//       [--statement-timeout-ms T] [--resolution-timeout-ms R] [--connect-timeout-ms C]
//       [--stop-file F]
//
// With --stop-file, it stops early, before the next transfer, once the file F exists.
// Opens the ledger store at PATH (the test made it, with its accounts), then makes N transfers
// between random accounts, one at a time, each with the note "bank <seed> <n>" (unique across
// the writers, which get different seeds), printing one line per outcome as it happens:
//   "ack <n> <withdrawal id> <deposit id> <ms>"   the transfer returned: it is committed;
//   "fail <n> <kind> <ms> <error>"                it threw; kind is busy, io, retriesExhausted,
//                                                 conflict, unknown (.commitOutcomeUnknown) or
//                                                 other (the error on one line);
// where <ms> is how long the call took. The timeouts set the PostgreSQL options (defaults:
// PostgresOptions' own).
// and at the end "done <acknowledged> <failed> conflicts <c> retries <r> exhausted <e>" (the
// unit of work's `RetryStatistics`), then exits 0. After a failure it waits 100 ms before the
// next transfer, as requests arrive at their own pace. An open that gets `.busy` is tried again
// for up to 30 s; a failed open prints "open-failed <error>" and exits 1. The process never
// restarts itself: after a server restart it goes on with the same container, so the test sees
// whether the engine recovers.

import Foundation
import Ledger
import Strata
import StrataTestSupport

/// The kind of a transfer's failure, as the bank tests count them.
func failureKind(_ error: any Error) -> String {
    switch error as? StrataError {
    case .busy?: "busy"
    case .io?: "io"
    case .retriesExhausted?: "retriesExhausted"
    case .conflict?: "conflict"
    case .commitOutcomeUnknown?: "unknown"
    default: "other"
    }
}

/// Runs the bank mode on `engine` and exits.
func runBankMode(engine: EngineConfiguration) async -> Never {
    guard let count = argument("--count").flatMap({ Int($0) }), count >= 0 else {
        FileHandle.standardError.write(Data("strata-crash-writer: --mode bank needs --count N\n".utf8))
        exit(2)
    }
    let seed = argument("--seed").flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
    var generator = SeededGenerator(seed: seed)
    let (container, accountIDs) = await openBank(engine)
    guard accountIDs.count >= 2 else {
        say("open-failed the store holds \(accountIDs.count) accounts; the test makes them first")
        exit(1)
    }
    let transactions = TransactionService(contexts: container)
    var acknowledged = 0
    var failed = 0
    let (_, retries) = await RetryStatistics.observing {
        let stopFile = argument("--stop-file")
        for number in 0..<count {
            if let stopFile, FileManager.default.fileExists(atPath: stopFile) { break }
            let from = Int.random(in: 0..<accountIDs.count, using: &generator)
            let to = (from + Int.random(in: 1..<accountIDs.count, using: &generator)) % accountIDs.count
            let amount = Int64.random(in: 1...500, using: &generator)
            let started = ContinuousClock.now
            func milliseconds() -> Int64 {
                let elapsed = ContinuousClock.now - started
                return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            }
            do {
                let receipt = try await transactions.transfer(
                    from: accountIDs[from], to: accountIDs[to], amount: amount, note: "bank \(seed) \(number)")
                acknowledged += 1
                say("ack \(number) \(receipt.withdrawal.id) \(receipt.deposit.id) \(milliseconds())")
            } catch {
                failed += 1
                let message = String(describing: error).replacingOccurrences(of: "\n", with: " ")
                say("fail \(number) \(failureKind(error)) \(milliseconds()) \(message)")
                // Requests keep coming at an app server's pace, not as fast as failures return.
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }
    say(
        """
        done \(acknowledged) \(failed) conflicts \(retries.conflicts) retries \(retries.retries) exhausted \
        \(retries.exhausted)
        """)
    container.close()
    exit(0)
}

/// Opens the bank's store and lists its accounts. Opens that contend (every writer starts at once,
/// and a PostgreSQL open waits for the others' opening transactions under the statement timeout)
/// get `.busy`, whose advice is to retry: as an application would, for up to 30 s. Any other
/// failure prints "open-failed <error>" and exits 1.
private func openBank(_ engine: EngineConfiguration) async -> (PersistentContainer, [String]) {
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        do {
            let container = try PersistentContainer(ledger: engine)
            do {
                return (container, try await AccountService(contexts: container).list().map(\.id))
            } catch {
                container.close()
                throw error
            }
        } catch StrataError.busy where ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
        } catch {
            say("open-failed \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
            exit(1)
        }
    }
}
