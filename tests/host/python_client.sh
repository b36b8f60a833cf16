#!/bin/bash
# The Python --serve client example (examples/clients/) end to end against the real dsh: a binding
# answered by a Python function, a rejected call, streamed output, the value.
DSH=$(realpath "$1")
SRC=$(realpath "$2")
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
STATUS=0
python3 "$SRC/examples/clients/example.py" "$DSH" >"$TMP/out" 2>"$TMP/err" || STATUS=$?
expect_status 0 "example.py"
CHECKS=$((CHECKS + 1))
want='runtime: async-function
output: looking up 3 keys
output: caught: no key missing
ok: True value: [1, 2, 3]'
[ "$(cat "$TMP/out")" = "$want" ] || fail "example.py prints the streamed output, then the value"
echo "$CHECKS checks, $FAILS failed"
[ "$FAILS" -eq 0 ]
