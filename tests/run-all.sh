#!/bin/sh
# The whole test suite, from a clean clone on Debian 12: installs what is missing, builds with
# -Werror, runs every suite (C Criterion suites, bootstrap node tests on the ESM sources and on the
# generated bundle, black-box conformance through the real `dsh`), each once through
# `meson test --suite`, then runs the C suites once more under AddressSanitizer + UBSan (the fuzz
# targets' corpora replay in both), then fuzzes each target for 30 s (tests/fuzz/run.sh).
# Idempotent. Starts with what this machine gives the tests (tests/features.sh); ends with every
# case that skipped and why, then "steps: N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./examples/setup.sh || exit 1

echo "==> what this machine gives the tests (tests/features.sh)"
./tests/features.sh build

# Criterion prints a skipped case and its reason only from verbosity 1 on.
CRITERION_VERBOSITY_LEVEL=1
export CRITERION_VERBOSITY_LEVEL
skips=$(mktemp)
trap 'rm -f "$skips"' EXIT

# The skipped cases of the last `meson test` in build dir $1: Criterion's "[SKIP] suite::case:
# reason" (not the "Test is disabled" of a filter) and node --test's "﹣ name (time) # reason".
collect_skips() {
    awk -v where="$1" '
        /^test: / { sub(/^test: +[^:]*:/, ""); t = $0; next }
        /\[SKIP\] / && !/: Test is disabled$/ { sub(/^.*\[SKIP\] /, ""); print where ": " t ": " $0; next }
        /^ *﹣ .* # / { sub(/^ *﹣ /, ""); sub(/ \([0-9.]+m?s\) # /, ": "); sub(/: SKIP$/, ": (no reason given)"); print where ": " t ": " $0 }
    ' "$1/meson-logs/testlog.txt" 2>/dev/null >>"$skips"
}

passed=0
failed=0
step() {
    name=$1
    shift
    echo "==> $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "==> FAILED: $name"
    fi
    dir=$(meson_test_dir "$@")
    [ -z "$dir" ] || collect_skips "$dir"
}

# The build directory of a command line holding `meson test -C DIR`, else nothing.
meson_test_dir() {
    while [ $# -gt 3 ]; do
        if [ "$1" = meson ] && [ "$2" = test ] && [ "$3" = -C ]; then
            echo "$4"
            return
        fi
        shift
    done
}

# Every suite through meson, each exactly once (meson test --suite X runs one alone).
# The node suites bootstrap, bootstrap-python, conformance and soak run once, in the plain build only.
c_suites="--no-suite bootstrap --no-suite bootstrap-python --no-suite conformance --no-suite soak"
# shellcheck disable=SC2086 # one word per option
step "C suites (meson test)" meson test -C build --print-errorlogs --num-processes 2 $c_suites
step "bootstrap (meson test --suite bootstrap)" meson test -C build --print-errorlogs --num-processes 2 --suite bootstrap
step "Python bootstrap (meson test --suite bootstrap-python)" meson test -C build --print-errorlogs --num-processes 2 --suite bootstrap-python
step "conformance through dsh (meson test --suite conformance)" meson test -C build --print-errorlogs --num-processes 2 --suite conformance
step "soak: 200 mixed runs through one --serve host (meson test --suite soak)" meson test -C build --print-errorlogs --suite soak
step "install into a prefix, move it, use it alone (tests/install)" ./tests/install/run.sh
step "quick start leaves nothing behind" ./tests/install/quickstart.sh
# In containers: the step prints "container: SKIP what: why" for what this machine cannot run.
containers() {
    ./tests/container/run.sh build >"$skips.container" 2>&1
    rc=$?
    cat "$skips.container"
    sed -n 's/^container: SKIP \(.*\)$/container: tests\/container: \1/p' "$skips.container" >>"$skips"
    rm -f "$skips.container"
    return "$rc"
}
step "dsh in containers: the image, the privilege table, the manifests (tests/container)" containers

# Sanitizers: the C code again, instrumented. Node-heavy suites run only in the plain build.
if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug >/dev/null
fi
step "ASan+UBSan build" meson compile -C build-asan
step "C suites under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2 $c_suites

# Coverage-guided fuzzing, bounded (the corpora already replayed in both builds, suite fuzz).
fuzz_bounded() {
    ./tests/fuzz/run.sh all 30
    rc=$?
    if [ "$rc" -eq 2 ]; then
        echo "fuzz: tests/fuzz: the bounded libFuzzer runs: no clang and libFuzzer here (the corpora replayed)" >>"$skips"
        return 0
    fi
    return "$rc"
}
step "fuzz each target for 30 s (tests/fuzz/run.sh all 30)" fuzz_bounded

echo "==> skipped cases ($(sort -u "$skips" | wc -l)), each with its reason"
sort -u "$skips" | sed 's/^/    /'
echo "steps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
