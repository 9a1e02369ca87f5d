#!/usr/bin/env bash
# Runs CMD... against a throwaway PostgreSQL cluster, then stops the server and deletes the
# cluster, whether CMD succeeds, fails or is interrupted.
#
#   bash Scripts/with-postgres.sh swift test --filter Postgres
#
# What it does:
#   1. finds initdb/pg_ctl (PG_BINDIR, else `pg_config --bindir`, else the newest
#      /usr/lib/postgresql/<v>/bin), installing `postgresql` with apt-get when they are missing;
#   2. makes a short temporary directory (the Unix socket path must stay under 107 bytes),
#      owned by an unprivileged user: `postgres` when run as root (PostgreSQL refuses to run as
#      root), yourself otherwise;
#   3. initdb (UTF8, C locale, trust on the Unix socket, scram-sha-256 on loopback TCP) with a
#      superuser role `strata`, starts the server on the socket in that directory and on
#      127.0.0.1 at a free port, and creates the database `strata`;
#   4. exports STRATA_POSTGRES_URL=postgresql://strata@/strata?host=<dir>&port=<port>
#      (the same port also listens on 127.0.0.1, for tests that need TCP and passwords)
#      and STRATA_POSTGRES_CTL (a script running pg_ctl -D <data> as the cluster's owner, for
#      restart tests), and runs CMD, whose exit status becomes the script's.
#
# If STRATA_POSTGRES_URL is already set, the script runs CMD against that server and starts
# nothing (so nesting is harmless and a managed server can be used instead).
# Knobs: PG_BINDIR, STRATA_PG_PARENT (default /tmp), STRATA_PG_MAX_CONNECTIONS (default 500),
# STRATA_PG_FSYNC=on (default off: faster,
# and safe for every test that does not crash the machine itself), STRATA_PG_KEEP=1 (leave the
# cluster directory behind for inspection; the server is still stopped).
set -euo pipefail

