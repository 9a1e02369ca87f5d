#!/usr/bin/env bash
# Checks the Swift sources against the committed .swift-format configuration and fails on any
# finding. Three checks:
# 1. `swift format lint --strict` over Modules, Tests, Examples and Benchmarks (every rule of
#    .swift-format, and every place where `swift format format` would change the layout).
# 2. No line longer than the configured `lineLength`. The formatter breaks code lines, but it
#    cannot break a string literal or a comment, and its lint stays silent about such a line;
#    split the literal (string concatenation or a multi-line literal) or the comment by hand.
# 3. Only the walled files of a library module (`Modules/<module>/Walled/`) import a C module
#    (`CSQLite`, `CLMDB`, `CPostgres`, `CStrataCRC`), so that C types stay in them.
#
# To fix layout findings, run the formatter with the same configuration, then this script again:
#   swift format format -i -r Modules Tests Examples Benchmarks
#
# Usage: bash Scripts/lint.sh [directory ...]   (default: Modules Tests Examples Benchmarks)
set -euo pipefail
cd "$(dirname "$0")/.."
directories=("$@")
[ ${#directories[@]} -eq 0 ] && directories=(Modules Tests Examples Benchmarks)

status=0
findings=$(swift format lint --strict --recursive --parallel --configuration .swift-format "${directories[@]}" 2>&1) || status=1
if [ -n "$findings" ]; then
    echo "$findings" | sort >&2
    count=$(echo "$findings" | grep -cE ': (error|warning): ' || true)
    echo "lint: swift format reports $count findings, by rule:" >&2
    echo "$findings" | grep -oE ': (error|warning): \[[A-Za-z]+\]' | sed 's/.*\[\(.*\)\]/\1/' | sort | uniq -c | sort -rn >&2
    status=1
fi

limit=$(sed -n 's/^[[:space:]]*"lineLength"[[:space:]]*:[[:space:]]*\([0-9]*\).*/\1/p' .swift-format)
[ -n "$limit" ] || { echo "lint: no lineLength in .swift-format" >&2; exit 1; }
# grep counts characters (not bytes) in a UTF-8 locale, as swift-format does.
long=$(LC_ALL=C.UTF-8 grep -rnE --include='*.swift' --exclude-dir=.build "^.{$((limit + 1)),}" "${directories[@]}" | cut -c1-160 | sort || true)
if [ -n "$long" ]; then
    echo "$long" >&2
    echo "lint: $(echo "$long" | wc -l) lines are longer than $limit characters (split the string literal or comment)" >&2
    status=1
fi

cimports=$(grep -rnE --include='*.swift' '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal)[[:space:]]+)?import[[:space:]]+(CSQLite|CLMDB|CPostgres|CStrataCRC)([[:space:]]|$)' Modules | grep -v '^Modules/[^/]*/Walled/' || true)
if [ -n "$cimports" ]; then
    echo "$cimports" >&2
    echo "lint: these files outside a Walled/ folder import a C module; move the C-facing code into the module's Walled/ folder" >&2
    status=1
fi

[ $status -eq 0 ] && echo "lint: no findings (swift format lint --strict, lines <= $limit characters, C modules imported only in Walled/ folders)"
exit $status
