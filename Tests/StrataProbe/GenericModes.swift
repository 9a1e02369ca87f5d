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
    }
]
