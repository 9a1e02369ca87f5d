#!/usr/bin/env bash
# Counts the instructions one benchmark workload executes per row, in Strata and in the raw
# baseline, with valgrind's callgrind: a measure that other load on the machine does not move,
# for comparing two builds of a change (wall-clock ratios move by ±20% on a shared machine).
#
#   Scripts/count-instructions.sh 2 lmdb            # workload 2 (fetch-all) on LMDB
#   Scripts/count-instructions.sh 3 sqlite 20000    # workload 3 (lookups), 20,000 rows
#   Scripts/count-instructions.sh 5 lmdb            # workload 5 (to-many faults) on LMDB
#   Scripts/count-instructions.sh 13 sqlite         # workload 13 (to-many prefetched) on SQLite
#   Scripts/count-instructions.sh 9 lmdb 100000     # workload 9 (migration) on LMDB
#   BENCH=/other/checkout/.build/release/strata-bench Scripts/count-instructions.sh 1 sqlite
#   HISTORY=off Scripts/count-instructions.sh 1 lmdb    # workload 1 on stores without history
#   Scripts/count-instructions.sh 10 sqlite 10000       # workload 10: history on against off
#   Scripts/count-instructions.sh 6 lmdb                # workload 6: making and freeing a context
#
# Prints instructions per row for Strata's unit of work (the body inside `perform`), for the
# context's teardown (its objects freed), for the raw baseline, and the ratio
# (body + teardown) / raw. Needs valgrind; workloads 1 to 5, 9 and 13 (6 and 10: below). Takes 20–60 seconds. "Per row"
# always divides by the rows in the store, also for workload 4 (predicate), whose windows
# select only part of them: the numbers compare builds, and the ratio does not depend on it.
#
# Workload 1 on LMDB also counts the commit, which runs on the environment's writer thread, not
# inside the unit of work's call tree (callgrind's toggles follow one thread's calls): a third
# run (1 timed repetition, so two inserts) collects only inside the writer's write transactions
# (`LMDBEnvironment.writeOnWriterThread`: map growth, begin, the change set's puts, a re-run on
# MDB_MAP_FULL if any, `mdb_txn_commit`) and dumps the count after each commit. Each round makes
# its store (opening it, its accounts' commit) and then reserves keys and commits the N rows;
# the two largest dumps are the two rows' commits (with the key reservation before each), and
# their mean per row is added to Strata's side.
# (Before this, the LMDB insert ratio left the commit out: about 0.7 instead of about 1.5.)
#
# Workload 9 (migration) counts the open that migrates, with no context teardown: on SQLite the
# whole open (`MigrationWorkload.openMigrating`, all on the calling thread); on LMDB the opening
# write transaction (`LMDBCatalog.open`, on the writer thread, where the migration runs; it
# also counts the tiny open of each repetition's new, empty store). The raw side is the raw
# copy (`migrateRows`).
#
# HOOK=noop passes `--hook noop`: the stores get an instrumentation hook that ignores every event
# (HOOK=none, or no HOOK, opens them without one; a build from before the hook takes no --hook),
# to count what a set hook costs per row.
#
# HISTORY=off passes `--history off`: the stores of workloads 1–6 and 9 record no persistent
# history (issue 15; on by default, as in an application).
#
# Workload 10 (history's cost on an insert) runs workload 1 with history on and off, collecting
# every instruction of the process (LMDB commits on its writer thread, which a toggle on the
# unit of work would miss), and prints per row: Strata's instructions both ways (the whole run
# but the raw baseline's insert: making the store with its 1,000 accounts, the insert and its
# save, the teardown), the overhead, and where the history-on run spends it: building the
# record in the core (`ObjectContext.historyRecord`), noting to-many changes for it
# (`noteToManyChange`), the engine's append (`appendHistory`) and, inside that, JSON encoding
# (`JSONEncoder.encode`).
#
# Workload 6 (a fresh context per operation) counts what one context costs to make
# (`PersistentContainer.newBackgroundContext`) and to free with its one looked-up object
# (`ObjectContext.deinit`): each call is dumped on its own (`--dump-after`, 1,000 rows: about
# 2,000 of each) and the medians are printed, so that the few contexts holding many objects (the
# reused context, the store's setup) do not count. This is the fixed cost a fresh context adds
# to an operation; its wall-clock figure is noisy on this VM ("Fresh contexts: the floor" in
# Docs/Benchmarks.md).
#
# valgrind 3.19 stops with an internal error when a program calls `sigsuspend` with a mask in
# read-only memory, as libdispatch does; a tiny preloaded wrapper passes it a copy instead.
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${1:?workload 1, 2, 3, 4, 5, 6, 9, 10 or 13}
engine=${2:?sqlite or lmdb}
rows=${3:-10000}
bench=${BENCH:-.build/release/strata-bench}
history=${HISTORY:-on}
hook_args=()
[ -n "${HOOK:-}" ] && hook_args=(--hook "$HOOK")
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
    13) body='*StrataWorkloadsO16toManyPrefetched*cfU_'; raw="*${raw_type}C6toManyAA8ChecksumVyKF" ;;
    10) body='*no-body-toggle*'
       if [ "$engine" = lmdb ]; then raw="*${raw_type}C10insertRows*Tf4nnnd_n"; else raw="*${raw_type}C10insertRowsyyAA7DatasetVKF"; fi ;;
    9) if [ "$engine" = lmdb ]; then body='*LMDBCatalogV4open_*'; else body='*MigrationWorkloadO13openMigrating*'; fi
       raw="*${raw_type}CAA0C8BaselineA2aDP11migrateRows*" ;;
    6) ;;  # counted per call, below
    *) echo "workload must be 1, 2, 3, 4, 5, 6, 9, 10 or 13" >&2; exit 1 ;;
