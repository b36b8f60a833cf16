# Counted checks for the shell test scripts that are not meson cases (tests/install/run.sh,
# tests/container/run.sh). Usage: . "$root/tests/checks.sh"; then expect, expect_match, fail;
# $checks and $fails count them.
fails=0
checks=0
fail() {
    fails=$((fails + 1))
    echo "FAIL: $*" >&2
}
# expect DESCRIPTION EXPECTED ACTUAL: exact comparison
expect() {
    checks=$((checks + 1))
    [ "$2" = "$3" ] || fail "$1: got [$3], want [$2]"
}
# expect_match DESCRIPTION PATTERN TEXT (grep -E)
expect_match() {
    checks=$((checks + 1))
    printf '%s\n' "$3" | grep -Eq -- "$2" || fail "$1: [$3] lacks /$2/"
}
