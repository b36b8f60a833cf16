#!/bin/bash
# `dsh config validate`: every invalid config case exits non-zero and names the field with
# FILE:line:column; the default composition and the shipped profiles are valid.
DSH=$(realpath "$1")
SRC=$2 # project source root
. "$(dirname "$0")/lib.sh"
# Validation judges the workspace as startup does: by default the current directory.
mkdir -p "$TMP/ws"
cd "$TMP/ws" || exit 1

run config validate
expect_status 0 "default composition is valid"
run config validate "$SRC/examples/profiles/default.yaml"
expect_status 0 "default.yaml is valid"
for p in "$SRC"/examples/profiles/*.yaml; do
    run config validate "$p"
    expect_status 0 "$(basename "$p") is valid"
    run --patch "$p" config validate
    expect_status 0 "default + $(basename "$p") is valid"
done

# Validation runs the checks startup makes: a composition that headless refuses is not valid,
# and the message is the startup's. refused FILE-TEXT STARTUP-MESSAGE DESCRIPTION
refused() {
    printf -- "$1" >"$TMP/refused.yaml"
    run config validate "$TMP/refused.yaml"
    expect_status 1 "config validate FILE: $3"
    expect_err_exact "$2
dsh: $TMP/refused.yaml is refused: dsh would not start with it" "config validate FILE: $3 (message)"
    run --patch "$TMP/refused.yaml" config validate
    expect_status 1 "config validate: $3"
    expect_err_exact "$2
dsh: the composition is refused: dsh would not start with it" "config validate: $3 (message)"
    run --patch "$TMP/refused.yaml" headless -e 'return 1'
    expect_status 2 "headless refuses it too: $3"
    expect_err_exact "$2" "headless: $3 (message)"
}
refused '- id: sandbox-policy\n  config: {mode: read-only, workspaceRoot: /}\n' \
    "dsh: row 'sandbox-policy' (dsh-sandbox-policy): workspaceRoot \"/\" is refused: it is the filesystem root" \
    "workspaceRoot /"
refused '- id: sandbox-policy\n  config: {mode: workspace-write, workspaceRoot: /etc}\n' \
    "dsh: row 'sandbox-policy' (dsh-sandbox-policy): workspaceRoot \"/etc\" is refused: /etc is a system directory, never writable" \
    "a writable /etc"
refused "- id: sandbox-policy\n  config: {workspaceRoot: $TMP/missing}\n" \
    "dsh: row 'sandbox-policy' (dsh-sandbox-policy): workspaceRoot must be an existing absolute directory: $TMP/missing" \
    "a missing workspace"
refused '- id: sandbox\n  config: {extraWritableRoots: [/usr]}\n' \
    "dsh: row 'sandbox' (dsh-sandbox-linux): extraWritableRoots[0] \"/usr\" is refused: /usr is a system directory, never writable" \
    "a writable /usr"
refused '- id: ptc-runtime\n  disabled: true\n' "dsh: the composition has no enabled provider row" \
    "no enabled provider row"
refused '- id: sandbox\n  disabled: true\n' \
    "dsh: row 'ptc-runtime': @deepseek-ai/dsh-ptc-runtime-node cannot load (config-invalid): the runtime requires the fs, subprocess, sandbox and sandboxPolicy services (ABI v1)" \
    "a disabled service row the provider needs"
# Control: the same patch shape with a workspace startup accepts.
printf -- "- id: sandbox-policy\n  config: {mode: workspace-write, workspaceRoot: $TMP/ws}\n" >"$TMP/accepted.yaml"
run config validate "$TMP/accepted.yaml"
expect_status 0 "a writable project workspace is valid (control)"
expect_out "^$TMP/accepted.yaml: valid\$" "control says valid"

# case ROW FIELD YAML-CONFIG-LINES...: a patch of row ROW whose config is the given lines; FIELD
# is the diagnostic's field path and the first line mentioning its last component is expected.
n=0
case_() {
    local row=$1 field=$2
    shift 2
    n=$((n + 1))
    local f="$TMP/case$n.yaml"
    { echo "# case $n"; echo "- id: $row"; echo "  config:"; for l in "$@"; do echo "    $l"; done; } >"$f"
    run config validate "$f"
    expect_status 1 "case $n ($row $field) exits 1"
    local key=${field##*.}
    key=${key%%\[*}
    local line
    line=$(line_of "$f" "$key")
    # A missing field is reported at its mapping: any line of this file then.
    [ -n "$line" ] || line='[0-9]+'
    expect_err "^$f:$line:[0-9]+: row '$row' .*$field" "case $n names $field at line $line"
}

R=ptc-runtime
case_ $R executionMode "executionMode: bogus"
case_ $R executionMode "executionMode: 3"
case_ $R scriptPersistence "scriptPersistence: true"
case_ $R scriptPersistence "executionMode: vm-script" "scriptPersistence: maybe"
case_ $R replScoped "executionMode: per-call" "replScoped: true"
case_ $R timeoutMs "timeoutMs: 0"
case_ $R timeoutMs "timeoutMs: soon"
case_ $R timeoutMs "timeoutMs: '5000'"
case_ $R timeoutMs "timeoutMs: 700000"
case_ $R maxTimeoutMs "maxTimeoutMs: -1"
case_ $R maxOutputBytes "maxOutputBytes: 1"
case_ $R maxOldGenerationSizeMb "maxOldGenerationSizeMb: 0"
case_ $R maxMessageBytes "maxMessageBytes: 99999999999"
case_ $R maxPendingCalls "maxPendingCalls: 1.5"
case_ $R stopGraceMs "stopGraceMs: 0"
case_ $R graceMs "graceMs: []"
case_ $R unknownField "unknownField: 1"
case_ $R launch "launch: node"
case_ $R launch.kind "launch:" "  kind: wasm" "  executable: /usr/bin/node"
case_ $R launch.executable "launch:" "  kind: embedded"
case_ $R launch.bootstrapPath "launch:" "  kind: embedded" "  executable: /x" "  bootstrapPath: /b.js"
case_ $R launch.bootstrapPath "launch:" "  kind: node-script" "  executable: node" "  bootstrapPath: rel.js"
case_ sandbox maxLandlockAbi "maxLandlockAbi: 9"
case_ sandbox extraWritableRoots "extraWritableRoots: [relative/dir]"
case_ sandbox extraWritableRoots "extraWritableRoots: /tmp"
case_ sandbox confineDelay "confineDelay: 5"
case_ sandbox confineDelayMs "confineDelayMs: -1"
case_ sandbox-policy mode "mode: everything"
case_ sandbox-policy workspaceRoot "workspaceRoot: not/absolute"
case_ demo-tools verbose "verbose: true"
case_ fs root "root: /"

# A config that is not a mapping.
printf -- '- id: ptc-runtime\n  config: [1, 2]\n' >"$TMP/list.yaml"
run config validate "$TMP/list.yaml"
expect_status 1 "config must be a mapping"
expect_err "list.yaml:2:[0-9]+: .*config" "non-mapping config names config"

# A row of an unknown provider, inserted, names `name`.
printf -- '- insert:\n  - id: x\n    name: no-such-provider\n' >"$TMP/unknown.yaml"
run config validate "$TMP/unknown.yaml"
expect_status 1 "unknown provider"
expect_err "unknown.yaml:2:[0-9]+: row 'x': name: unknown provider 'no-such-provider'" "unknown provider named"

# A patch row whose id the composition lacks cannot be checked.
printf -- '- id: ghost\n  config: {}\n' >"$TMP/ghost.yaml"
run config validate "$TMP/ghost.yaml"
expect_status 1 "patch of an unknown row"
expect_err "ghost.yaml:1:[0-9]+: name: row 'ghost'" "unknown row named"

# Several errors in one file are all reported.
printf -- '- id: ptc-runtime\n  config:\n    timeoutMs: 0\n    graceMs: x\n' >"$TMP/two.yaml"
run config validate "$TMP/two.yaml"
expect_status 1 "two errors"
expect_err "two.yaml:3:[0-9]+: .*timeoutMs" "first error"
expect_err "two.yaml:4:[0-9]+: .*graceMs" "second error"

# Without FILE the composition is validated, with positions in the patch that set the config.
run --patch "$TMP/two.yaml" config validate
expect_status 1 "invalid composition"
expect_err "two.yaml:3:[0-9]+: .*timeoutMs" "composition error points into the patch"

# headless refuses an invalid composition as a configuration error (exit 2) before loading.
run headless --patch "$TMP/two.yaml" -e "return 1"
expect_status 2 "headless with invalid rows"
expect_err "two.yaml:3:[0-9]+: .*timeoutMs" "headless names the field"

# dsh-mcp-bindings: a list of server objects, each checked field by field.
cat >"$TMP/mcp.yaml" <<'YAML'
- insert:
  - id: mcp
    name: dsh-mcp-bindings
    config:
      servers:
        - {name: gh, command: /usr/bin/gh-mcp, args: [serve], env: ["TOKEN=x"]}
        - {name: x, comand: y}
        - 5
        - {name: "", command: z, args: [1, [2]]}
YAML
run --patch "$TMP/mcp.yaml" config validate
expect_status 1 "invalid downstream servers"
expect_err "mcp.yaml:7:[0-9]+: row 'mcp' \(dsh-mcp-bindings\): servers\[1\]\.comand: unknown field" "unknown server field"
expect_err "mcp.yaml:7:[0-9]+: .*servers\[1\]\.command: required field missing" "server without command"
expect_err "mcp.yaml:8:[0-9]+: .*servers\[2\]: expected a mapping, got integer 5" "a server is a mapping"
expect_err "mcp.yaml:9:[0-9]+: .*servers\[3\]\.name: must not be empty" "empty server name"
expect_err "mcp.yaml:9:[0-9]+: .*servers\[3\]\.args\[0\]: expected a string, got integer 1" "args are strings"
expect_err "mcp.yaml:9:[0-9]+: .*servers\[3\]\.args\[1\]: expected a string, got a sequence" "args are strings, not lists"
CHECKS=$((CHECKS + 1))
[ "$(grep -c "row 'mcp'" "$TMP/err")" -eq 6 ] || fail "exactly the six problems, the valid server passes"

# One validator for `config validate FILE` and `headless --patch FILE`: each file below is refused
# by both, with the same diagnostic (strict YAML: duplicate keys, a second document, tags outside
# the core schema, an explicit !!str on an integer field; row fields of the wrong kind).
same_verdict() { # NAME EXPECTED-DIAGNOSTIC-REGEX YAML-LINES...
    local name=$1 want=$2
    shift 2
    local f="$TMP/strict-$name.yaml"
    printf '%s\n' "$@" >"$f"
    run config validate "$f"
    expect_status 1 "config validate refuses $name"
    expect_err "^$f:$want" "config validate: $name diagnostic"
    run headless --patch "$f" -e "return 1"
    expect_status 2 "headless refuses $name"
    expect_err "^$f:$want" "headless: $name diagnostic"
}
same_verdict duplicate-config-key "2:29: row 'ptc-runtime' .*: timeoutMs: duplicate key \\(first given at line 2:12\\)$" \
    '- id: ptc-runtime' '  config: {timeoutMs: 1000, timeoutMs: 2000}'
same_verdict duplicate-row-key "3:3: duplicate row key 'config' \\(first given at line 2:3\\)$" \
    '- id: ptc-runtime' '  config: {timeoutMs: 1000}' '  config: {timeoutMs: 2000}'
same_verdict second-document "4:1: YAML error: expected a single YAML document$" \
    '- id: ptc-runtime' '  config: {timeoutMs: 1000}' '---' '- id: ptc-runtime' '  config: {timeoutMs: 5}'
same_verdict custom-tag "2:11: YAML error: unsupported tag !custom \\(only the YAML core tags" \
    '- id: ptc-runtime' '  config: !custom {timeoutMs: 1000}'
same_verdict custom-scalar-tag "1:7: YAML error: unsupported tag !name" '- id: !name ptc-runtime'
same_verdict explicit-str "2:23: row 'ptc-runtime' .*: timeoutMs: expected a positive integer in plain decimal digits, got string \"5000\"$" \
    '- id: ptc-runtime' '  config: {timeoutMs: !!str 5000}'
same_verdict disabled-maybe "2:13: disabled must be true or false$" '- id: ptc-runtime' '  disabled: "maybe"'
same_verdict relative-path "2:9: path must be absolute, got 'relative.so'$" '- id: ptc-runtime' '  path: relative.so'
# Controls: the same rows, well-formed, pass both.
printf '%s\n' '- id: ptc-runtime' '  disabled: false' '  config: {timeoutMs: !!int 5000, executionMode: !!str per-call}' >"$TMP/strict-ok.yaml"
run config validate "$TMP/strict-ok.yaml"
expect_status 0 "config validate accepts the control"
run headless --patch "$TMP/strict-ok.yaml" -e "return 1"
expect_status 0 "headless accepts the control"

# Usage errors.
run config
expect_status 2 "config without subcommand"
run config check x
expect_status 2 "unknown config subcommand"

finish
