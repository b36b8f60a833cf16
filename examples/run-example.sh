#!/bin/sh
# Quick start, first command: installs what is missing, builds, and runs
# examples/programs/quickstart.ts under workspace-write in a fresh temporary workspace.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/examples/setup.sh"
# mktemp replaces the trailing Xs with a unique suffix
workspace=$(mktemp -d "${TMPDIR:-/tmp}/dsh-quickstart-XXXXXX")
# The workspace is removed however the run ends: the quick start leaves nothing behind.
trap 'rm -rf "$workspace"' EXIT
trap 'exit 130' INT TERM
echo "workspace: $workspace (removed afterwards)"
cd "$workspace"
status=0
"$root/build/examples/host/dsh" headless --patch "$root/examples/profiles/workspace-write.yaml" \
    --program "$root/examples/programs/quickstart.ts" "$@" || status=$?
echo "files the program left in the workspace: $(ls -A | tr '\n' ' ')"
exit "$status"
