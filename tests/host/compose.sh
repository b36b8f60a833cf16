#!/bin/bash
# Composition: base profile, patch layers (later wins, config replaced whole), insert, disabled,
# --dump-config with layers, and composition errors (exit 2 with FILE:line:col).
DSH=$(realpath "$1")
. "$(dirname "$0")/lib.sh"

# The shipped default composition.
run --dump-config
expect_status 0 "default --dump-config"
for id in fs subprocess sandbox sandbox-policy demo-tools ptc-runtime; do
    expect_out "^- id: $id\$" "default has row $id"
done
expect_out "name: dsh-sandbox-linux" "sandbox row name"
expect_out "name: '@deepseek-ai/dsh-ptc-runtime-node'" "provider row name"
expect_out "^    mode: read-only\$" "default sandbox mode"
expect_out "^# layer: .*examples/profiles/default.yaml\$" "rows name their layer"

cat >"$TMP/base.yaml" <<'YAML'
- id: a
  name: dsh-fs-local
- id: rt
  name: '@deepseek-ai/dsh-ptc-runtime-node'
  config:
    executionMode: vm-script
    scriptPersistence: true
    timeoutMs: 5000
YAML
cat >"$TMP/p1.yaml" <<'YAML'
- id: rt
  config:
    executionMode: persistent-in-memory
    timeoutMs: 7000
YAML
cat >"$TMP/p2.yaml" <<'YAML'
- id: rt
  config:
    timeoutMs: 9000
- insert:
    - id: extra
      name: dsh-demo-tools
      config: {}
    - id: extra2
      name: dsh-demo-tools
      disabled: true
- id: a
  disabled: true
YAML

run --profile "$TMP/base.yaml" --patch "$TMP/p1.yaml" --dump-config
expect_status 0 "one patch"
expect_out "executionMode: persistent-in-memory" "patch config applied"
expect_no_out "scriptPersistence" "a patch replaces the whole config"
expect_out "# layer: $TMP/p1.yaml \(row defined in $TMP/base.yaml\)" "patched row names both layers"

run --profile "$TMP/base.yaml" --patch "$TMP/p1.yaml" --patch "$TMP/p2.yaml" --dump-config
expect_status 0 "two patches"
expect_out "timeoutMs: 9000" "later patch wins"
expect_no_out "timeoutMs: 7000" "earlier patch config is gone"
expect_no_out "executionMode" "later patch replaces the whole config again"
expect_out "^# composed from: $TMP/base.yaml $TMP/p1.yaml $TMP/p2.yaml\$" "header lists layers"
# Inserted rows come last, in order, and name the inserting layer.
ids=$(grep -E '^- id:' "$TMP/out" | sed 's/^- id: //' | tr '\n' ' ')
CHECKS=$((CHECKS + 1))
[ "$ids" = "a rt extra extra2 " ] || fail "insert appends rows in order (got: $ids)"
expect_out "^# layer: $TMP/p2.yaml\$" "inserted rows name their layer"
# The patch row `a` only flips disabled.
awk '/^- id: a$/{f=1} f&&/disabled:/{print; exit}' "$TMP/out" >"$TMP/a-disabled"
CHECKS=$((CHECKS + 1))
grep -q "disabled: true" "$TMP/a-disabled" || fail "patch sets disabled"

# The dump is itself a profile: composing it again gives the same rows.
run --profile "$TMP/base.yaml" --patch "$TMP/p1.yaml" --patch "$TMP/p2.yaml" --dump-config
grep -v '^#' "$TMP/out" >"$TMP/dumped.yaml"
run --profile "$TMP/dumped.yaml" --dump-config
expect_status 0 "dump re-composes"
CHECKS=$((CHECKS + 1))
diff <(grep -v '^#' "$TMP/out") "$TMP/dumped.yaml" >/dev/null || fail "dump round-trips"

