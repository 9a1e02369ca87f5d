// The crash writer's consumer mode, for the consumer crash test (`ConsumerCrashTests`): a
// history consumer that the test kills with SIGKILL at random moments and starts again.
//
//   strata-crash-writer --mode consume --engine E --store PATH [--api staged|separate] [--until TOKEN]
//
// It reads the source commits after the cursor `ConsumerCrash.cursor` (the test registers it) and
// writes one `ConsumerProcessed` row per commit, keyed by the commit's token, printing the token
// once the row is saved. `--api staged` (the default) moves the cursor in the row's own save
// (`changes(forCursor:)` and `moveHistoryCursor(past:)`); `--api separate` saves the row, then
// moves the cursor with `setHistoryCursor`, as consumers had to before: a kill between the two
// repeats that commit at the next start. With `--until TOKEN` it exits 0 once its cursor reaches
// TOKEN (at once if it already has). A staged consumer whose save finds the cursor moved (a
// cursor conflict) starts its sequence again from the stored cursor, as Docs/Observation.md says.

import CrashModels
import Foundation
import Strata

func runConsumerMode(engine: EngineConfiguration) async -> Never {
    let until = argument("--until").flatMap { Int64($0) }
    let cursor = ConsumerCrash.cursor
    do {
        let container = try PersistentContainer(schema: try ConsumerCrash.schema(), engine: engine)
        let start = try await container.historyCursors()[cursor]
        if let until, let start, start.rawValue >= until { exit(0) }
        func processed(_ token: Int64) {
            FileHandle.standardOutput.write(Data("\(token)\n".utf8))
            if let until, token >= until { exit(0) }
        }
        if argument("--api") == "separate" {
            for try await transaction in container.changes(after: start, entities: [ConsumerSource.self]) {
                let token = transaction.token.rawValue
                try await container.performUnitOfWork { context in
                    ConsumerProcessed(context: context).sourceToken = token
                    try context.save()
                }
                try await container.setHistoryCursor(cursor, to: transaction.token)
                processed(token)
            }
        } else {
            while true {
                do {
                    for try await delivery in container.changes(forCursor: cursor, entities: [ConsumerSource.self]) {
                        let token = delivery.transaction.token.rawValue
                        try await container.performUnitOfWork { context in
                            ConsumerProcessed(context: context).sourceToken = token
                            try context.moveHistoryCursor(past: delivery)
                            try context.save()
                        }
                        processed(token)
                    }
                } catch StrataError.conflict(let conflicts) where conflicts.contains(where: { $0.historyCursor != nil })
                {
                    // The cursor moved under this consumer (a killed predecessor's commit landed after
                    // this one read it): nothing was written; resume from the stored cursor.
                    FileHandle.standardError.write(
                        Data("strata-crash-writer consume: restarting after \(conflicts)\n".utf8))
                    continue
                }
            }
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-crash-writer consume: \(error)\n".utf8))
        exit(1)
    }
}
