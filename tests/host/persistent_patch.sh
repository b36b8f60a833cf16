#!/bin/bash
# `dsh config persistent-patch`: the patch that retains execution state (resolvePersistentExecution)
# for the composed ptc-runtime row's format or --format, keeping the row's other fields; the
# printed patch composes into a valid profile.
DSH=$(realpath "$1")
. "$(dirname "$0")/lib.sh"

run config persistent-patch
expect_status 0 "default row (per-call) prints a patch"
expect_out "^- id: ptc-runtime$" "the patch names the row"
expect_out "^    executionMode: persistent-in-memory$" "function bodies switch to persistent-in-memory"
expect_out "^    scriptPersistence: false$" "scriptPersistence is written"
expect_out "^    replScoped: true$" "with the scoped REPL"

run config persistent-patch --format vm-script
expect_status 0 "--format vm-script"
expect_out "^    executionMode: vm-script$" "Script keeps its syntax"
expect_out "^    scriptPersistence: true$" "with scriptPersistence"
expect_out "^    replScoped: false$" "and replScoped false"

run config persistent-patch --format repl
expect_out "^    replScoped: true$" "REPL statements switch to the scoped REPL"

printf -- '- id: ptc-runtime\n  config:\n    executionMode: persistent-in-memory\n    replScoped: false\n    timeoutMs: 5000\n' >"$TMP/row.yaml"
run --patch "$TMP/row.yaml" config persistent-patch
expect_status 0 "a Node REPL row"
expect_out "^    replScoped: true$" "the Node REPL row switches to the scoped REPL"
expect_out "^    timeoutMs: 5000$" "other fields of the row are kept"
cp "$TMP/out" "$TMP/patch.yaml"
run --patch "$TMP/row.yaml" --patch "$TMP/patch.yaml" config validate
expect_status 0 "the printed patch composes into a valid profile"

run config persistent-patch --format cobol
expect_status 2 "an unknown format is a usage error"
expect_err "unknown program format" "and says so"

run config validate --format vm-script
expect_status 2 "--format belongs to persistent-patch only"

finish
