#!/bin/sh
# The quick start's first command runs its program in a fresh workspace and removes it: nothing
# is left in TMPDIR afterwards (also when the program fails).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsh-quickstart-test-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
out=$(TMPDIR="$tmp" "$root/examples/run-example.sh" 2>&1) || { echo "FAIL: run-example.sh: $out" >&2; fails=1; }
printf '%s\n' "$out" | grep -q "write outside the workspace denied: EROFS\|write outside the workspace denied: EACCES" ||
    { echo "FAIL: the quick start program did not run: $out" >&2; fails=1; }
left=$(ls -A "$tmp")
[ -z "$left" ] || { echo "FAIL: the quick start left $left in TMPDIR" >&2; fails=1; }
TMPDIR="$tmp" "$root/examples/run-example.sh" -v --timeout-ms 1 >/dev/null 2>&1
left=$(ls -A "$tmp")
[ -z "$left" ] || { echo "FAIL: a failing quick start left $left in TMPDIR" >&2; fails=1; }
echo "quickstart: $fails failed"
[ "$fails" -eq 0 ]