log() { printf 'with-postgres: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() { date +%s%3N; }

[ $# -gt 0 ] || die "usage: $0 CMD [ARGS...]"

if [ -n "${STRATA_POSTGRES_URL:-}" ]; then
    log "STRATA_POSTGRES_URL is already set; using that server and starting none"
    exec "$@"
fi

# --- 1. binaries --------------------------------------------------------------------------
find_bindir() {
    if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; return; fi
    local dir
    if command -v pg_config >/dev/null 2>&1; then
        dir=$(pg_config --bindir 2>/dev/null || true)
        if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
    fi
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
}
bindir=$(find_bindir)
if [ -z "$bindir" ]; then
    command -v apt-get >/dev/null 2>&1 || die "PostgreSQL server binaries (initdb, pg_ctl) not found; install PostgreSQL or set PG_BINDIR"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing postgresql and libpq-dev ..."
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql libpq-dev >/dev/null
    bindir=$(find_bindir)
    [ -n "$bindir" ] || die "installed postgresql but still found no initdb under /usr/lib/postgresql/*/bin"
fi
for tool in initdb pg_ctl postgres; do
    [ -x "$bindir/$tool" ] || die "$bindir/$tool is missing or not executable"
done

# --- 2. directory and user ------------------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
    pg_user=postgres
    id -u "$pg_user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$pg_user"
    as_pg() { runuser -u "$pg_user" -- "$@"; }
else
    pg_user=$(id -un)
    as_pg() { "$@"; }
fi

parent=${STRATA_PG_PARENT:-/tmp}
# Remove clusters of earlier runs that died without their trap (SIGKILL, power cut): only
# directories carrying our marker, and only when the script that made them is gone. Their
# server may still be running (a SIGKILLed script leaves an orphaned postmaster): stop it.
for old in "$parent"/strata-pg.*; do
    [ -f "$old/.strata-with-postgres" ] || continue
    owner=$(cat "$old/.strata-with-postgres" 2>/dev/null || true)
    if [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null; then continue; fi
    log "removing stale cluster $old (its script, pid ${owner:-?}, is gone)"
    if [ -f "$old/data/postmaster.pid" ]; then
        as_pg "$bindir/pg_ctl" -D "$old/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
    fi
    rm -rf -- "$old"
done

dir=$(mktemp -d "$parent/strata-pg.XXXXXX")
echo $$ >"$dir/.strata-with-postgres"
chmod 755 "$dir"
chown "$pg_user" "$dir" "$dir/.strata-with-postgres"
data="$dir/data"
logfile="$dir/server.log"
started=0

cleanup() {
    local status=$?
    trap - EXIT INT TERM HUP
    if [ "$started" -eq 1 ]; then
        local t0
        t0=$(now_ms)
        # fast: roll back open transactions, disconnect clients, checkpoint, exit.
        if ! as_pg "$bindir/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null 2>&1; then
            log "pg_ctl stop -m fast failed; trying -m immediate"
            as_pg "$bindir/pg_ctl" -D "$data" -m immediate -w -t 30 stop >/dev/null 2>&1 || log "could not stop the server in $data"
        fi
        log "server stopped in $(($(now_ms) - t0)) ms"
    fi
    if [ "${STRATA_PG_KEEP:-0}" = 1 ]; then
        log "kept $dir"
    else
        rm -rf -- "$dir"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Unix socket path: <dir>/.s.PGSQL.<port> must fit in sun_path (108 bytes incl. NUL).
[ $(( ${#dir} + 18 )) -le 107 ] || die "socket directory $dir is too long for a Unix socket path; set STRATA_PG_PARENT to a shorter directory"

# --- 3. initdb and start --------------------------------------------------------------------
t0=$(now_ms)
if ! as_pg "$bindir/initdb" -D "$data" -U strata -E UTF8 --locale=C --no-sync \
    --auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    die "initdb failed (above)"
fi
t_initdb=$(($(now_ms) - t0))

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
fsync=${STRATA_PG_FSYNC:-off}
# The suite runs its tests in parallel, and every open PostgreSQL store holds up to its pool's
# connections (4 in the tests) until its container closes; the server-only tests add 4 processes
# and their readers. 500 leaves room for over a hundred stores open at once (the default, 100,
# does not).
max_connections=${STRATA_PG_MAX_CONNECTIONS:-500}
t0=$(now_ms)
port=""
for _ in 1 2 3 4 5; do
    candidate=$((20000 + RANDOM % 40000))
    port_in_use "$candidate" && continue
    if as_pg "$bindir/pg_ctl" -D "$data" -l "$logfile" -w -t 60 \
        -o "-p $candidate -k $dir -c listen_addresses=127.0.0.1 -c fsync=$fsync -c synchronous_commit=$fsync -c full_page_writes=$fsync -c max_connections=$max_connections" \
        start >/dev/null 2>&1; then
        port=$candidate
        break
    fi
    if ! grep -qiE 'could not (bind|create)|address already in use|lock file' "$logfile" 2>/dev/null; then
        cat "$logfile" >&2 || true
        die "pg_ctl start failed (server log above)"
    fi
    log "port $candidate was taken; trying another"
done
[ -n "$port" ] || { cat "$logfile" >&2 || true; die "pg_ctl start failed on 5 ports (server log above)"; }
started=1
t_start=$(($(now_ms) - t0))

t0=$(now_ms)
if ! as_pg "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U strata -d postgres \
    -c "CREATE DATABASE strata" >"$dir/createdb.log" 2>&1; then
    cat "$dir/createdb.log" >&2
    die "CREATE DATABASE failed (above)"
fi
t_createdb=$(($(now_ms) - t0))

# A control script for tests that restart or stop the server (pg_ctl must run as the cluster's
# owner, not root): "$STRATA_POSTGRES_CTL" restart -m fast -w. It always passes -l: pg_ctl
# restart does not remember the log file, and without it the restarted server writes its log
# to, and keeps open, the caller's stdout and stderr (a pipe from the test run never closes).
ctl="$dir/pg_ctl.sh"
if [ "$(id -u)" -eq 0 ]; then
    printf '#!/bin/sh\nexec runuser -u %s -- %s -D %s -l %s "$@"\n' "$pg_user" "$bindir/pg_ctl" "$data" "$logfile" >"$ctl"
else
    printf '#!/bin/sh\nexec %s -D %s -l %s "$@"\n' "$bindir/pg_ctl" "$data" "$logfile" >"$ctl"
fi
chmod 755 "$ctl"
export STRATA_POSTGRES_CTL="$ctl"
export STRATA_POSTGRES_URL="postgresql://strata@/strata?host=$dir&port=$port"
log "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') up: initdb ${t_initdb} ms, start ${t_start} ms, createdb ${t_createdb} ms"
log "STRATA_POSTGRES_URL=$STRATA_POSTGRES_URL (also on 127.0.0.1:$port, scram-sha-256)"
log "STRATA_POSTGRES_CTL=$STRATA_POSTGRES_CTL (pg_ctl as the cluster owner, e.g. restart -m fast)"

# --- 4. run ---------------------------------------------------------------------------------
# Not exec: the trap must run afterwards. `|| status=$?` keeps set -e from skipping the report.
status=0
"$@" || status=$?
[ "$status" -eq 0 ] || log "command exited with status $status"
exit "$status"
