import CSQLite
import Foundation
import Strata

/// Modes for the SQLite multi-process tests.
let sqliteModes: [String: ProbeMode] = [
    // Holds the write lock of an existing SQLite store: `BEGIN IMMEDIATE` on a plain sqlite3
    // connection, then `--millis N` of sleep, then ROLLBACK. Prints `ok holding` once the lock is
    // held and `ok released` after; `error ...` when the store cannot be opened or locked.
    //
    //   strata-probe sqlite-hold-write --store PATH --millis N
    "sqlite-hold-write": { arguments in
        let path = try arguments.required("store")
        let millis = try arguments.integer("millis", default: 1000)
        guard millis >= 0 else { throw ProbeUsageError(message: "--millis must not be negative") }
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        // No SQLITE_OPEN_CREATE: the store must exist.
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            ProbeOutput.line(
                "error io: cannot open \(path): \(db.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection")")
            return 0
        }
        sqlite3_busy_timeout(db, 5000)
        guard sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else {
            ProbeOutput.line("error busy: BEGIN IMMEDIATE failed: \(String(cString: sqlite3_errmsg(db)))")
            return 0
        }
        ProbeOutput.ok("holding")
        try await Task.sleep(for: .milliseconds(millis))
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        ProbeOutput.ok("released")
        return 0
    }
]
