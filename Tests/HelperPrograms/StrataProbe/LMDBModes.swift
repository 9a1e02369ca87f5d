import CLMDB
import CSQLite
import Foundation
import Strata
import StrataLMDB

/// Modes for the LMDB multi-process tests (and the write-lock holder both embedded engines use).
let lmdbModes: [String: ProbeMode] = [
    // Commits --count times, each inserting --batch items with 200-byte names, so the data file
    // keeps growing; prints one line at the end ("ok <n>" or the first error).
    "write-loop": { arguments in
        let engine = try arguments.engine()
        let count = try arguments.integer("count", default: 200)
        let batch = try arguments.integer("batch", default: 40)
        let tag = try arguments.required("name")
        do {
            let container = try PersistentContainer(schema: try ProbeModel.schema(), engine: engine)
            for index in 0..<count {
                try await container.performUnitOfWork { context in
                    for slot in 0..<batch {
                        let item = ProbeItem(context: context)
                        item.name = "\(tag)-\(index)-\(slot)-" + String(repeating: "x", count: 200)
                    }
                    try context.save()
                }
            }
            ProbeOutput.ok("\(count)")
        } catch {
            ProbeOutput.failure(error)
        }
        return 0
    },
    // Opens the store --count times (a new container each time, closed after one count);
    // prints one line per failed open and a final "ok <opens>".
    "open-loop": { arguments in
        let engine = try arguments.engine()
        let count = try arguments.integer("count", default: 100)
        var failures = 0
        for _ in 0..<count {
            do {
                let container = try PersistentContainer(schema: try ProbeModel.schema(), engine: engine)
                let context = container.newBackgroundContext()
                _ = try await context.perform { try context.count(for: FetchRequest<ProbeItem>()) }
                container.close()
            } catch {
                failures += 1
                ProbeOutput.failure(error)
            }
        }
        ProbeOutput.ok("\(count - failures)")
        return 0
    },
    // Opens a read snapshot, prints "ok holding", and keeps the snapshot until it is killed.
    "hold-snapshot": { arguments in
        let engine = try arguments.engine()
        do {
            let container = try PersistentContainer(schema: try ProbeModel.schema(), engine: engine)
            let context = container.newBackgroundContext()
            try await context.perform {
                _ = try context.count(for: FetchRequest<ProbeItem>())
                ProbeOutput.ok("holding")
                while true { sleep(60) }
            }
        } catch {
            ProbeOutput.failure(error)
        }
        return 0
    },
    // Runs --readers performs whose snapshots overlap (each waits for all the others inside its
    // perform), lets them all end, prints "ok idle", and then idles until it is killed.
    "idle-after-reads": { arguments in
        let engine = try arguments.engine()
        let readers = try arguments.integer("readers", default: 8)
        do {
            let container = try PersistentContainer(schema: try ProbeModel.schema(), engine: engine)
            let barrier = ProbeBarrier(count: readers)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<readers {
                    group.addTask {
                        let context = container.newBackgroundContext()
                        try await context.perform {
                            _ = try context.count(for: FetchRequest<ProbeItem>())
                            barrier.arriveAndWait()
                        }
                    }
                }
                try await group.waitForAll()
            }
            ProbeOutput.ok("idle")
            while true { try await Task.sleep(for: .seconds(60)) }
        } catch {
            ProbeOutput.failure(error)
        }
        return 0
    },
    // Holds the store's write lock until it is killed: SQLite a raw `BEGIN IMMEDIATE`; LMDB
    // Strata's write lock (the `strata-write.lock` sidecar) and an open LMDB write transaction.
    // The store must exist. Prints "ok holding" once it holds the lock.
    "hold-write-lock": { arguments in
        let store = try arguments.required("store")
        switch try arguments.required("engine") {
        case "sqlite":
            var db: OpaquePointer?
            guard sqlite3_open_v2(store, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
                sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK
            else {
                ProbeOutput.line("error sqlite: \(String(cString: sqlite3_errmsg(db)))")
                return 0
            }
        case "lmdb":
            let lock = open(store + "/strata-write.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard lock >= 0, flock(lock, LOCK_EX) == 0 else {
                ProbeOutput.line("error flock: errno \(errno)")
                return 0
            }
            var env: OpaquePointer?
            var txn: OpaquePointer?
            var rc = mdb_env_create(&env)
            if rc == 0 { rc = mdb_env_set_maxdbs(env, 64) }
            if rc == 0 { rc = mdb_env_open(env, store, UInt32(MDB_NOTLS), 0o644) }
            if rc == 0 { rc = mdb_txn_begin(env, nil, 0, &txn) }
            guard rc == 0 else {
                ProbeOutput.line("error lmdb: \(String(cString: mdb_strerror(rc)))")
                return 0
            }
        case let other:
            throw ProbeUsageError(message: "unknown engine \(other)")
        }
        ProbeOutput.ok("holding")
        while true { sleep(60) }
    },
]

/// Blocks each caller until `count` callers have arrived.
final class ProbeBarrier: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: Int

    init(count: Int) { waiting = count }

    func arriveAndWait() {
        condition.lock()
        waiting -= 1
        if waiting <= 0 { condition.broadcast() }
        while waiting > 0 { condition.wait() }
        condition.unlock()
    }
}
