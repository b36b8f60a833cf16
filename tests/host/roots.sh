#!/bin/bash
# Roots that would defeat the policy are refused before anything runs, with the exact documented
# message naming the row and field (host-abi/ABI.md, "Roots"); dsh never defaults a writable
# workspace to /, /tmp or $HOME. Controls: the same patches with a project directory run.
DSH=$(realpath "$1")
SRC=$(realpath "$2") # project source root
. "$(dirname "$0")/lib.sh"

TEMP_ROOT=/tmp/dsh-$(id -u)
mkdir -p "$TMP/ws" "$TMP/home"
patch() { # FILE ROW CONFIG-LINES...
    local f=$1 row=$2
    shift 2
    { echo "- id: $row"; echo "  config:"; for l in "$@"; do echo "    $l"; done; } >"$f"
}
expect_err_line() { # EXACT-LINE DESCRIPTION
    CHECKS=$((CHECKS + 1))
    grep -Fxq -- "$1" "$TMP/err" || fail "$2: stderr lacks the line: $1"
}
workspace_refused() { # MODE WORKSPACE-ROOT DESCRIPTION EXACT-MESSAGE-AFTER-THE-ROW
    local f="$TMP/ws-$CHECKS.yaml"
    patch "$f" sandbox-policy "mode: $1" "workspaceRoot: $2"
    run --patch "$f" headless -e 'return 1'
    expect_status 2 "$3 is refused"
    expect_err_line "dsh: row 'sandbox-policy' (dsh-sandbox-policy): $4" "$3 names its field"
}
run_in() { # DIR DSH-ARGS...: run from DIR, keeping its STATUS
    local dir=$1
    shift
    (cd "$dir" && run "$@"; echo "$STATUS" >"$TMP/status")
    STATUS=$(cat "$TMP/status")
}
patch "$TMP/ww.yaml" sandbox-policy "mode: workspace-write"

cd "$TMP/ws" || exit 1
patch "$TMP/slash.yaml" sandbox "extraWritableRoots: [/]"
run --patch "$TMP/ww.yaml" --patch "$TMP/slash.yaml" headless -e 'return 1'
expect_status 2 "extraWritableRoots: [/] is refused"
expect_err_line "dsh: row 'sandbox' (dsh-sandbox-linux): extraWritableRoots[0] \"/\" is refused: it is the filesystem root" \
    "extraWritableRoots: [/] names its field"

workspace_refused read-only /tmp "workspaceRoot: /tmp (even read-only)" \
    "workspaceRoot \"/tmp\" is refused: it contains the temp root $TEMP_ROOT, where runs keep their private files"
workspace_refused read-only / "workspaceRoot: /" \
    "workspaceRoot \"/\" is refused: it is the filesystem root"
ln -s / "$TMP/to-root"
workspace_refused read-only "$TMP/to-root/tmp/.." "a workspace given through a symlink to /" \
    "workspaceRoot \"$TMP/to-root/tmp/..\" (resolves to /) is refused: it is the filesystem root"
workspace_refused workspace-write /etc "a writable /etc" \
    "workspaceRoot \"/etc\" is refused: /etc is a system directory, never writable"

# The source tree holds the bootstrap and the pinned Node the runs execute.
patch "$TMP/src.yaml" sandbox "extraWritableRoots: ['$SRC']"
run --patch "$TMP/ww.yaml" --patch "$TMP/src.yaml" headless -e 'return 1'
expect_status 2 "a writable root holding the bootstrap is refused"
expect_err "^dsh: row 'sandbox' \(dsh-sandbox-linux\): extraWritableRoots\[0\] \"$SRC\" is refused: a writable root may not contain $SRC/.*, which runs read and execute$" \
    "the bootstrap case names the field and the protected directory"

# The workspace taken from the current directory.
fix="start dsh in a project directory or name one with --workspace DIR (the workspaceRoot of the dsh-sandbox-policy row)"
run_in / --patch "$TMP/ww.yaml" headless -e 'return 1'
expect_status 2 "dsh started in / refuses to run"
expect_err_line "dsh: the workspace defaults to the current directory: workspaceRoot \"/\" is refused: it is the filesystem root; $fix" \
    "started in /: the message names the fix"
run_in /tmp headless -e 'return 1'
expect_status 2 "dsh started in /tmp refuses to run, even read-only"
expect_err_line "dsh: the workspace defaults to the current directory: workspaceRoot \"/tmp\" is refused: it contains the temp root $TEMP_ROOT, where runs keep their private files; $fix" \
    "started in /tmp: the message names the fix"
HOME="$TMP/home" run_in "$TMP/home" --patch "$TMP/ww.yaml" headless -e 'return 1'
expect_status 2 "dsh started in \$HOME refuses a writable policy"
expect_err_line "dsh: the workspace defaults to the current directory: workspaceRoot \"$TMP/home\" is refused: it is \$HOME, and a writable policy never defaults to it; $fix" \
    "started in \$HOME: the message names the fix"

# Controls: $HOME read-only, an explicit workspaceRoot from /tmp, a project directory writable.
HOME="$TMP/home" run_in "$TMP/home" headless -e 'return 1'
expect_status 0 "read-only in \$HOME runs"
patch "$TMP/ws-explicit.yaml" sandbox-policy "mode: workspace-write" "workspaceRoot: $TMP/ws"
run_in /tmp --patch "$TMP/ws-explicit.yaml" headless -e "const fs = await import('node:fs'); fs.writeFileSync('made.txt', 'ok'); return 1"
expect_status 0 "an explicit workspaceRoot runs from /tmp"
CHECKS=$((CHECKS + 1))
[ "$(cat "$TMP/ws/made.txt" 2>/dev/null)" = ok ] || fail "the run wrote its workspace"
run --patch "$TMP/ww.yaml" headless -e 'return 2'
expect_status 0 "workspace-write in a project directory runs"
expect_out '^2$' "and returns"

