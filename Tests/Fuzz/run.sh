#!/usr/bin/env bash
# Builds the libFuzzer targets (AddressSanitizer + libFuzzer) into .build/fuzz and runs each
# for FUZZ_SECONDS, growing its corpus in .build/fuzz/corpus-<target>.
#
#   bash Tests/Fuzz/run.sh                      # every target, 60 s each
#   FUZZ_SECONDS=300 bash Tests/Fuzz/run.sh row # one target, 5 minutes
#   FUZZ_BUILD_ONLY=1 bash Tests/Fuzz/run.sh    # build, do not run
#
# Each target reads the checked-in seeds in Tests/Fuzz/corpus/<target> and writes new inputs to
# .build/fuzz/corpus-<target> (git-ignored), so every run starts where the last one stopped.
# A crash (trap, sanitizer report, violated check, or a single input running > FUZZ_TIMEOUT
# seconds) leaves its input in .build/fuzz/artifacts/ and makes the script exit non-zero after
# the remaining targets ran. Every run appends "date target seconds executions status" to
# .build/fuzz/runs.tsv. See Docs/Fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-30}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(uri row predicate)
out=.build/fuzz
checks=Tests/StrataTests/Fuzz/Checks
mkdir -p "$out/artifacts"

flags=(
    -swift-version 6 -parse-as-library -O -g -sanitize=fuzzer,address
    -enable-upcoming-feature ExistentialAny
    -enable-upcoming-feature InternalImportsByDefault
    -enable-upcoming-feature MemberImportVisibility
)

# Whether $1 is missing or older than any file in the remaining arguments (directories).
stale() {
    local product=$1
    shift
    [ ! -e "$product" ] || [ -n "$(find "$@" -name '*.swift' -newer "$product" | head -n 1)" ]
}

# Builds library module $1 from directory $2 as an instrumented static library.
build_module() {
    local module=$1 sources=$2
    shift 2
    if stale "$out/lib$module.a" "$sources" "$@"; then
        echo "fuzz: building $module (ASan + coverage)"
        # One object per module (-wmo): an archive member that no symbol pulls in would be left
        # out of the link, and with it the module's conformances of Foundation types.
        # shellcheck disable=SC2046
        swiftc "${flags[@]}" -wmo -enable-testing -emit-library -static -emit-module -module-name "$module" \
            -emit-module-path "$out/$module.swiftmodule" -I "$out" -I Modules/CLMDB \
            -o "$out/lib$module.a" $(find "$sources" -name '*.swift' | sort)
    fi
}

# Builds harness $1 (check folder $2) linked against libraries $3….
build_target() {
    local target=$1 folder=$2
    shift 2
    local binary=$out/fuzz-$target
    if stale "$binary" "$checks/Shared" "$checks/$folder" Tests/Fuzz/Entry Modules; then
        echo "fuzz: building fuzz-$target"
        local libraries=()
        for library in "$@"; do libraries+=("-l$library"); done
        # shellcheck disable=SC2046
        swiftc "${flags[@]}" -I "$out" -I Modules/CLMDB -L "$out" "${libraries[@]}" \
            $(find "$checks/Shared" "$checks/$folder" -name '*.swift' | sort) "Tests/Fuzz/Entry/${folder}FuzzEntry.swift" \
            -o "$binary" 2> >(grep -v "Cannot export local symbol '__asan_" >&2)
    fi
}

build_module Strata Modules/Strata
build_module StrataLMDB Modules/StrataLMDB Modules/Strata
build_target uri URI Strata swiftSynchronization
build_target row Row StrataLMDB Strata lmdb swiftSynchronization
build_target predicate Predicate Strata swiftSynchronization
[ -z "${FUZZ_BUILD_ONLY:-}" ] || exit 0

max_len() {
    case $1 in
        uri) echo 640 ;;        # the parser refuses more than 512 UTF-8 bytes
        row) echo 512 ;;        # up to 8 columns with short texts and blobs
        predicate) echo 384 ;;  # a depth-3 expression plus four items
    esac
}

failed=0
summary=()
for target in "${targets[@]}"; do
    binary=$out/fuzz-$target
    [ -x "$binary" ] || { echo "fuzz: unknown target $target (uri, row, predicate)" >&2; exit 2; }
    corpus=$out/corpus-$target
    mkdir -p "$corpus"
    log=$out/log-$target.txt
    dictionary=()
    [ ! -f "Tests/Fuzz/$target.dict" ] || dictionary=("-dict=Tests/Fuzz/$target.dict")
    echo "fuzz: running $target for ${seconds}s (corpus $corpus)"
    status=ok
    started=$SECONDS
    # Swift's own crash backtracer is off so that libFuzzer and ASan report the crash.
    # Leak checking is off: the Swift runtime's metadata caches and Foundation's
    # process-lifetime allocations are reported as leaks at exit.
    if ! SWIFT_BACKTRACE=enable=no "$binary" "$corpus" "Tests/Fuzz/corpus/$target" "${dictionary[@]}" \
        -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout="$timeout" \
        -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$out/artifacts/$target-" >"$log" 2>&1; then
        status=CRASH
        failed=1
        grep -E "fuzz violation|ERROR: AddressSanitizer|Fatal error|ERROR: libFuzzer|Test unit written" "$log" | head -n 8 >&2 || true
    fi
    elapsed=$((SECONDS - started))
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    units=$(find "$corpus" -type f | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$elapsed" "${executions:-0}" "$status" >>"$out/runs.tsv"
    summary+=("$(printf '%-10s %6ss %12s executions  %6s corpus files  %s' "$target" "$elapsed" "${executions:-?}" "$units" "$status")")
done

echo
printf '%s\n' "${summary[@]}"
[ "$failed" -eq 0 ] || echo "fuzz: crash artifacts are in $out/artifacts; add each as a regression test in Tests/StrataTests/Fuzz" >&2
exit "$failed"
