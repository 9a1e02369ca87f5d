#ifndef STRATA_CPOSTGRES_SHIM_H
#define STRATA_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

/// The PG_DIAG_* field codes of `PQresultErrorField` are character-literal macros ('C', 'n', ...)
/// in postgres_ext.h; these name them as plain ints so Swift code does not spell the letters.
static inline int strata_pg_diag_severity(void) { return PG_DIAG_SEVERITY_NONLOCALIZED; }
static inline int strata_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int strata_pg_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int strata_pg_diag_message_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }
static inline int strata_pg_diag_schema_name(void) { return PG_DIAG_SCHEMA_NAME; }
static inline int strata_pg_diag_table_name(void) { return PG_DIAG_TABLE_NAME; }
static inline int strata_pg_diag_column_name(void) { return PG_DIAG_COLUMN_NAME; }
static inline int strata_pg_diag_constraint_name(void) { return PG_DIAG_CONSTRAINT_NAME; }
#endif