# An empty patch file is refused (often a file not yet written); `[]` changes nothing.
: >"$TMP/empty.yaml"
run --profile "$TMP/base.yaml" --patch "$TMP/empty.yaml" --dump-config
expect_status 2 "empty patch file"
expect_err_exact "dsh: $TMP/empty.yaml: the patch is empty (a patch is a YAML list of rows; \`[]\` changes nothing)" \
    "empty patch message"
printf '[]\n' >"$TMP/nothing.yaml"
run --profile "$TMP/base.yaml" --dump-config
grep -v '^# composed from' "$TMP/out" >"$TMP/unpatched"
run --profile "$TMP/base.yaml" --patch "$TMP/nothing.yaml" --dump-config
expect_status 0 "an empty list patch"
CHECKS=$((CHECKS + 1))
grep -v '^# composed from' "$TMP/out" | cmp -s - "$TMP/unpatched" || fail "an empty list patch changes nothing"

# Composition errors: exit 2 with FILE:line:col.
cat >"$TMP/bad-id.yaml" <<'YAML'
- id: rt
  config: {}
- id: nope
  config: {}
YAML
run --profile "$TMP/base.yaml" --patch "$TMP/bad-id.yaml" --dump-config
expect_status 2 "patch of an unknown id"
expect_err "^$TMP/bad-id.yaml:3:[0-9]+: no row with id 'nope'" "unknown id names file:line:col"

cat >"$TMP/dup.yaml" <<'YAML'
- insert:
  - id: rt
    name: dsh-demo-tools
YAML
run --profile "$TMP/base.yaml" --patch "$TMP/dup.yaml" --dump-config
expect_status 2 "insert of an existing id"
expect_err "^$TMP/dup.yaml:2:[0-9]+: duplicate row id 'rt'" "duplicate id"

cat >"$TMP/badkey.yaml" <<'YAML'
- id: rt
  confg: {}
YAML
run --profile "$TMP/base.yaml" --patch "$TMP/badkey.yaml" --dump-config
expect_status 2 "unknown row key"
expect_err "^$TMP/badkey.yaml:2:3: unknown row key 'confg'" "unknown key position"

cat >"$TMP/noid.yaml" <<'YAML'
- name: dsh-fs-local
YAML
run --profile "$TMP/base.yaml" --patch "$TMP/noid.yaml" --dump-config
expect_status 2 "patch row without id"
expect_err "needs an id" "patch row without id message"

printf -- '- id: rt\n  disabled: maybe\n' >"$TMP/badbool.yaml"
run --profile "$TMP/base.yaml" --patch "$TMP/badbool.yaml" --dump-config
expect_status 2 "disabled must be boolean"
expect_err "badbool.yaml:2:13: disabled must be true or false" "boolean position"

printf -- '- id: rt\n  path: relative/x.so\n' >"$TMP/badpath.yaml"
run --profile "$TMP/base.yaml" --patch "$TMP/badpath.yaml" --dump-config
expect_status 2 "path must be absolute"

printf -- 'id: rt\n' >"$TMP/notlist.yaml"
run --profile "$TMP/base.yaml" --patch "$TMP/notlist.yaml" --dump-config
expect_status 2 "a patch is a list"
expect_err "notlist.yaml:1:1: a profile or patch is a YAML list" "not a list"

printf -- '- id: rt\n  config: [\n' >"$TMP/syntax.yaml"
run --profile "$TMP/base.yaml" --patch "$TMP/syntax.yaml" --dump-config
expect_status 2 "YAML syntax error"
expect_err "syntax.yaml:[0-9]+:[0-9]+: YAML error" "syntax error position"

run --patch "$TMP/missing.yaml" --dump-config
expect_status 2 "missing patch file"
expect_err_exact "dsh: $TMP/missing.yaml: No such file or directory" "missing patch file message"

# headless --dump-config composes without loading anything.
run headless --patch "$TMP/nothing.yaml" --dump-config
expect_status 0 "headless --dump-config"
expect_out "^- id: ptc-runtime\$" "headless dump lists the provider row"

finish
