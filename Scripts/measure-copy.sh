#!/usr/bin/env bash
# Issue 28's figure: `strata copy` of ROWS rows between each ordered pair of SQLite, LMDB and
# PostgreSQL, its elapsed time and its peak resident set (`/usr/bin/time -v`), as a Markdown table.
#
#   bash Scripts/measure-copy.sh                  # ROWS=1000000
#   ROWS=100000 bash Scripts/measure-copy.sh
#
# 1. Builds `strata` and the `ledger` example in release.
# 2. Makes the source store with the ledger (Strata makes it, as an application would): `ledger
#    init` of a SQLite store, ten accounts, then `ledger import` of generated CSV files of CHUNK
#    lines each (default 50,000), each file dated a day after the one before (so every import takes
#    the batch-upsert path). A line becomes a Transaction row and an ImportLine row, so ROWS/2
#    lines make ROWS rows, plus the ten accounts; the table gives the exact count.
# 3. Copies it (measured): SQLite → LMDB and SQLite → PostgreSQL; then copies those two copies
#    (measured): LMDB → SQLite, LMDB → PostgreSQL, PostgreSQL → SQLite, PostgreSQL → LMDB. Every
#    target is new. A copy keeps the rows and keys but not the history (see Docs/StrataTool.md).
# 4. Prints the table (and keeps each copy's output and `time -v` report in the work directory).
#
# PostgreSQL is a throwaway server from Scripts/with-postgres.sh (the script runs itself under it
# when STRATA_POSTGRES_URL is not set), with fsync on (STRATA_PG_FSYNC=on unless set), since the
# embedded engines sync their commits too. Knobs: ROWS, CHUNK, BATCH (strata copy --batch-rows;
# default the tool's), WORK (the directory for the stores; default a new one under /tmp, removed
# at the end unless KEEP=1). Installs GNU time (`apt-get install time`) when /usr/bin/time is
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${STRATA_POSTGRES_URL:-}" ]; then
    export STRATA_PG_FSYNC="${STRATA_PG_FSYNC:-on}"
    exec bash Scripts/with-postgres.sh bash "$0" "$@"
fi

rows="${ROWS:-1000000}"
chunk="${CHUNK:-50000}"
log() { printf 'measure-copy: %s\n' "$*" >&2; }
commas() { sed -e :a -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/;ta' <<<"$1"; }

if [ ! -x /usr/bin/time ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing GNU time ..."
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq time >/dev/null
fi

log "building strata and ledger in release ..."
swift build -c release --product strata >/dev/null
swift build -c release --product ledger >/dev/null
strata=.build/release/strata
ledger=.build/release/ledger

work="${WORK:-$(mktemp -d /tmp/strata-measure-copy.XXXXXX)}"
mkdir -p "$work"
run_id="measure_copy_$$"
cleanup() {
    [ "${KEEP:-0}" = 1 ] && { log "kept $work"; return; }
    rm -rf -- "$work"
}
trap cleanup EXIT

# --- the source store -------------------------------------------------------------------------
source_store="$work/source.sqlite"
lines=$((rows / 2))
accounts=10
t0=$(date +%s)
"$ledger" --store "$source_store" init >/dev/null
for a in $(seq 1 "$accounts"); do
    "$ledger" --store "$source_store" account add "Account $a" --opening 1000 >/dev/null
done
done_lines=0
day=0
while [ "$done_lines" -lt "$lines" ]; do
    count=$((lines - done_lines < chunk ? lines - done_lines : chunk))
    date=$(date -u -d "2000-01-01 + $day days" +%Y-%m-%d)
    csv="$work/import-$day.csv"
    awk -v first="$done_lines" -v n="$count" -v date="$date" -v accounts="$accounts" 'BEGIN {
        print "external_id,account,date,amount,category,note"
        for (i = first; i < first + n; i++)
            printf "x%09d,Account %d,%s,%d.%02d,,Generated line %d\n", i, i % accounts + 1, date, 1 + i % 97, i % 100, i
    }' >"$csv"
    if ! "$ledger" --store "$source_store" import "$csv" >"$work/import.out" 2>&1; then
        cat "$work/import.out" >&2
        log "ledger import $csv failed"
        exit 1
    fi
    rm -f -- "$csv"
    done_lines=$((done_lines + count))
    day=$((day + 1))
    log "imported $done_lines of $lines lines"
done
log "source store made in $(($(date +%s) - t0)) s"

# --- the copies -------------------------------------------------------------------------------
postgres() { printf '%s&schema=%s_%s' "$STRATA_POSTGRES_URL" "$run_id" "$1"; }
batch=()
[ -n "${BATCH:-}" ] && batch=(--batch-rows "$BATCH")

table="| From | To | Rows | Elapsed | Peak RSS | Peak anonymous memory |"
table+=$'\n'"| --- | --- | ---: | ---: | ---: | ---: |"
# measure NAME FROM TO: times `strata copy FROM TO` and adds a row to the table. Besides `time -v`'s
# peak resident set, which counts the pages of a memory-mapped LMDB store that the copy touched,
# it samples the process's anonymous memory (RssAnon: its heap and stacks) every 0.05 s.
measure() {
    local name=$1 from=$2 to=$3
    log "copying $name ..."
    /usr/bin/time -v -o "$work/$name.time" "$strata" copy "$from" "$to" --json "${batch[@]}" \
        >"$work/$name.json" 2>"$work/$name.err" &
    local timer=$! anon=0 child sample
    while kill -0 "$timer" 2>/dev/null; do
        child=$(cat "/proc/$timer/task/$timer/children" 2>/dev/null || true)
        sample=$(awk '/^RssAnon:/ { print $2 }' "/proc/${child// /}/status" 2>/dev/null || true)
        [ -n "$sample" ] && [ "$sample" -gt "$anon" ] && anon=$sample
        sleep 0.05
    done
    if ! wait "$timer"; then
        cat "$work/$name.err" "$work/$name.time" >&2
        log "strata copy $name failed"
        exit 1
    fi
    local elapsed rss copied
    elapsed=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/$name.time" |
        awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.1f s", s }')
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$name.time" |
        awk '{ printf "%.0f MB", $1 / 1024 }')
    # The rows the copy verified: the target's count of each entity.
    copied=$(awk '/"entities"/ { on = 1 } /"joins"/ { on = 0 } on && /"count"/ { gsub(/[^0-9]/, ""); s += $0 }
        END { print s }' "$work/$name.json")
    table+=$'\n'"| ${name%%-*} | ${name#*-} | $(commas "$copied") | $elapsed | $rss | $((anon / 1024)) MB |"
}
measure "SQLite-LMDB" "sqlite:$source_store" "lmdb:$work/from-sqlite.lmdb"
measure "SQLite-PostgreSQL" "sqlite:$source_store" "$(postgres from_sqlite)"
measure "LMDB-SQLite" "lmdb:$work/from-sqlite.lmdb" "sqlite:$work/from-lmdb.sqlite"
measure "LMDB-PostgreSQL" "lmdb:$work/from-sqlite.lmdb" "$(postgres from_lmdb)"
measure "PostgreSQL-SQLite" "$(postgres from_sqlite)" "sqlite:$work/from-postgres.sqlite"
measure "PostgreSQL-LMDB" "$(postgres from_sqlite)" "lmdb:$work/from-postgres.lmdb"

echo "strata copy, $(commas "$rows") rows requested, $(date -u +%Y-%m-%d), $(nproc) cores," \
    "$(git rev-parse --short HEAD), release build:"
echo
echo "$table"
