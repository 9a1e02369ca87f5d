#ifndef STRATA_CLMDB_SHIM_H
#define STRATA_CLMDB_SHIM_H
#include <lmdb.h>
#endif
