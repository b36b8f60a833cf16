#!/usr/bin/env python3
"""Writes examples/deploy/seccomp.json: a container engine's default seccomp profile plus exactly
the system calls dsh's ranges need, each allowed without condition.

Usage: seccomp-profile.py [--base FILE] [--check] [OUT]
  --base FILE  the engine's default (OCI/Docker JSON); default: containers-common's
               /usr/share/containers/seccomp.json, the profile podman and CRI-O use
  --check      exit 1 when OUT differs from what would be written (tests/container/run.sh)
  OUT          default: seccomp.json beside this script

What dsh needs beyond a plain process (examples/providers: range_spawn.c, kernel_probe.c, the
launcher's mount_layer.c and identity.c). Docker's and containerd's defaults allow these only
with CAP_SYS_ADMIN (and answer clone3 with ENOSYS); containers-common's allow them already, so on
podman the result equals the base.
"""
import json
import os
import sys

NEEDED = {
    "clone": "the identity helper's user namespace (CLONE_NEWUSER)",
    "clone3": "a range: CLONE_PIDFD, CLONE_INTO_CGROUP, CLONE_NEWPID, CLONE_NEWUSER",
    "unshare": "the launcher's mount, network and IPC namespaces",
    "mount": "bind mounts of the roots, the private /proc and tmpfs TMPDIR",
    "umount2": "the staging mount of the program's /etc/passwd entry",
    "mount_setattr": "the read-only, nosuid and nodev mount layer; idmapped mounts",
    "open_tree": "idmapped mounts of the writable roots",
    "move_mount": "idmapped mounts of the writable roots",
}


def unconditional_allow(rule):
    return (rule.get("action") == "SCMP_ACT_ALLOW" and not rule.get("args")
            and not rule.get("includes") and not rule.get("excludes"))


def build(base):
    profile = json.loads(json.dumps(base))  # a deep copy
    rules = []
    for rule in profile["syscalls"]:
        if unconditional_allow(rule):
            rules.append(rule)
            continue
        # A conditional rule (a capability, an argument, an errno) never applies to a needed call.
        names = [n for n in rule["names"] if n not in NEEDED]
        if names:
            rule["names"] = names
            rules.append(rule)
    allowed = {n for r in rules if unconditional_allow(r) for n in r["names"]}
    missing = sorted(n for n in NEEDED if n not in allowed)
    if missing:
        rules.append({"names": missing, "action": "SCMP_ACT_ALLOW", "comment": "dsh ranges (examples/deploy)"})
    profile["syscalls"] = rules
    return profile


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    base_path = "/usr/share/containers/seccomp.json"
    check = False
    out = os.path.join(here, "seccomp.json")
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--base" and args:
            base_path = args.pop(0)
        elif a == "--check":
            check = True
        elif not a.startswith("-"):
            out = a
        else:
            print(__doc__, file=sys.stderr)
            return 2
    with open(base_path) as f:
        text = json.dumps(build(json.load(f)), indent="\t") + "\n"
    if check:
        with open(out) as f:
            same = f.read() == text
        if not same:
            print(f"seccomp-profile.py: {out} is not {base_path} plus the needed calls: run {sys.argv[0]}",
                  file=sys.stderr)
        return 0 if same else 1
    with open(out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
