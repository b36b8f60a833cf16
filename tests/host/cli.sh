#!/bin/bash
# The command line a person expects: --version, each command's own --help, one-line usage errors
# (asserted exactly) and `dsh doctor`.
# Usage: cli.sh DSH VERSION MANPAGE
DSH=$1
VERSION=$2
MANPAGE=$3
. "$(dirname "$0")/lib.sh"

expect_no_err_line() { # REGEX DESCRIPTION
    CHECKS=$((CHECKS + 1))
    ! grep -Eq -- "$1" "$TMP/out" || fail "$2: help has /$1/"
}

run --version
expect_status 0 "--version"
expect_out "^dsh $VERSION \(host ABI 1\.8\)$" "--version names the project and ABI versions"

run --help
expect_status 0 "--help"
expect_out "^  doctor " "global help lists doctor"

run headless --help
expect_status 0 "headless --help"
expect_out "^  --timeout-ms N\|null " "headless help has its options"
expect_out "^--serve: one JSON request per line" "headless help summarizes --serve"
expect_out "Requests: run \{id, program" "headless help lists the requests"
expect_no_err_line "--format|--args" "headless help has no other command's options"

run config validate --help
expect_status 0 "config validate --help"
expect_out "^usage: dsh config validate " "config validate help"
expect_no_err_line "--timeout-ms|persistent-patch|--args" "config validate help has only its options"

run workflow run --help
expect_status 0 "workflow run --help"
expect_out "^  --args JSON " "workflow help has its options"
expect_no_err_line "--timeout-ms|--format" "workflow help has only its options"

run doctor --help
expect_status 0 "doctor --help"
expect_out "^usage: dsh doctor " "doctor help"

run --help
expect_out "^  mcp " "global help lists mcp"
run mcp --help
expect_status 0 "mcp --help"
expect_out "^usage: dsh mcp " "mcp help"
expect_out "^  --patch FILE " "mcp help has the composition options"
expect_no_err_line "--timeout-ms|--format|--serve" "mcp help has only its options"

# The manual page renders without a groff warning and covers every command of the global help.
CHECKS=$((CHECKS + 1))
warnings=$(groff -man -Tutf8 -ww -z "$MANPAGE" 2>&1)
[ -z "$warnings" ] || fail "dsh.1 has groff warnings: $warnings"
for command in headless 'workflow run' 'config validate' 'config persistent\\-patch' doctor mcp; do
    CHECKS=$((CHECKS + 1))
    grep -q "^\.B dsh $command" "$MANPAGE" || fail "dsh.1 lacks the synopsis of $command"
done
# Each rendered synopsis line is one command line (no example run into it).
synopsis=$(groff -man -Tutf8 -rLL=200n -P-cbou "$MANPAGE" 2>/dev/null | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed 's/^ *//')
CHECKS=$((CHECKS + 1))
doctor_line=$(printf '%s\n' "$synopsis" | grep '^dsh doctor')
[ "$doctor_line" = "dsh doctor [options]" ] || fail "dsh.1 synopsis of doctor is [$doctor_line]"
CHECKS=$((CHECKS + 1))
[ "$(printf '%s\n' "$synopsis" | grep -c 'dsh .*dsh ')" -eq 0 ] || fail "a dsh.1 synopsis line holds two commands: $synopsis"

# Usage errors: one line naming the problem and the command's --help.
run headless -e 'return 1' extra-arg
expect_status 2 "an extra argument"
expect_err_exact "dsh headless: unexpected argument 'extra-arg' (see 'dsh headless --help')" "extra argument"
run headless --bogus
expect_err_exact "dsh headless: unknown option --bogus (see 'dsh headless --help')" "unknown option"
run headless -e
expect_err_exact "dsh headless: option -e needs an argument (see 'dsh headless --help')" "missing argument"
run headless --json
expect_err_exact "dsh headless: --json, --cwd, --timeout-ms, --state-owner, --session, --image and --discard-completion need --program or -e (see 'dsh headless --help')" "program option without a program"
run frobnicate
expect_err_exact "dsh: unknown command 'frobnicate' (see 'dsh --help')" "unknown command"
run
expect_status 2 "no command"
expect_err_exact "dsh: expected a command (see 'dsh --help')" "no command"
run config validate a b
expect_err_exact "dsh config validate: unexpected argument 'b' (see 'dsh config validate --help')" "config extra argument"
run config validate --timeout-ms 5
expect_err_exact "dsh config validate: unknown option --timeout-ms (see 'dsh config validate --help')" "another command's option"
run config frob
expect_err_exact "dsh config: unknown subcommand 'frob' (see 'dsh config --help')" "config subcommand"
run doctor --json
expect_err_exact "dsh doctor: unknown option --json (see 'dsh doctor --help')" "doctor option"
run mcp --serve
expect_status 2 "mcp with a headless option"
expect_err_exact "dsh mcp: takes no program options (run_code calls carry them) (see 'dsh mcp --help')" "mcp option"
run mcp extra
expect_err_exact "dsh mcp: unexpected argument 'extra' (see 'dsh mcp --help')" "mcp extra argument"
run workflow run
expect_err_exact "dsh workflow run: missing SCRIPT.js (see 'dsh workflow run --help')" "workflow without a script"
run workflow run a.js b.js
expect_err_exact "dsh workflow run: unexpected argument 'b.js' (see 'dsh workflow run --help')" "workflow extra argument"

