#!/usr/bin/env bash
# Compiles every ```swift block of README.md, Docs/*.md and the DocC articles (Modules/*/*.docc)
# against the package's products, with warnings as errors, so that documentation examples
# cannot drift from the code.
#
# The rules a block follows (see "Code examples" in Docs/Architecture.md):
# - A block is compiled exactly as shown, as the main file of its own executable, importing what
#   it imports itself.
# - A fragment says what the reader supplies on the line right before it:
#     (Supplies: `context: ObjectContext`, `accountID: ObjectID`; the models of the block above.)
#   Each backticked `name: Type` becomes a value of that type, a backticked declaration
#   (`import X`, `enum E: Error { … }`, …) is used as written, and "the block above" brings in
#   the previous block of the same document. A fragment is compiled after `import Foundation`
#   and `import Strata`.
# - A block that shows code the compiler refuses says so on the line before it:
#     (Does not compile, on purpose: …)
#   It must fail to compile, with every `// error: …` message it shows.
# - A block that starts with `// swift-tools-version:` is a package manifest: it must load
#   (`swift package dump-package`).
# - Code of another framework, shown for comparison, says so and why:
#     (Not compiled: Core Data code, for comparison; Core Data does not exist on Linux.)
#   It is listed as skipped.
#
# One package build compiles every block; the throwaway package lives in .build/doc-snippets
# (override with STRATA_SNIPPETS_DIR), so later runs only rebuild what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="${STRATA_SNIPPETS_DIR:-$root/.build/doc-snippets}"
mkdir -p "$out"

swift "$root/Scripts/DocSnippets/extract.swift" "$root" "$out"
count=$(wc -l < "$out/snippets.txt")
echo "check-doc-snippets: compiling $count swift blocks from README.md, Docs/*.md and the DocC articles"

if ! (cd "$out" && swift build -Xswiftc -warnings-as-errors > "$out/build.log" 2>&1); then
    grep -E "^/.*: (error|warning):" "$out/build.log" | sed "s|$out/Sources/||" | sort -u -t: -k1,1 -k2,2n | head -60 >&2 || true
    echo "check-doc-snippets: FAILED — a block above does not compile (target names are Document_line; full log: $out/build.log)" >&2
    exit 1
fi

status=0
while read -r target kind where; do
    [ "$kind" = manifest ] || continue
    if ! swift package --package-path "$out/Manifests/$target" dump-package > "$out/$target.log" 2>&1; then
        grep -E "error:" "$out/$target.log" | head -20 >&2 || true
        echo "check-doc-snippets: $where: the package manifest does not load" >&2
        status=1
    fi
done < "$out/snippets.txt"
while read -r target kind where; do
    [ "$kind" = fails ] || continue
    if (cd "$out" && SNIPPETS_FAILING=1 swift build -Xswiftc -warnings-as-errors --target "$target" > "$out/$target.log" 2>&1); then
        echo "check-doc-snippets: $where is marked as not compiling, but it compiles" >&2
        status=1
        continue
    fi
    while IFS= read -r expected; do
        # Only the compiler's diagnostic lines count, not the source lines it quotes.
        if ! grep -E "^/[^ ]+:[0-9]+:[0-9]+: error: " "$out/$target.log" | grep -qF -- "$expected"; then
            echo "check-doc-snippets: $where: the compiler did not report \"$expected\"" >&2
            status=1
        fi
    done < <(sed -n 's|^[[:space:]]*// error: \(.*\)$|error: \1|p' "$out/Sources/$target/main.swift")
done < "$out/snippets.txt"
while read -r target kind where; do
    [ "$kind" = skipped ] && echo "check-doc-snippets: skipped $where (marked \"Not compiled\")"
done < "$out/snippets.txt"
[ $status -eq 0 ] && echo "check-doc-snippets: all $count blocks behave as documented"
exit $status
