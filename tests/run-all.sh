#!/bin/sh
# The whole test suite, from a clean clone on Debian 12: installs what is missing, builds with
# -Werror, runs every suite (C Criterion suites, bootstrap node tests on the ESM sources and on the
# generated bundle, black-box conformance through the real `dsh`), each once through
# `meson test --suite`, then runs the C suites once more under AddressSanitizer + UBSan.
# Idempotent. Prints "steps: N passed, N failed" last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./examples/setup.sh || exit 1

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

# Sanitizers: the C code again, instrumented. Node-heavy suites run only in the plain build.
if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug >/dev/null
fi
step "ASan+UBSan build" meson compile -C build-asan
step "C suites under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2 $c_suites

echo "steps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
