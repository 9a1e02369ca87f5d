#!/usr/bin/env bash
# Runs the whole test suite (every engine-level and service-level test on SQLite, LMDB,
# PostgreSQL and the in-memory engine), treating any compiler warning as an error.
#
# PostgreSQL: Scripts/with-postgres.sh starts a throwaway cluster for the run (as an unprivileged
# user, on a Unix socket and a loopback port), exports STRATA_POSTGRES_URL and
# STRATA_POSTGRES_CTL, and stops and deletes the cluster afterwards, even when the tests fail.
# With STRATA_POSTGRES_URL already set, the tests use that server instead and nothing is started.
# When no server can be started, the run fails here: the PostgreSQL tests are never skipped.
#
# At most 16 tests run at once (Swift Testing's SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH;
# set it to override). Unbounded, the whole suite starts together and the test process holds
# about 1,800 descriptors early on (store files and server sockets). Past about 1,300, Foundation's
# Process.run() on Swift 6.3 can crash the test process: it copies 256 bytes of each
# /proc/self/fd entry and reads past readdir's buffer (swiftlang/swift-corelibs-foundation#5472).
# Bounded, the peak is about 450 descriptors and the suite runs no slower.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-16}"

# The output is also kept in a log so that, when the run fails, the failing tests and their
# recorded issues are repeated at the very end, where a CI summary that shows only the tail of the
# output still names them.
log="$(mktemp -t strata-test-log.XXXXXX)"
trap 'rm -f "$log"' EXIT
status=0
bash Scripts/with-postgres.sh swift test -Xswiftc -warnings-as-errors "$@" 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "=== test.sh: the run failed (status $status); what failed, repeated from above ==="
  grep -E '✘|recorded an issue|error:|Fatal error|Expectation failed|Caught error' "$log" | head -80 || true
fi
exit "$status"
