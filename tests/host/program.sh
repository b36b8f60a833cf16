#!/bin/bash
# `dsh headless --program/-e`: output for a person, --json, exit statuses, demo tools, sandbox.
DSH=$(realpath "$1")
SRC=$2
. "$(dirname "$0")/lib.sh"
P=$SRC/examples/programs
PROFILES=$SRC/examples/profiles
# Runs start in a scratch workspace: the default workspaceRoot is dsh's current directory.
mkdir -p "$TMP/ws"
cd "$TMP/ws" || exit 1

run headless --program "$P/hello.ts"
expect_status 0 "hello.ts"
expect_out "^hello from a confined Node process\$" "output text as-is"
expect_out '^\{"node":"v[0-9.]+","sum":3\}$' "value as JSON after the output"

run headless --program "$P/hello.ts" --json
expect_status 0 "--json ok"
CHECKS=$((CHECKS + 1))
[ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "--json prints exactly one line"
expect_out '^\{.*"ok": ?true' "--json prints the result object"
expect_out '"value": ?\{"node"' "--json result carries the value"

run headless --program "$P/failure.ts"
expect_status 1 "program failure exits 1"
expect_out "^about to throw\$" "output before the failure"
expect_err "^error \(exception\): .*something went wrong" "failure on stderr"

run headless --program "$P/failure.ts" --json
expect_status 1 "--json failure exits 1"
expect_out '"ok": ?false' "--json failure result"

run headless --program "$P/tools.ts"
expect_status 0 "demo tools"
expect_out "^echo: \{ text: 'ping' \} sum: 42\$" "echo and add"
expect_out "^caught: expected failure\$" "fail rejects with its message"
expect_out "^42\$" "value"

run headless -e 'return await tools.add({ a: 1.5, b: 2 })'
expect_status 0 "-e CODE"
expect_out "^3.5\$" "add of non-integers"

run headless -e 'return await tools.echo([1, "two", null, { three: 3.25 }])'
expect_out '^\[1,"two",null,\{"three":3.25\}\]$' "echo returns its argument"

start=$(date +%s%N)
run headless -e 'const t = Date.now(); await tools.sleep({ ms: 400 }); return Date.now() - t >= 390'
elapsed=$((($(date +%s%N) - start) / 1000000))
expect_out "^true\$" "sleep resolves after ms"
CHECKS=$((CHECKS + 1))
[ "$elapsed" -ge 400 ] || fail "sleep took ${elapsed} ms"

run headless -e 'await tools.sleep({ ms: 10000 })' --timeout-ms 300
expect_status 1 "timeout is a program failure"
expect_err "^error \(timeout\): " "timeout kind"

run headless --patch "$PROFILES/no-demo-tools.yaml" -e 'return typeof tools'
expect_status 0 "no demo tools"
expect_out '^"undefined"$' "a disabled demo-tools row declares no namespace"

run headless -e 'inspect("no value")' --discard-completion
expect_status 0 "discard completion"
expect_out "^no value\$" "output"

# Sandbox: the default profile is read-only, the workspace-write patch allows the workspace.
run headless --program "$P/write-file.ts"
expect_status 1 "read-only denies writes"
expect_err "^note: the sandbox \(read-only\) denied" "denial noted"
run headless --patch "$PROFILES/workspace-write.yaml" --program "$P/write-file.ts"
expect_status 0 "workspace-write allows writes"
expect_out "^written by a PTC program\$" "file content"

# The sandbox rows reach the services: a Landlock ABI cap, extra writable roots, the workspace.
printf -- '- id: sandbox\n  config:\n    maxLandlockAbi: 1\n' >"$TMP/abi1.yaml"
run headless --patch "$TMP/abi1.yaml" -e 'return 1' --json
expect_status 0 "maxLandlockAbi: 1"
expect_out '"enforcement": ?"partial"' "an old Landlock ABI is reported as partial enforcement"
run headless -e 'return 1' --json
expect_out '"enforcement": ?"full"' "the kernel's ABI gives full enforcement"
mkdir -p "$TMP/extra" "$TMP/root"
write_extra="const fs = await import(\"node:fs/promises\"); await fs.writeFile(\"$TMP/extra/f\", \"x\"); return \"wrote\""
run headless --patch "$PROFILES/workspace-write.yaml" -e "$write_extra"
expect_status 1 "outside the workspace without extraWritableRoots"
printf -- '- id: sandbox\n  config:\n    extraWritableRoots: [%s]\n' "$TMP/extra" >"$TMP/extra.yaml"
run headless --patch "$PROFILES/workspace-write.yaml" --patch "$TMP/extra.yaml" -e "$write_extra"
expect_status 0 "extraWritableRoots are writable in workspace-write"
expect_out '^"wrote"$' "extra root write"
printf -- '- id: sandbox-policy\n  config:\n    mode: read-only\n    workspaceRoot: %s\n' "$TMP/root" >"$TMP/root.yaml"
run headless --patch "$TMP/root.yaml" -e 'return process.cwd()'
expect_out "^\"$TMP/root\"\$" "workspaceRoot is the default cwd"
run headless -e 'return process.cwd()'
expect_out "^\"$TMP/ws\"\$" "without workspaceRoot, dsh's cwd is the workspace"

# confineDelayMs completes confinement later through dsh's loop timers (the services' defer hook).
printf -- '- id: sandbox\n  config:\n    confineDelayMs: 800\n' >"$TMP/delay.yaml"
start=$(date +%s%N)
run headless --patch "$TMP/delay.yaml" -e 'return "late"'
elapsed=$((($(date +%s%N) - start) / 1000000))
expect_status 0 "delayed confinement"
expect_out '^"late"$' "delayed run result"
CHECKS=$((CHECKS + 1))
[ "$elapsed" -ge 800 ] || fail "confineDelayMs 800 took only ${elapsed} ms"
run headless --patch "$TMP/delay.yaml" -e 'return 1' --timeout-ms 200
expect_status 1 "deadline during a delayed confinement"
expect_err "^error \(timeout\): .*before code started" "timeout before the program started"

# --program - reads the program from stdin.
STATUS=0
echo 'return "from stdin"' | "$DSH" headless --program - >"$TMP/out" 2>"$TMP/err" || STATUS=$?
expect_status 0 "--program -"
expect_out '^"from stdin"$' "stdin program"

# Load without a program: describe() of the provider.
run headless
expect_status 0 "headless without a program"
expect_err "loaded @deepseek-ai/dsh-ptc-runtime-node" "names the provider"

# Usage and configuration errors exit 2.
run headless --program "$TMP/missing.ts"
expect_status 2 "missing program file"
run headless --program "$P/hello.ts" -e 'return 1'
expect_status 2 "--program and -e"
run headless --json
expect_status 2 "--json without a program"
run headless --serve --json
expect_status 2 "--serve with program options"
run headless --cwd rel -e 1
expect_status 2 "relative --cwd"
run headless --timeout-ms soon -e 1
expect_status 2 "bad --timeout-ms"
run frobnicate
expect_status 2 "unknown command"
run headless --bogus
expect_status 2 "unknown option"
printf -- '- id: ptc-runtime\n  path: /nonexistent/provider.so\n' >"$TMP/path.yaml"
run headless --patch "$TMP/path.yaml" -e 1
expect_status 2 "provider path that does not load"
expect_err "cannot load provider /nonexistent/provider.so" "names the path"
printf -- '- id: ptc-runtime\n  disabled: true\n' >"$TMP/off.yaml"
run headless --patch "$TMP/off.yaml" -e 1
expect_status 2 "no enabled provider row"

# A cwd that is not a directory is refused before any process starts (caller misuse).
run headless --cwd /nonexistent -e 1
expect_status 2 "missing cwd"
expect_err "request-invalid.*cwd /nonexistent is not an existing directory" "names the cwd"
run headless --cwd /etc/passwd -e 1
expect_status 2 "cwd that is a file"

# What a newcomer meets: each message names the actual problem.
run headless -e 'return 1' --image shot=/nonexistent/shot.png
expect_status 2 "--image file that does not exist"
expect_err_exact "dsh: --image shot: /nonexistent/shot.png does not exist" "missing --image file message"
printf 'return "\xff"\n' >"$TMP/latin1.ts"
run headless --program "$TMP/latin1.ts"
expect_status 2 "a program that is not UTF-8"
expect_err_exact "dsh: $TMP/latin1.ts: the program is not UTF-8 text" "non-UTF-8 program file message"
run headless -e "$(printf 'return "\xc0\xaf"')"
expect_status 2 "an overlong UTF-8 form in -e"
expect_err_exact "dsh: -e: the program is not UTF-8 text" "non-UTF-8 -e message"
run headless -e 'return "é€😀"'
expect_status 0 "UTF-8 text of 2, 3 and 4 bytes (control)"
expect_out '^"é€😀"$' "UTF-8 control value"

finish