esac
teardown='*ObjectContextCfD'
# The writer thread's write transaction (workload 1 on LMDB); the pattern leaves out its `$defer`.
writer='*LMDBEnvironmentC19writeOnWriterThread*KlF*'
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

if [ "$workload" = 6 ]; then
    for function in PersistentContainerC20newBackgroundContextAA06ObjectF0CyF 13ObjectContextCfD; do
        symbol=$(nm "$bench" | grep -o "\S*$function\$" | head -1 || true)
        [ -n "$symbol" ] || { echo "no $function in $bench" >&2; exit 1; }
        mkdir -p "$work/dumps" && rm -f "$work/dumps"/*
        LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --callgrind-out-file="$work/dumps/out" \
            --toggle-collect="*$function" --dump-after="$symbol" "$bench" --rows "${3:-1000}" --workloads 6 \
            --engine "$engine" --repetitions 1 --history "$history" "${hook_args[@]}" >/dev/null 2>&1 ||
            { echo "the callgrind run of workload 6 failed" >&2; exit 1; }
        compgen -G "$work/dumps/out.*" >/dev/null || { echo "callgrind wrote no per-call dumps" >&2; exit 1; }
        cat "$work"/dumps/out.* | sed -n 's/^totals: *\([0-9]*\).*/\1/p' | sort -n |
            awk -v name="$function" '{ count[NR] = $1 } END {
                what = (name ~ /newBackgroundContext/) ? "make a context" : "free a context and its object"
                printf "%s: median %d instructions (%d calls; 10th-90th percentile %d-%d)\n", what,
                    count[int((NR + 1) / 2)], NR, count[int(NR * 0.1) + 1], count[int(NR * 0.9)]
            }'
    done
    exit 0
fi

if [ "$workload" = 10 ]; then
    # Four runs: history on and off, each with 1 and 3 timed repetitions of workload 1.
    for variant in on off; do
        for repetitions in 1 3; do
            LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind \
                --callgrind-out-file="$work/out-$variant$repetitions" "$bench" --rows "$rows" --workloads 1 \
                --engine "$engine" --repetitions "$repetitions" --history "$variant" >/dev/null 2>&1
            callgrind_annotate --inclusive=yes --threshold=100 "$work/out-$variant$repetitions" \
                >"$work/annotated-$variant$repetitions" 2>/dev/null
        done
    done
    python3 - "$rows" "$raw" "$work" <<'PY'
