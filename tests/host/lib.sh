# Helpers for the host suite: run the real dsh binary and check status, stdout and stderr.
# Usage in a test: DSH=$1; . "$(dirname "$0")/lib.sh"
set -u
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
CHECKS=0

# run ARGS...: runs dsh, leaves $STATUS, $TMP/out, $TMP/err.
run() {
    STATUS=0
    "$DSH" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || STATUS=$?
}

fail() {
    FAILS=$((FAILS + 1))
    echo "FAIL: $*" >&2
    echo "--- stdout" >&2; cat "$TMP/out" >&2
    echo "--- stderr" >&2; cat "$TMP/err" >&2
}

expect_status() { # WANT DESCRIPTION
    CHECKS=$((CHECKS + 1))
    [ "$STATUS" -eq "$1" ] || fail "$2: exit $STATUS, want $1"
}

expect_out() { # REGEX DESCRIPTION (grep -E on stdout)
    CHECKS=$((CHECKS + 1))
    grep -Eq -- "$1" "$TMP/out" || fail "$2: stdout lacks /$1/"
}

expect_no_out() {
    CHECKS=$((CHECKS + 1))
    ! grep -Eq -- "$1" "$TMP/out" || fail "$2: stdout has /$1/"
}

expect_err() {
    CHECKS=$((CHECKS + 1))
    grep -Eq -- "$1" "$TMP/err" || fail "$2: stderr lacks /$1/"
}

# expect_err_exact TEXT DESCRIPTION: stderr is exactly TEXT.
expect_err_exact() {
    CHECKS=$((CHECKS + 1))
    [ "$(cat "$TMP/err")" = "$1" ] || fail "$2: stderr is not [$1]"
}

# line_of FILE REGEX: 1-based line of the first match.
line_of() { grep -nE -- "$2" "$1" | head -1 | cut -d: -f1; }

finish() {
    echo "$CHECKS checks, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}
