#!/usr/bin/env bash
# Counts the instructions one benchmark workload executes per row, in Strata and in the raw
# baseline, with valgrind's callgrind: a measure that other load on the machine does not move,
# for comparing two builds of a change (wall-clock ratios move by ±20% on a shared machine).
#
#   Scripts/count-instructions.sh 2 lmdb            # workload 2 (fetch-all) on LMDB
#   Scripts/count-instructions.sh 3 sqlite 20000    # workload 3 (lookups), 20,000 rows
#   Scripts/count-instructions.sh 5 lmdb            # workload 5 (to-many faults) on LMDB
#   Scripts/count-instructions.sh 9 lmdb 100000     # workload 9 (migration) on LMDB
#   BENCH=/other/checkout/.build/release/strata-bench Scripts/count-instructions.sh 1 sqlite
#
# Prints instructions per row for Strata's unit of work (the body inside `perform`), for the
# context's teardown (its objects freed), for the raw baseline, and the ratio
# (body + teardown) / raw. Needs valgrind; workloads 1 to 5 and 9. Takes 20–60 seconds. "Per row"
# always divides by the rows in the store, also for workload 4 (predicate), whose windows
# select only part of them: the numbers compare builds, and the ratio does not depend on it.
#
# Workload 9 (migration) counts the open that migrates, with no context teardown: on SQLite the
# whole open (`MigrationWorkload.openMigrating`, all on the calling thread); on LMDB the opening
# write transaction (`LMDBCatalog.open`, on the writer thread, where the migration runs; it
# also counts the tiny open of each repetition's new, empty store). The raw side is the raw
# copy (`migrateRows`).
#
# valgrind 3.19 stops with an internal error when a program calls `sigsuspend` with a mask in
# read-only memory, as libdispatch does; a tiny preloaded wrapper passes it a copy instead.
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${1:?workload 1, 2, 3, 4, 5 or 9}
engine=${2:?sqlite or lmdb}
rows=${3:-10000}
bench=${BENCH:-.build/release/strata-bench}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install -y valgrind)" >&2; exit 1; }
[ -x "$bench" ] || swift build -c release --product strata-bench >&2

case "$engine" in
    lmdb) raw_type=RawLMDB ;;
    sqlite) raw_type=RawSQLite ;;
    *) echo "engine must be sqlite or lmdb" >&2; exit 1 ;;
esac
case "$workload" in
    1) body='*StrataWorkloadsO6insert*cfU_'
       if [ "$engine" = lmdb ]; then raw="*${raw_type}C10insertRows*Tf4nnnd_n"; else raw="*${raw_type}C10insertRowsyyAA7DatasetVKF"; fi ;;
    2) body='*StrataWorkloadsO8fetchAll*cfU_'; raw="*${raw_type}C8fetchAllAA8ChecksumVyKF" ;;
    3) body='*StrataWorkloadsO6lookup*cfU_'; raw="*${raw_type}C6lookupyAA8ChecksumVSays5Int64VGKF" ;;
    4) body='*StrataWorkloadsO9predicate*cfU_'; raw="*${raw_type}C9predicateyAA8ChecksumVSaySnys5Int64VGGKF" ;;
    5) body='*StrataWorkloadsO6toMany*cfU_'; raw="*${raw_type}C6toManyAA8ChecksumVyKF" ;;
    9) if [ "$engine" = lmdb ]; then body='*LMDBCatalogV4open_*'; else body='*MigrationWorkloadO13openMigrating*'; fi
       raw="*${raw_type}CAA0C8BaselineA2aDP11migrateRows*" ;;
    *) echo "workload must be 1, 2, 3, 4, 5 or 9" >&2; exit 1 ;;
esac
teardown='*ObjectContextCfD'
[ "$workload" = 9 ] && teardown='*no-teardown-counted*'

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/sigsuspend.c" <<'C'
#define _GNU_SOURCE
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
C
cc -O2 -shared -fPIC "$work/sigsuspend.c" -o "$work/sigsuspend.so"

# Two runs, with 1 and 3 timed repetitions (each after one warm-up): the differences are two
# units of work per side, free of everything else the runs share (filling the store and its
# context's teardown among them).
for repetitions in 1 3; do
    LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --callgrind-out-file="$work/out$repetitions" \
        --toggle-collect="$body" --toggle-collect="$teardown" --toggle-collect="$raw" \
        "$bench" --rows "$rows" --workloads "$workload" --engine "$engine" --repetitions "$repetitions" >/dev/null 2>&1
    callgrind_annotate --inclusive=yes --threshold=100 "$work/out$repetitions" >"$work/annotated$repetitions" 2>/dev/null
done

python3 - "$rows" "$body" "$raw" "$work/annotated1" "$work/annotated3" "$teardown" <<'PY'
import fnmatch, re, sys
rows, body, raw, first, second = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
patterns = {"body": body, "teardown": sys.argv[6], "raw": raw}

def totals(path):
    best = dict.fromkeys(patterns, 0)
    for line in open(path):
        match = re.match(r"\s*([\d,]+) \(.*?\)\s+(\S+)", line)
        if not match:
            continue
        count = int(match.group(1).replace(",", ""))
        name = match.group(2).split(":", 1)[-1]
        for key, pattern in patterns.items():
            if fnmatch.fnmatch(name, pattern):
                best[key] = max(best[key], count)
    return best

one, three = totals(first), totals(second)
per_row = {key: (three[key] - one[key]) / (2 * rows) for key in patterns}
ratio = (per_row["body"] + per_row["teardown"]) / max(per_row["raw"], 1)
print("instructions per row: Strata %.0f (unit of work %.0f, context teardown %.0f), raw %.0f; ratio %.2f"
      % (per_row["body"] + per_row["teardown"], per_row["body"], per_row["teardown"], per_row["raw"], ratio))
PY