import fnmatch, re, sys
rows, raw, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
patterns = {
    "raw": raw,
    "record": "*13historyRecord*",
    "note": "*16noteToManyChange*",
    "append": "*13appendHistory*",
    "json": "*JSONEncoderC6encode*",
}

def totals(path):
    best = dict.fromkeys(patterns, 0)
    best["total"] = 0
    for line in open(path):
        if "PROGRAM TOTALS" in line:
            best["total"] = int(line.split()[0].replace(",", ""))
            continue
        match = re.match(r"\s*([\d,]+) \(.*?\)\s+(\S+)", line)
        if not match:
            continue
        count = int(match.group(1).replace(",", ""))
        name = match.group(2).split(":", 1)[-1]
        for key, pattern in patterns.items():
            if fnmatch.fnmatch(name, pattern):
                best[key] = max(best[key], count)
    return best

def per_row(variant):
    one, three = totals(f"{work}/annotated-{variant}1"), totals(f"{work}/annotated-{variant}3")
    return {key: (three[key] - one[key]) / (2 * rows) for key in one}

on, off = per_row("on"), per_row("off")
strata_on, strata_off = on["total"] - on["raw"], off["total"] - off["raw"]
print("instructions per row, Strata (whole run but the raw insert): history on %.0f, off %.0f; "
      "overhead %.0f (%.1f%%); raw insert %.0f" % (strata_on, strata_off, strata_on - strata_off,
      100 * (strata_on - strata_off) / max(strata_off, 1), on["raw"]))
print("history on, per row: historyRecord %.0f, noteToManyChange %.0f, appendHistory %.0f "
      "(of which JSONEncoder.encode %.0f)" % (on["record"], on["note"], on["append"], on["json"]))
PY
    exit 0
fi

# Two runs, with 1 and 3 timed repetitions (each after one warm-up): the differences are two
# units of work per side, free of everything else the runs share (filling the store and its
# context's teardown among them).
for repetitions in 1 3; do
    LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --callgrind-out-file="$work/out$repetitions" \
        --toggle-collect="$body" --toggle-collect="$teardown" --toggle-collect="$raw" \
        "$bench" --rows "$rows" --workloads "$workload" --engine "$engine" --repetitions "$repetitions" --history "$history" "${hook_args[@]}" >/dev/null 2>&1
    callgrind_annotate --inclusive=yes --threshold=100 "$work/out$repetitions" >"$work/annotated$repetitions" 2>/dev/null
done

commits=0
if [ "$workload" = 1 ] && [ "$engine" = lmdb ]; then
    # --dump-after takes no wildcard: the exact name of the specialisation for commits (Void).
    dump=$(nm "$bench" | grep -o '\S*LMDBEnvironmentC19writeOnWriterThread\S*KlFyt_Tg5$' | head -1 || true)
    [ -n "$dump" ] || { echo "no writeOnWriterThread specialisation for Void in $bench" >&2; exit 1; }
    LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --callgrind-out-file="$work/writer" \
        --toggle-collect="$writer" --dump-after="$dump" \
        "$bench" --rows "$rows" --workloads 1 --engine lmdb --repetitions 1 --history "$history" >/dev/null 2>&1
    # Each dump's total; the two largest are the two rounds' row commits.
    commits=$(cat "$work"/writer* | sed -n 's/^totals: *\([0-9]*\).*/\1/p' | sort -n | tail -2 |
        awk '{ sum += $1 } END { printf "%d", sum / 2 }')
fi

python3 - "$rows" "$body" "$raw" "$work/annotated1" "$work/annotated3" "$teardown" "$commits" <<'PY'
import fnmatch, re, sys
rows, body, raw, first, second = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
patterns = {"body": body, "teardown": sys.argv[6], "raw": raw}
commit = int(sys.argv[7]) / rows

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
strata = per_row["body"] + per_row["teardown"] + commit
ratio = strata / max(per_row["raw"], 1)
writer = ", commit on the writer thread %.0f" % commit if commit else ""
print("instructions per row: Strata %.0f (unit of work %.0f, context teardown %.0f%s), raw %.0f; ratio %.2f"
      % (strata, per_row["body"], per_row["teardown"], writer, per_row["raw"], ratio))
PY