# --sandbox MODE and --workspace DIR: shorthands for the policy row, judged as the row is.
run_in / --sandbox workspace-write --workspace / headless -e 'return 1'
expect_status 2 "--workspace / is refused"
expect_err_exact "dsh: row 'sandbox-policy' (dsh-sandbox-policy): workspaceRoot \"/\" is refused: it is the filesystem root" \
    "--workspace / names the row's field"
run --sandbox workspace-write --workspace /etc headless -e 'return 1'
expect_status 2 "a writable --workspace /etc is refused"
expect_err_exact "dsh: row 'sandbox-policy' (dsh-sandbox-policy): workspaceRoot \"/etc\" is refused: /etc is a system directory, never writable" \
    "--workspace /etc names the row's field"
run --workspace "$TMP/missing" headless -e 'return 1'
expect_status 2 "a --workspace that does not exist"
expect_err_exact "dsh: row 'sandbox-policy' (dsh-sandbox-policy): workspaceRoot must be an existing absolute directory: $TMP/missing" \
    "a missing --workspace names the row's field"
run --sandbox full-access headless -e 'return 1'
expect_status 2 "an unknown --sandbox mode"
expect_err_exact "dsh --sandbox: row 'sandbox-policy' (dsh-sandbox-policy): mode: string \"full-access\" is not one of read-only, workspace-write, danger-full-access" \
    "an unknown --sandbox mode is judged by the row's catalog entry"
printf -- '- id: sandbox-policy\n  disabled: true\n' >"$TMP/no-policy.yaml"
run --patch "$TMP/no-policy.yaml" --sandbox read-only headless -e 'return 1'
expect_status 2 "--sandbox without a policy row"
expect_err_exact "dsh: --sandbox needs an enabled dsh-sandbox-policy row in the composition" \
    "--sandbox without a policy row says so"
run doctor --workspace "$TMP/ws"
expect_status 2 "doctor takes no --workspace"
expect_err_exact "dsh doctor: unknown option --workspace (see 'dsh doctor --help')" "doctor --workspace"
# Controls: started in / (as an MCP client may start it), the shorthands give a writable
# workspace; a relative --workspace is taken from the current directory; the row's other keys stay.
rm -f "$TMP/ws/made.txt"
run_in / --sandbox workspace-write --workspace "$TMP/ws" headless \
    -e "const fs = await import('node:fs'); fs.writeFileSync('made.txt', 'shorthand'); return process.cwd()"
expect_status 0 "--sandbox and --workspace run from /"
expect_out "^\"$TMP/ws\"\$" "the run's cwd is the --workspace"
CHECKS=$((CHECKS + 1))
[ "$(cat "$TMP/ws/made.txt" 2>/dev/null)" = shorthand ] || fail "the run wrote its --workspace"
patch "$TMP/both.yaml" sandbox-policy "mode: danger-full-access" "workspaceRoot: /nonexistent"
run_in "$TMP" --patch "$TMP/both.yaml" --workspace ws --dump-config
expect_status 0 "--workspace composes"
expect_out "^    workspaceRoot: \"$TMP/ws\"\$" "a relative --workspace is resolved"
expect_out '^    mode: danger-full-access$' "the row's mode stays"
run_in "$TMP" --patch "$TMP/both.yaml" --sandbox workspace-write --dump-config
expect_out '^    mode: "workspace-write"$' "--sandbox sets mode"
expect_out '^    workspaceRoot: /nonexistent$' "the row's workspaceRoot stays"

# The README's mcpServers example, as a client runs it: started in /, with the example's args
# (its workspace replaced by a scratch one), one run_code call writes the workspace.
readme_args=$(python3 - "$SRC/README.md" "$TMP/ws" <<'PY'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
block = next(b for b in re.findall(r"```json\n(.*?)```", text, re.S) if '"mcpServers"' in b)
args = json.loads(block)["mcpServers"]["dsh"]["args"]
print("\n".join(sys.argv[2] if a == "/home/me/project" else a for a in args))
PY
)
mapfile -t args <<<"$readme_args"
CHECKS=$((CHECKS + 1))
[ "${args[*]}" = "--sandbox workspace-write --workspace $TMP/ws mcp" ] || fail "the README's mcpServers args: [${args[*]}]"
rm -f "$TMP/ws/made.txt"
cd / || exit 1
coproc MCP { "$DSH" "${args[@]}" 2>"$TMP/mcp-err"; }
# Kept now: bash unsets MCP and MCP_PID when the server exits.
mcp_pid=$MCP_PID
mcp_in=${MCP[1]}
mcp_out=${MCP[0]}
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"roots.sh","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"program":"const fs = await import(\"node:fs\"); fs.writeFileSync(\"made.txt\", \"mcp\")","description":"write the workspace"}}}' \
    >&"$mcp_in" 2>/dev/null
answer=
while IFS= read -r line <&"$mcp_out"; do
    case $line in *'"id":2,'*) answer=$line; break ;; esac
done
exec {mcp_in}>&- {mcp_out}<&-
wait "$mcp_pid" 2>/dev/null
cd "$TMP/ws" || exit 1
CHECKS=$((CHECKS + 1))
case $answer in *'"isError":false'*) ;; *) fail "the README's mcpServers example from /: run_code answered [$answer] ($(cat "$TMP/mcp-err"))" ;; esac
CHECKS=$((CHECKS + 1))
[ "$(cat "$TMP/ws/made.txt" 2>/dev/null)" = mcp ] || fail "the README's mcpServers example wrote its workspace"

echo "roots: $CHECKS checks, $FAILS failed"
[ "$FAILS" -eq 0 ]
