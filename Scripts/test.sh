#!/usr/bin/env bash
# Runs the whole test suite (every engine-level and service-level test on SQLite, LMDB and
# PostgreSQL), treating any compiler warning as an error.
#
# PostgreSQL: Scripts/with-postgres.sh starts a throwaway cluster for the run (as an unprivileged
# user, on a Unix socket and a loopback port), exports STRATA_POSTGRES_URL and
# STRATA_POSTGRES_CTL, and stops and deletes the cluster afterwards, even when the tests fail.
# With STRATA_POSTGRES_URL already set, the tests use that server instead and nothing is started.
# When no server can be started, the run fails here: the PostgreSQL tests are never skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
exec bash Scripts/with-postgres.sh swift test -Xswiftc -warnings-as-errors "$@"