# dsh doctor: workspace-write is fully enforced on this machine (exit 0); capped at Landlock ABI 2
# it is partial (exit 1); with requireFullEnforcement as well it cannot run at all.
cd "$TMP"
run doctor
expect_status 0 "doctor on this machine"
expect_out "^workspace-write: full$" "doctor: workspace-write full"
expect_out "^landlock: ABI [1-9]$" "doctor: the Landlock ABI"
expect_out "^pid namespaces: available$" "doctor: PID namespaces"
expect_out "^node: /.*/bin/node v2[2-9]\.[0-9.]+ \(runs confined\)$" "doctor: the Node the provider runs"
expect_out "^bootstrap: /.*/bootstrap/child\.cjs$" "doctor: the bootstrap"
expect_no_out '^[a-zA-Z]+ (partial|none): ' "doctor: no reason line when every capability is full"

# As a user that is not root, identity (and without writable cgroups, resources) is partial:
# each partial capability gets a reason line, without -v.
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: doctor as a user that is not root: needs root and setpriv to become nobody"
else
    nobody_dir=$(mktemp -d)
    chmod 755 "$nobody_dir"
    STATUS=0
    (cd "$nobody_dir" && setpriv --reuid=65534 --regid=65534 --clear-groups "$DSH" doctor) \
        >"$TMP/out" 2>"$TMP/err" </dev/null || STATUS=$?
    rmdir "$nobody_dir"
    expect_status 1 "doctor as nobody: workspace-write is partial"
    expect_out "^workspace-write: partial \(identity: partial(, resources: partial)?\)$" "doctor as nobody: the partial capabilities"
    expect_out "^identity partial: dsh is not root, so programs run as its own uid \(without capabilities\) and share its per-uid kernel counts; a dedicated uid and gid need a root host$" \
        "doctor as nobody: why identity is partial"
    for cap in $(sed -n 's/^workspace-write: partial (\(.*\))$/\1/p' "$TMP/out" | tr -d , | sed 's/: partial//g'); do
        CHECKS=$((CHECKS + 1))
        [ "$(grep -c "^$cap partial: ." "$TMP/out")" -eq 1 ] || fail "doctor as nobody: one reason line for $cap"
    done
    if grep -q "resources: partial" "$TMP/out"; then
        expect_out "^resources partial: (no [a-z]+ cgroup \([a-zA-Z]+\)(, )?)+: dsh may write no such cgroup as this user \(README, \"Kernel requirements\"\)$" \
            "doctor as nobody: why resources are partial"
    fi
fi
printf -- '- id: sandbox\n  config: {maxLandlockAbi: 2}\n' >"$TMP/abi2.yaml"
run doctor --patch "$TMP/abi2.yaml"
expect_status 1 "doctor with Landlock ABI 2"
expect_out "^workspace-write: partial \(files: partial, network: partial, ipc: partial, signals: partial, ioctl: partial\)$" "doctor names the partial capabilities"
# ... and says why, one line each, without -v.
grep -E '^[a-zA-Z]+ (partial|none): ' "$TMP/out" >"$TMP/reasons"
CHECKS=$((CHECKS + 1))
[ "$(cat "$TMP/reasons")" = "files partial: Landlock ABI < 3 does not control truncate
network partial: Landlock ABI 2 < 4
ipc partial: Landlock ABI 2 < 6
signals partial: Landlock ABI 2 < 6
ioctl partial: Landlock ABI 2 < 5" ] || fail "doctor's reasons at Landlock ABI 2: [$(cat "$TMP/reasons")]"
printf -- '- id: sandbox\n  config: {maxLandlockAbi: 2, requireFullEnforcement: true}\n' >"$TMP/strict.yaml"
run doctor --patch "$TMP/strict.yaml"
expect_status 1 "doctor with requireFullEnforcement"
expect_out "^workspace-write: unavailable \(sandbox-unavailable\)$" "doctor: strict mode cannot run"
expect_err "^dsh: \[error\] sandbox unavailable for workspace-write: full enforcement is required, but this machine enforces files: partial, network: partial, ipc: partial, signals: partial, ioctl: partial$" "the logger names why"

finish
