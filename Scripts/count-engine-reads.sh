#!/usr/bin/env bash
# Counts, with callgrind, the instructions the engines spend on the reads that faults, batch
# faults and prefetching make, below the object layer (issue 16): 1,000 accounts with 10 rows
# each (10,000 rows, an index on the row's account), every account linked to 10 rows.
#
#   Scripts/count-engine-reads.sh sqlite
#   Scripts/count-engine-reads.sh lmdb
#
# Prints instructions per row (per link for the two link reads), inclusive, for:
#   Equality             1,000 faults: forEachRow of `account == key`, one per account
#   Membership           one forEachRow of `account IN (all 1,000 keys)`, in primary-key order
#   MembershipAnyOrder   the same with `inKeyOrder: false`
#   MembershipGeneral    the same rows through `.and([isIn, true])`: SQLite's general path (a bound
#                        IN list), LMDB's index scan with the evaluator on every candidate
#   NotNull              one forEachRow of `account IS NOT NULL`
#   FetchAll             one forEachRow of every row
#   Links / LinksPerKey  forEachLink of all 1,000 keys / linkedKeys per key
# Each runs 3 times (the first prepares statements); the count is the inclusive total / 30,000.
# Links the program in Scripts/engine-reads against the release build's engine objects
# (`swift build -c release --product strata-bench` first), with the test's harness main
# compiled -Onone so that its functions keep their names. Needs valgrind; takes ~30 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
engine=${1:?sqlite or lmdb}
release=.build/release
[ -d "$release/StrataSQLite.build" ] || swift build -c release --product strata-bench >&2
package=$(grep -o 'package-name","[^"]*"' .build/release.yaml | head -1 | sed 's/.*","//; s/"//')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swiftc -Onone -swift-version 6 -package-name "$package" -module-name micro Scripts/engine-reads/main.swift \
    -I "$release/Modules" -Xcc -fmodule-map-file=Modules/CSQLite/module.modulemap \
    -Xcc -fmodule-map-file=Modules/CLMDB/module.modulemap \
    -Xcc -fmodule-map-file="$release/CStrataCRC.build/module.modulemap" -Xcc -IModules/CStrataCRC/include \
    "$release"/StrataStorage.build/*.o "$release"/StrataSQLite.build/*.o "$release"/StrataLMDB.build/*.o \
    "$release"/CStrataCRC.build/*.o -lsqlite3 -llmdb -o "$work/micro"
# valgrind 3.19 cannot read the debug information of this link; the symbols are enough.
strip --strip-debug "$work/micro"
valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/micro" "$engine" >/dev/null 2>&1
callgrind_annotate --inclusive=yes --threshold=100 "$work/out" 2>/dev/null |
    grep -E 's5micro0A[0-9]+[A-Za-z]+yy13StrataStorage11StoreReader_pKF ' | while read -r count rest; do
        name=$(echo "$rest" | grep -oE 's5micro0A[0-9]+[A-Za-z]+' | sed 's/s5micro0A[0-9]*//; s/yy$//')
        echo "$engine $name $((${count//,/} / 30000))"
    done
