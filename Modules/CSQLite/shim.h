#ifndef STRATA_CSQLITE_SHIM_H
#define STRATA_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type strata_sqlite_transient(void) {
    return (sqlite3_destructor_type)-1;
}

/// Turns off SQLite's double-quoted string literals in DML and DDL on one connection, so that a
/// quoted name that is not a column is an error ("no such column") rather than a string.
/// `sqlite3_db_config` is variadic, which Swift cannot call.
static inline void strata_sqlite_disable_double_quoted_strings(sqlite3 *db) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}

/// The WAL hook of `strata_sqlite_track_wal_frames`: stores the frame count, checkpoints nothing.
static inline int strata_sqlite_store_wal_frames(void *frames, sqlite3 *db, const char *name, int count) {
    (void)db;
    (void)name;
    *(int *)frames = count;
    return SQLITE_OK;
}

/// Replaces SQLite's automatic checkpoint (itself a WAL hook) with a hook that stores the
/// number of frames in the write-ahead log after each commit into `*frames`, so that the engine
/// decides when to checkpoint. `frames` must stay valid until the connection is closed.
static inline void strata_sqlite_track_wal_frames(sqlite3 *db, int *frames) {
    sqlite3_wal_hook(db, strata_sqlite_store_wal_frames, frames);
}

/// Turns off (or on again) the checkpoint SQLite runs when the last connection to a database
/// closes (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`; `sqlite3_db_config` is variadic).
static inline void strata_sqlite_set_checkpoint_on_close(sqlite3 *db, int enabled) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, enabled ? 0 : 1, (int *)0);
}

/// Reads up to `count` bytes from the start of the connection's main database file through the
/// file SQLite itself opened (`SQLITE_FCNTL_FILE_POINTER`, then the VFS's `xFileSize` and
/// `xRead`), so that no other descriptor of the file is opened and closed: closing one would drop
/// every POSIX lock this process holds on the file, SQLite's included.
/// Returns the number of bytes read (fewer when the file is shorter), or minus a result code.
static inline int strata_sqlite_read_file_start(sqlite3 *db, unsigned char *buffer, int count) {
    sqlite3_file *file = 0;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
    if (rc != SQLITE_OK) return -rc;
    if (file == 0 || file->pMethods == 0) return -SQLITE_CANTOPEN;
    sqlite3_int64 size = 0;
    rc = file->pMethods->xFileSize(file, &size);
    if (rc != SQLITE_OK) return -rc;
    int length = size < count ? (int)size : count;
    if (length <= 0) return 0;
    rc = file->pMethods->xRead(file, buffer, length, 0);
    return rc == SQLITE_OK ? length : -rc;
}
/// The rowids a connection's update hook collected (see `strata_sqlite_collect_rowids`).
typedef struct {
    sqlite3_int64 *rowids;
    long count;
    long capacity;
    /// Set when growing the buffer failed: the rowids are incomplete.
    int failed;
} strata_sqlite_rowids;

/// The update hook of `strata_sqlite_collect_rowids`: appends the row's rowid.
static inline void strata_sqlite_append_rowid(
    void *context, int operation, const char *database, const char *table, sqlite3_int64 rowid) {
    (void)operation;
    (void)database;
    (void)table;
    strata_sqlite_rowids *collected = (strata_sqlite_rowids *)context;
    if (collected->count == collected->capacity) {
        long capacity = collected->capacity < 1024 ? 1024 : collected->capacity * 2;
        sqlite3_int64 *grown = (sqlite3_int64 *)sqlite3_realloc64(
            collected->rowids, (sqlite3_uint64)capacity * sizeof(sqlite3_int64));
        if (grown == 0) {
            collected->failed = 1;
            return;
        }
        collected->rowids = grown;
        collected->capacity = capacity;
    }
    collected->rowids[collected->count++] = rowid;
}

/// Starts (with a `collected` buffer) or stops (with NULL) collecting the rowid of every row the
/// connection inserts, updates or deletes in a rowid table, in the order SQLite writes them: one
/// C call per row, where `RETURNING` runs a trigger program and fills a table per row. SQLite
/// calls no hook for a `DELETE` without `WHERE` (its truncate optimization) nor for rows that
/// `REPLACE` removes. `collected` must stay valid while the hook is set.
static inline void strata_sqlite_collect_rowids(sqlite3 *db, strata_sqlite_rowids *collected) {
    if (collected == 0) {
        sqlite3_update_hook(db, 0, 0);
    } else {
        sqlite3_update_hook(db, strata_sqlite_append_rowid, collected);
    }
}
#endif
