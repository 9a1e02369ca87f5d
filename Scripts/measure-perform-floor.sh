#!/usr/bin/env bash
# Measures the floor under `ObjectContext.perform`: a round trip from a task on Swift's
# cooperative pool to a serial dispatch queue and back (the two thread hops every `perform`
# makes), with no Strata in it. Workload 6 (fresh context against reused) is this round trip
# plus the context's own work; see "Fresh contexts: the floor" in Docs/Benchmarks.md.
#
#   Scripts/measure-perform-floor.sh            # 20,000 round trips per variant
#   Scripts/measure-perform-floor.sh 50000
#
# Variants, each in its own process, run from a `Task.detached` (not the main actor):
#   inline      the work called directly: no hop (the loop's own cost)
#   queue       `withCheckedContinuation` + `queue.async` on one reused serial queue, resumed
#               from the block: the shape of `perform` on a reused context
#   fresh       the same with a new serial queue each time: a fresh context's queue
#   preference  `withTaskExecutorPreference` with a task executor that runs jobs on the queue
# Prints wall-clock µs per round trip, and when `perf` is there, context switches and CPU time
# per round trip; when `valgrind` is there, user-space instructions per round trip (callgrind,
# the difference between 2,000 and 12,000 round trips, which load on the machine does not move).
# Also says whether a task is still on the queue after `withTaskExecutorPreference` returns.
set -euo pipefail
cd "$(dirname "$0")/.."
trips=${1:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/floor.swift" <<'SWIFT'
import Dispatch

final class QueueExecutor: TaskExecutor, @unchecked Sendable {
    let queue: DispatchQueue
    init(_ queue: DispatchQueue) { self.queue = queue }
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

let marker = DispatchSpecificKey<Bool>()
@inline(never) func work(_ value: Int) -> Int { value &+ 1 }

nonisolated func viaQueue(_ queue: DispatchQueue, _ value: Int) async -> Int {
    await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: work(value)) } }
}

nonisolated func viaPreference(_ executor: QueueExecutor, _ value: Int) async -> Int {
    await withTaskExecutorPreference(executor) { work(value) }
}

@main struct Floor {
    static func main() async {
        await Task.detached { await run() }.value
    }

    nonisolated static func run() async {
        let variant = CommandLine.arguments[1]
        let trips = Int(CommandLine.arguments[2])!
        let queue = DispatchQueue(label: "floor")
        queue.setSpecific(key: marker, value: true)
        let executor = QueueExecutor(queue)
        if variant == "where" {
            _ = await viaPreference(executor, 0)
            print("after withTaskExecutorPreference returns, the task is on the queue: \(DispatchQueue.getSpecific(key: marker) ?? false)")
            return
        }
        var sum = 0
        let start = DispatchTime.now().uptimeNanoseconds
        switch variant {
        case "inline": for value in 0..<trips { sum &+= work(value) }
        case "queue": for value in 0..<trips { sum &+= await viaQueue(queue, value) }
        case "fresh": for value in 0..<trips { sum &+= await viaQueue(DispatchQueue(label: "fresh"), value) }
        case "preference": for value in 0..<trips { sum &+= await viaPreference(executor, value) }
        default: fatalError("unknown variant \(variant)")
        }
        let micros = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(trips) / 1000
        print("\(variant) \(micros) \(sum)")
    }
}
SWIFT
swiftc -O -parse-as-library "$work/floor.swift" -o "$work/floor"
"$work/floor" where 1

if command -v valgrind >/dev/null; then
    # valgrind 3.19 and libdispatch's sigsuspend: see Scripts/count-instructions.sh.
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
fi

instructions() { # variant trips → total instructions of the process
    LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind --callgrind-out-file="$work/cg-$1-$2" \
        "$work/floor" "$1" "$2" >/dev/null 2>&1
    callgrind_annotate "$work/cg-$1-$2" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}

printf '%-11s %12s %18s %16s %22s\n' variant "µs/trip" "switches/trip" "CPU µs/trip" "instructions/trip"
for variant in inline queue fresh preference; do
    switches=-
    cpu=-
    if command -v perf >/dev/null; then
        perf stat -x, -e task-clock,context-switches -o "$work/stat" "$work/floor" "$variant" "$trips" >"$work/out"
        switches=$(awk -F, -v n="$trips" '/context-switches/ { printf "%.2f", $1 / n }' "$work/stat")
        cpu=$(awk -F, -v n="$trips" '/task-clock/ { printf "%.2f", $1 * 1000 / n }' "$work/stat")
    else
        "$work/floor" "$variant" "$trips" >"$work/out"
    fi
    micros=$(awk '{ printf "%.2f", $2 }' "$work/out")
    counted=-
    if command -v valgrind >/dev/null; then
        small=$(instructions "$variant" 2000)
        large=$(instructions "$variant" 12000)
        counted=$(((large - small) / 10000))
    fi
    printf '%-11s %12s %18s %16s %22s\n' "$variant" "$micros" "$switches" "$cpu" "$counted"
done
