/* The enforcement report of a confinement: which capability each mechanism covers, at the
 * Landlock ABI actually used. A capability is "full" only when every layer designated for it is
 * in force; the overall enforcement is "full" only when every capability is. */
#include "sandbox_report.h"
#include "services_config.h"
#include "range_cgroup.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

struct capability {
    const char *name;
    const char *level; /* full | partial | none */
};

static const char *level(bool full, bool any)
{
    return full ? "full" : any ? "partial" : "none";
}

/* What a range's limits need: a cgroup controller for each kind, and a mount namespace for the
 * size-limited tmpfs TMPDIR. */
static const struct {
    unsigned controller;
    const char *missing;
} limit_needs[] = {
    {1u << DSHX_CGROUP_CTL_MEMORY, "no memory cgroup"},
    {1u << DSHX_CGROUP_CTL_PIDS, "no pids cgroup"},
    {1u << DSHX_CGROUP_CTL_CPU, "no cpu cgroup"},
    {0, "no mount namespace for the tmpfs TMPDIR"},
};

/* Whether the cgroup file system dsh would write is mounted read-only, as container engines
 * mount it (the memory hierarchy of cgroup v1, else the cgroup2 root). */
static bool cgroupfs_read_only(void)
{
    struct statvfs sv;
    return (statvfs("/sys/fs/cgroup/memory", &sv) == 0 || statvfs("/sys/fs/cgroup", &sv) == 0) &&
           (sv.f_flag & ST_RDONLY);
}

/* Whether this process's cgroup (its first hierarchy's path in /proc/self/cgroup) is missing
 * under /sys/fs/cgroup: a container that shares the host's cgroup namespace sees its own group
 * mounted as the root of each hierarchy, under a path that names the host's tree. */
static bool cgroup_path_hidden(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[512], path[1024] = "";
    bool hidden = false;
    if (f && fgets(line, sizeof line, f)) {
        char *controllers = strchr(line, ':'), *rel = controllers ? strchr(controllers + 1, ':') : NULL;
        if (rel) {
            rel[strcspn(rel, "\n")] = '\0';
            *rel++ = '\0';
            char *comma = strchr(controllers + 1, ',');
            if (comma)
                *comma = '\0';
            const char *name = controllers[1] ? controllers + 1 : "";
            if (strncmp(name, "name=", 5) == 0)
                name += 5;
            snprintf(path, sizeof path, "/sys/fs/cgroup/%s%s", name, rel);
            hidden = strcmp(rel, "/") != 0 && access(path, F_OK) != 0;
        }
    }
    if (f)
        fclose(f);
    return hidden;
}

const char *dshx__container_hint(const struct dshx__kernel *k)
{
    unsigned all = (1u << DSHX_CGROUP_CTL_MEMORY) | (1u << DSHX_CGROUP_CTL_PIDS) | (1u << DSHX_CGROUP_CTL_CPU);
    if ((k->cgroup_controllers & all) != all && cgroupfs_read_only())
        return "; the cgroup file system is mounted read-only, as a container's is (README, \"Running in a "
               "container / on Kubernetes\")";
    if ((k->cgroup_controllers & all) != all && cgroup_path_hidden())
        return "; dsh's cgroup is not under /sys/fs/cgroup, as in a container that shares the host's cgroup "
               "namespace (--cgroupns=private)";
    if (!k->namespaces || !k->pid_ns)
        return "; namespaces are refused (in a container: its seccomp profile, see examples/deploy/seccomp.json)";
    return "";
}

int dshx__resource_gaps(const struct dshx__kernel *k, struct dsh_strv *ret_gaps)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(limit_needs) / sizeof(limit_needs[0]); i++) {
        bool have = limit_needs[i].controller ? (k->cgroup_controllers & limit_needs[i].controller) != 0
                                              : k->namespaces;
        if (!have)
            rc = dsh_strv_push(ret_gaps, limit_needs[i].missing);
    }
    return rc;
}

char *dshx__report_json(const char *mode, int abi, const struct dshx__kernel *k,
                        bool dedicated_identity, struct dsh_strv *ret_weak)
{
    bool restricted = strcmp(mode, DSHX_MODE_DANGER) != 0;
    bool ns = k->namespaces, sc = k->seccomp;
    struct dsh_strv gaps = {0};
    if (dshx__resource_gaps(k, &gaps) < 0) {
        dsh_strv_clear(&gaps);
        return NULL;
    }
    bool limited = gaps.n == 0;
    dsh_strv_clear(&gaps);
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
        /* rlimits always; memory, process and cpu limits of the whole range need its cgroups,
         * the TMPDIR size a tmpfs in the launcher's mount namespace. */
        {"resources", level(limited, true)},
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

char *dshx__report_network_allow_list(char *report)
{
    json_object *o = report ? json_tokener_parse(report) : NULL, *caps = NULL;
    char *out = NULL;
    if (o && json_object_object_get_ex(o, "capabilities", &caps) && json_object_is_type(caps, json_type_object)) {
        json_object_object_add(caps, "network", json_object_new_string("allow-list"));
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        out = text ? strdup(text) : NULL;
    }
    json_object_put(o);
    free(report);
    return out;
}
