import Foundation
import Strata

/// Modes that work the same on every engine.
let genericModes: [String: ProbeMode] = [
    // Opens (creating if needed) the store, inserts one item named by --name and closes the
    // store; prints one line.
    "open-write": { arguments in
        let engine = try arguments.engine()
        let name = try arguments.required("name")
        do {
            let container = try PersistentContainer(schema: try ProbeModel.schema(), engine: engine)
            defer { container.close() }
            try await container.performUnitOfWork { context in
                let item = ProbeItem(context: context)
                item.name = name
                try context.save()
            }
            ProbeOutput.ok()
        } catch {
            ProbeOutput.failure(error)
        }
        return 0
    },
    // Saves batches of 20 items with 2,000-byte notes (names "<--name>-<batch>-<index>") until a
    // save fails; prints "ok <items saved>", then the error line, then waits, the store open,
    // until it is killed (a process that met a full disk and died there).
    "fill-until-full": { arguments in
        let engine = try arguments.engine()
        let tag = try arguments.required("name")
        let container = try PersistentContainer(schema: try ProbeModel.schema(), engine: engine)
        var saved = 0
        do {
            while true {
                let batch = saved / 20
                try await container.performUnitOfWork(retries: .none) { context in
                    for index in 0..<20 {
                        let item = ProbeItem(context: context)
                        item.name = "\(tag)-\(batch)-\(index)"
                        item.note = String(repeating: "x", count: 2_000)
                    }
                    try context.save()
                }
                saved += 20
            }
        } catch {
            ProbeOutput.ok("\(saved)")
            ProbeOutput.failure(error)
        }
        while true { sleep(60) }
    },
]
