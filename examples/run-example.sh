#!/bin/sh
# Quick start, first command: installs what is missing, builds, and runs
# examples/programs/quickstart.ts under workspace-write in a fresh temporary workspace.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/examples/setup.sh"
# mktemp replaces the trailing Xs with a unique suffix
workspace=$(mktemp -d "${TMPDIR:-/tmp}/dsh-quickstart-XXXXXX")
echo "workspace: $workspace"
cd "$workspace"
"$root/build/examples/host/dsh" headless --patch "$root/examples/profiles/workspace-write.yaml" \
    --program "$root/examples/programs/quickstart.ts" "$@"
