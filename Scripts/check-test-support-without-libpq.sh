#!/usr/bin/env bash
# Builds and runs Tests/Fixtures/TestSupportUser, a user's package whose test target depends on the
# StrataTestSupport product (and SQLite), with the PostgreSQL client library hidden: libpq's
# headers, its shared libraries and its pkg-config file are covered by empty ones in a mount
# namespace of this script's own, as on a machine without libpq-dev. Then checks that the
# fixture's build holds no PostgreSQL module and its test binary links no libpq.
#
# Without the right to make a mount namespace (`unshare --mount`, as root), libpq stays visible and
# only the second half (no module built, no libpq linked) is checked; the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
fixture=Tests/Fixtures/TestSupportUser
build_and_test='swift build --build-tests --package-path Tests/Fixtures/TestSupportUser -Xswiftc -warnings-as-errors &&
    swift test --skip-build --package-path Tests/Fixtures/TestSupportUser'

if unshare --mount true 2> /dev/null; then
    unshare --mount bash -euo pipefail -c '
        empty=$(mktemp -d)
        if [ -d /usr/include/postgresql ]; then mount --bind "$empty" /usr/include/postgresql; fi
        for file in /usr/lib/*/libpq.so* /usr/lib/*/pkgconfig/libpq.pc /usr/share/pkgconfig/libpq.pc; do
            if [ -e "$file" ]; then mount --bind /dev/null "$file"; fi
        done
        if pkg-config --exists libpq 2> /dev/null && [ -n "$(pkg-config --cflags-only-I libpq 2> /dev/null)" ]; then
            echo "check-test-support-without-libpq: libpq is still visible; cannot hide it" >&2
            exit 1
        fi
        echo "check-test-support-without-libpq: libpq hidden (headers, libraries, pkg-config)"
        '"$build_and_test"
else
    echo "check-test-support-without-libpq: no mount namespace here; libpq stays visible, checking the build graph only"
    bash -euo pipefail -c "$build_and_test"
fi

built=$(swift build --package-path "$fixture" --show-bin-path)
if ls -d "$built"/StrataPostgres.build "$built"/CPostgres.build 2> /dev/null | grep -q .; then
    echo "check-test-support-without-libpq: the fixture's build compiled a PostgreSQL module" >&2
    exit 1
fi
binary=$(ls -d "$built"/*.xctest | head -n 1)
if ldd "$binary" | grep -q libpq; then
    echo "check-test-support-without-libpq: $binary links libpq" >&2
    exit 1
fi
echo "check-test-support-without-libpq: StrataTestSupport builds and runs without libpq ($(basename "$binary") links no libpq)"
