/* The enforcement report of a confinement: which capability each mechanism covers, at the
 * Landlock ABI actually used. A capability is "full" only when every layer designated for it is
 * in force; the overall enforcement is "full" only when every capability is. */
#include "internal.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

struct capability {
    const char *name;
    const char *level; /* full | partial | none */
};

static const char *level(bool full, bool any)
{
    return full ? "full" : any ? "partial" : "none";
}

char *dshx__report_json(const char *mode, int abi, const struct dshx__kernel *k,
                        bool dedicated_identity, struct dsh_strv *ret_weak)
{
    bool restricted = strcmp(mode, DSHX_MODE_DANGER) != 0;
    bool ns = k->namespaces, sc = k->seccomp;
    bool bounded = k->pid_ns && (k->root ? k->pid_max_per_ns : true);
    struct capability caps[] = {
        /* Landlock paths; truncate(2)/O_TRUNC are controlled only from ABI 3. */
        {"files", level(abi >= 3, abi >= 1)},
        /* chmod/utimes/xattrs: only the read-only mount layer controls them. */
        {"fileMetadata", level(ns, false)},
        /* seccomp socket(2) denial + Landlock TCP rules (ABI 4) + an empty network namespace. */
        {"network", level(sc && abi >= 4 && ns, sc || abi >= 4 || ns)},
        /* Abstract unix sockets: seccomp + Landlock scoping (ABI 6) + namespaces. */
        {"ipc", level(sc && abi >= 6 && ns, sc || abi >= 6 || ns)},
        /* Signals to processes outside the sandbox: Landlock scoping (ABI 6) + PID namespace. */
        {"signals", level(abi >= 6 && k->pid_ns, abi >= 6 || k->pid_ns)},
        /* Device ioctls: Landlock IOCTL_DEV (ABI 5) + seccomp TIOCSTI/TIOCLINUX. */
        {"ioctl", level(abi >= 5 && sc, abi >= 5 || sc)},
        /* ptrace, process_vm_*, namespaces, mount, bpf, perf, keys, userfaultfd, io_uring. */
        {"syscalls", level(sc, false)},
        /* no_new_privs + every capability dropped. */
        {"privileges", "full"},
        /* A dedicated unprivileged uid/gid (root hosts); else the host's uid without
         * capabilities, sharing its per-uid kernel counts. */
        {"identity", level(dedicated_identity, true)},
        /* A PID namespace owns every descendant; the subreaper fallback can lose a range whose
         * supervisor gets killed. */
        {"processLifetime", level(k->pid_ns, true)},
        /* rlimits always; a process-count bound needs pid_max per namespace (root) or
         * RLIMIT_NPROC in a user namespace of our own. */
        {"resources", level(bounded, true)},
    };
    size_t n = sizeof(caps) / sizeof(caps[0]);
    bool all_full = true;
    for (size_t i = 0; i < n; i++) {
        bool full = strcmp(caps[i].level, "full") == 0;
        all_full = all_full && full;
        if (!full && restricted && ret_weak &&
            dsh_strv_pushf(ret_weak, "%s: %s", caps[i].name, caps[i].level) < 0)
            return NULL;
    }

    json_object *root = json_object_new_object(), *cj = json_object_new_object();
    if (!root || !cj) {
        json_object_put(root);
        json_object_put(cj);
        return NULL;
    }
    json_object_object_add(root, "mode", json_object_new_string(mode));
    json_object_object_add(root, "enforcement",
                           json_object_new_string(!restricted ? "none"
                                                  : all_full  ? "full"
                                                              : "partial"));
    json_object_object_add(root, "landlockAbi", json_object_new_int(restricted ? abi : 0));
    json_object_object_add(root, "kernelLandlockAbi", json_object_new_int(k->landlock_abi));
    json_object_object_add(root, "denialLogging", json_object_new_boolean(restricted && abi >= 7));
    for (size_t i = 0; i < n; i++)
        json_object_object_add(cj, caps[i].name,
                               json_object_new_string(restricted ? caps[i].level : "none"));
    json_object_object_add(root, "capabilities", cj);
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
    char *out = text ? strdup(text) : NULL;
    json_object_put(root);
    return out;
}
