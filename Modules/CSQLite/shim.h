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
#endif
