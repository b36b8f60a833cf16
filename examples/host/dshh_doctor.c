/* `dsh doctor`: what this machine gives the sandbox, one line each. The kernel facts come from
 * the services' own enforcement reports (confine() in each policy mode, released at once) and
 * from small probes of this process; Node.js and the bootstrap from a real program run through
 * the provider. Exit 0 when workspace-write is fully enforced and the program ran. */
#include "dsh_json_get.h"
#include "dshh_doctor.h"

#include "dshh_host.h"
#include "dshh_request.h"
#include "dshh_usage.h"
#include "dshh_validate.h"

#include <errno.h>
#include <json-c/json.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const modes[] = {"read-only", "workspace-write", "danger-full-access"};

/* 0 when a child can unshare(flags), else the errno it got. */
static int probe_unshare(int flags)
{
    pid_t pid = fork();
    if (pid < 0)
        return errno;
    if (pid == 0)
        _exit(unshare(flags) == 0 ? 0 : errno & 0xff);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

/* The Seccomp: line of /proc/self/status: 2 when this process already runs under a filter (a
 * container's seccomp profile), which is what refuses namespaces there. */
static bool under_seccomp_filter(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    int mode = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Seccomp: %d", &mode) == 1)
            break;
    if (f)
        fclose(f);
    return mode == 2;
}

/* The container dsh runs in, as far as the engine says so; NULL on a host. */
static const char *container_engine(void)
{
    const char *c = getenv("container"); /* podman, systemd-nspawn, lxc, ... */
    if (getenv("KUBERNETES_SERVICE_HOST"))
        return "Kubernetes";
    if (access("/run/.containerenv", F_OK) == 0)
        return "podman";
    if (access("/.dockerenv", F_OK) == 0)
        return "docker";
    return c && *c ? c : NULL;
}

/* Where the project's seccomp profile is, for the hints. */
#define SECCOMP_PROFILE "examples/deploy/seccomp.json"

/* What grants namespaces that were refused (EPERM), for a line of its own or a reason. */
static const char *namespace_hint(void)
{
    if (under_seccomp_filter())
        return "dsh runs under a seccomp filter, and a container's seccomp profile refuses them: run the "
               "container with --security-opt seccomp=" SECCOMP_PROFILE
               " (Kubernetes: securityContext.seccompProfile type Localhost with that file)";
    if (container_engine())
        return "the container refuses user namespaces (user.max_user_namespaces, an LSM): --cap-add "
               "SYS_ADMIN lets dsh make the namespaces without one";
    return "user namespaces are refused (user.max_user_namespaces, kernel.unprivileged_userns_clone "
           "or an LSM)";
}

static void print_namespace(const char *what, int flags, bool root)
{
    int err = probe_unshare(flags);
    if (!err) {
        printf("%s: available%s\n", what, root && flags == CLONE_NEWUSER ? " (not needed as root)" : "");
        return;
    }
    /* Root without CAP_SYS_ADMIN (a container's): the services give each range a user namespace
     * of its own, where it has them. */
    if (root && err == EPERM && !(flags & CLONE_NEWUSER) && probe_unshare(flags | CLONE_NEWUSER) == 0) {
        printf("%s: available in a user namespace of each range's own (root here lacks CAP_SYS_ADMIN)\n",
               what);
        return;
    }
    printf("%s: unavailable (unshare: %s)%s%s\n", what, strerror(err), err == EPERM ? "; " : "",
           err == EPERM ? namespace_hint() : "");
}

struct confine_wait {
    struct dshh_host *host;
    bool waiting; /* in the loop: completion quits it (a quit before the loop runs is sticky) */
    bool done;
    int status;
    char *report;
};

static void on_confined(void *userdata, int status, struct dsh_confinement *confinement)
{
    struct confine_wait *w = userdata;
    const struct dsh_sandbox_service *sb = w->host->services.sandbox;
    w->done = true;
    w->status = status;
    if (confinement) {
        w->report = strdup(confinement->report_json);
        sb->release_confinement(sb->ctx, confinement);
    }
    if (w->waiting)
        dshh__loop_quit(w->host->loop);
}

/* The enforcement report of confining this very executable under mode (NULL: confine failed). */
static char *mode_report(struct dshh_host *host, const char *mode, int *ret_status)
{
    const struct dsh_sandbox_service *sb = host->services.sandbox;
    const struct dsh_sandbox_policy_service *pol = host->services.sandbox_policy;
    char buf[8192], exe[4096];
    int n = pol->resolve(pol->ctx, NULL, buf, sizeof buf);
    ssize_t elen = readlink("/proc/self/exe", exe, sizeof exe - 1);
    json_object *policy = n > 0 && (size_t)n < sizeof buf ? json_tokener_parse(buf) : NULL;
    if (!policy || elen <= 0) {
        json_object_put(policy);
        *ret_status = -EINVAL;
        return NULL;
    }
    exe[elen] = '\0';
    json_object_object_add(policy, "mode", json_object_new_string(mode));
    const char *text = json_object_to_json_string(policy);
    const char *argv[] = {exe, NULL};
    struct confine_wait w = {.host = host};
    uint64_t op;
    int rc = sb->confine(sb->ctx, argv, text, strlen(text), on_confined, &w, &op);
    json_object_put(policy);
    if (rc == 0 && !w.done) {
        w.waiting = true;
        rc = dshh__loop_run(host->loop);
    }
    *ret_status = rc < 0 ? rc : w.status;
    return w.report;
}

/* "full", or "partial (files: partial, ...)" listing every capability below full. */
static bool print_mode(const char *mode, json_object *report)
{
    json_object *enforcement, *caps;
    const char *level = json_object_object_get_ex(report, "enforcement", &enforcement)
                            ? json_object_get_string(enforcement)
                            : "unknown";
    printf("%s: %s", mode, level);
    if (!strcmp(mode, "danger-full-access")) {
        printf(" (unconfined by design)\n");
        return false;
    }
    if (strcmp(level, "full") != 0 && json_object_object_get_ex(report, "capabilities", &caps)) {
        const char *sep = " (";
        json_object_object_foreach(caps, name, value)
        {
            if (strcmp(json_object_get_string(value), "full") != 0) {
                printf("%s%s: %s", sep, name, json_object_get_string(value));
                sep = ", ";
            }
        }
        if (strcmp(sep, " (") != 0)
            printf(")");
    }
    printf("\n");
    return !strcmp(level, "full");
}

/* Kernel facts of the services' report: the Landlock ABI it would use and the kernel's. */
static void print_landlock(json_object *report)
{
    json_object *k;
    int kernel = json_object_object_get_ex(report, "kernelLandlockAbi", &k) ? json_object_get_int(k) : 0;
    if (kernel > 0)
        printf("landlock: ABI %d\n", kernel);
    else
        printf("landlock: unavailable (needs Linux >= 5.13 with landlock in the lsm= list)\n");
}

static void print_seccomp(void)
{
    unsigned action = SECCOMP_RET_ERRNO;
    bool available = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
                     syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
    printf("seccomp: %s%s\n", available ? "available" : "unavailable",
           under_seccomp_filter() ? " (dsh itself runs under a filter: a container's profile)" : "");
}

/* What a capability's layers need, as the services judge it
 * (examples/providers/lib/sandbox_report.c), from the facts the services logged at create and this
 * process's identity. */
struct kernel_facts {
    int abi; /* the Landlock ABI the report says a restricted run uses */
    bool seccomp, namespaces, pid_ns, memory, pids, cpu, root;
    bool userns;            /* ranges get a user namespace of their own */
    const char *identity;   /* the services' reason for no dedicated identity, or NULL */
    const char *container;  /* container_engine() */
    bool cgroups_read_only, cgroup_hidden; /* the services' container hint */
};

static bool fact(const char *line, const char *what)
{
    return line && strstr(line, what);
}

/* Appends "; " and text to buf (of size) when need is missing. */
static void missing(char *buf, size_t size, bool have, const char *text)
{
    size_t len = strlen(buf);
    if (!have && len < size)
        snprintf(buf + len, size - len, "%s%s", len ? ", " : "", text);
}

/* The reason capability name is below full; empty when it is not a capability dsh explains. */
static void capability_reason(const char *name, const struct kernel_facts *k, char *why, size_t size)
{
    char abi_below[3][48];
    for (int i = 0; i < 3; i++)
        snprintf(abi_below[i], sizeof abi_below[i], "Landlock ABI %d < %d", k->abi, i + 4);
    why[0] = '\0';
    if (!strcmp(name, "files")) {
        missing(why, size, k->abi >= 1, "no Landlock");
        missing(why, size, k->abi < 1 || k->abi >= 3, "Landlock ABI < 3 does not control truncate");
    } else if (!strcmp(name, "fileMetadata")) {
        missing(why, size, k->namespaces, "no mount namespace for the read-only mount layer");
    } else if (!strcmp(name, "network")) {
        missing(why, size, k->seccomp, "no seccomp");
        missing(why, size, k->abi >= 4, abi_below[0]);
        missing(why, size, k->namespaces, "no network namespace");
    } else if (!strcmp(name, "ipc")) {
        missing(why, size, k->seccomp, "no seccomp");
        missing(why, size, k->abi >= 6, abi_below[2]);
        missing(why, size, k->namespaces, "no namespaces");
    } else if (!strcmp(name, "signals")) {
        missing(why, size, k->abi >= 6, abi_below[2]);
        missing(why, size, k->pid_ns, "no PID namespace");
    } else if (!strcmp(name, "ioctl")) {
        missing(why, size, k->abi >= 5, abi_below[1]);
        missing(why, size, k->seccomp, "no seccomp");
    } else if (!strcmp(name, "syscalls")) {
        missing(why, size, k->seccomp, "no seccomp");
    } else if (!strcmp(name, "identity")) {
        missing(why, size, k->root,
                "dsh is not root, so programs run as its own uid (without capabilities) and share its "
                "per-uid kernel counts; a dedicated uid and gid need a root host");
        missing(why, size, !k->root || !k->userns,
                k->container ? "dsh's root lacks CAP_SYS_ADMIN, so each range's user namespace maps only "
                               "root: a dedicated uid and gid need --cap-add SYS_ADMIN (Kubernetes: "
                               "capabilities add SYS_ADMIN) and the workspace and /tmp on a volume or tmpfs"
                             : "dsh's root lacks CAP_SYS_ADMIN, so each range's user namespace maps only "
                               "root; a dedicated uid and gid need CAP_SYS_ADMIN");
        if (k->root && !k->userns && k->identity && strstr(k->identity, "not mapped"))
            missing(why, size, false, k->identity);
        else if (k->root && !k->userns && k->identity)
            snprintf(why + strlen(why), size - strlen(why),
                     "%sno dedicated uid and gid: %s (idmapped mounts need ext4, xfs, btrfs, tmpfs or f2fs, "
                     "not overlayfs: in a container put the workspace and /tmp on a volume or tmpfs, -v or "
                     "--tmpfs, Kubernetes emptyDir)",
                     why[0] ? ", " : "", k->identity);
        else if (k->root && !k->userns)
            missing(why, size, false, "no dedicated uid and gid: the mount layer cannot map every path "
                                      "the program reads to them");
    } else if (!strcmp(name, "processLifetime")) {
        missing(why, size, k->pid_ns, "no PID namespace: a range whose supervisor is killed can be lost");
    } else if (!strcmp(name, "resources")) {
        missing(why, size, k->memory, "no memory cgroup (maxMemoryMb)");
        missing(why, size, k->pids, "no pids cgroup (maxProcesses)");
        missing(why, size, k->cpu, "no cpu cgroup (maxCpuPercent)");
        missing(why, size, k->namespaces, "no mount namespace for the tmpfs TMPDIR (maxTempBytes)");
        /* What the services found withholding the cgroups (their facts line says). */
        if ((!k->memory || !k->pids || !k->cpu) && k->cgroups_read_only)
            snprintf(why + strlen(why), size - strlen(why), "%s",
                     ": the cgroup file system is mounted read-only, as container engines mount it (a "
                     "private cgroup namespace made writable: README, \"Running in a container\")");
        else if ((!k->memory || !k->pids || !k->cpu) && k->cgroup_hidden)
            snprintf(why + strlen(why), size - strlen(why), "%s",
                     ": dsh's cgroup is not under /sys/fs/cgroup, as in a container that shares the host's "
                     "cgroup namespace (--cgroupns=private: README, \"Running in a container\")");
        else if (!k->memory || !k->pids || !k->cpu)
            snprintf(why + strlen(why), size - strlen(why), "%s",
                     k->root ? ": the range's limits need these cgroups (README, \"Kernel requirements\")"
                             : ": dsh may write no such cgroup as this user (README, \"Kernel requirements\")");
    }
    /* What grants a missing namespace, once per line. */
    bool ns_reason = (!k->namespaces && (!strcmp(name, "fileMetadata") || !strcmp(name, "network") ||
                                         !strcmp(name, "ipc") || !strcmp(name, "resources"))) ||
                     (!k->pid_ns && (!strcmp(name, "signals") || !strcmp(name, "processLifetime")));
    if (ns_reason && why[0])
        snprintf(why + strlen(why), size - strlen(why), "; %s", namespace_hint());
}

/* One line for each capability below full in some restricted mode, always. */
static void print_reasons(json_object *const reports[2], const struct kernel_facts *k)
{
    json_object *caps[2] = {dsh_json_get_object(reports[0], "capabilities"),
                            dsh_json_get_object(reports[1], "capabilities")};
    json_object *names = caps[0] ? caps[0] : caps[1];
    if (!names)
        return;
    json_object_object_foreach(names, name, unused)
    {
        (void)unused;
        const char *level = NULL;
        for (size_t i = 0; i < 2 && !level; i++) {
            const char *l = dsh_json_get_text(caps[i], name);
            if (l && strcmp(l, "full") != 0)
                level = l;
        }
        if (!level)
            continue;
        char why[512];
        capability_reason(name, k, why, sizeof why);
        printf("%s %s: %s\n", name, level, why[0] ? why : "the services report it so");
    }
}

struct node_run {
    struct dshh_host *host;
    bool done;
    char *result;
};

static void on_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    (void)global, (void)name, (void)args_json, (void)args_len;
    struct node_run *nr = userdata;
    const char *msg = "dsh doctor declares no bindings";
    nr->host->provider->reply(nr->host->instance, run, call, false, msg, strlen(msg));
}

static void on_done(void *userdata, dsh_run_id run, const char *result_json, size_t result_len)
{
    (void)run;
    struct node_run *nr = userdata;
    nr->result = strndup(result_json, result_len);
    nr->done = true;
    dshh__loop_quit(nr->host->loop);
}

/* Runs a program that reports its own Node.js and bootstrap; prints them or the failure. */
static bool print_node(struct dshh_host *host)
{
    static const char request[] =
        "{\"program\":\"return {node: process.execPath, version: process.version, "
        "bootstrap: process.argv[1]}\",\"bindings\":[]}";
    struct node_run nr = {.host = host};
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb, .on_call = on_call, .on_done = on_done,
                                   .userdata = &nr};
    struct dsh_error err = {0};
    dsh_run_id id;
    int rc = dshh__start_run(host, request, strlen(request), &cb, &id, &err);
    if (rc == 0 && !nr.done)
        rc = dshh__loop_run(host->loop);
    json_object *result = nr.result ? json_tokener_parse(nr.result) : NULL;
    json_object *ok, *value, *error, *field;
    bool ran = result && json_object_object_get_ex(result, "ok", &ok) && json_object_get_boolean(ok) &&
               json_object_object_get_ex(result, "value", &value);
    if (ran) {
        const char *version = json_object_object_get_ex(value, "version", &field) ? json_object_get_string(field) : "?";
        const char *node = json_object_object_get_ex(value, "node", &field) ? json_object_get_string(field) : "?";
        const char *bootstrap = json_object_object_get_ex(value, "bootstrap", &field) ? json_object_get_string(field) : "?";
        printf("node: %s %s (runs confined)\n", node, version);
        printf("bootstrap: %s\n", bootstrap);
    } else if (result && json_object_object_get_ex(result, "error", &error)) {
        json_object *kind = json_object_object_get(error, "kind"), *msg = json_object_object_get(error, "message");
        printf("node: a program did not run (%s): %s\n", json_object_get_string(kind), json_object_get_string(msg));
    } else {
        printf("node: a program did not start: %s\n", *err.message ? err.message : dsh_strerror(rc));
    }
    json_object_put(result);
    free(nr.result);
    return ran;
}

int dshh__cmd_doctor(const char *base, const char *const *patches, size_t npatches, bool verbose)
{
    struct utsname u;
    if (uname(&u) == 0)
        printf("kernel: %s %s %s\n", u.sysname, u.release, u.machine);
    struct dshh_profile profile;
    int status = DSHH_EXIT_USAGE;
    if (dshh__profile_compose(&profile, base, patches, npatches, stderr) ||
        dshh__validate_profile(&profile, true, stderr) != 0) {
        dshh__profile_free(&profile);
        return status;
    }
    struct dshh_host host;
    if (dshh__host_open(&host, &profile, verbose, NULL, 0) == 0 && host.services.sandbox &&
        host.services.sandbox_policy) {
        int rcs[3];
        char *reports[3] = {NULL};
        char *identity_note = NULL; /* the services' reason for workspace-write's identity */
        for (size_t i = 0; i < 3; i++) {
            free(host.identity_note);
            host.identity_note = NULL;
            reports[i] = mode_report(&host, modes[i], &rcs[i]);
            if (!strcmp(modes[i], "workspace-write") && host.identity_note)
                identity_note = strdup(host.identity_note);
        }
        json_object *danger = reports[2] ? json_tokener_parse(reports[2]) : NULL;
        print_landlock(danger);
        json_object_put(danger);
        print_seccomp();
        bool root = geteuid() == 0;
        print_namespace("user namespaces", CLONE_NEWUSER, root);
        print_namespace("pid namespaces", CLONE_NEWPID | (root ? 0 : CLONE_NEWUSER), root);
        bool ran = print_node(&host);
        bool write_full = false;
        json_object *parsed[3] = {NULL, NULL, NULL};
        for (size_t i = 0; i < 3; i++) {
            parsed[i] = reports[i] ? json_tokener_parse(reports[i]) : NULL;
            if (parsed[i]) {
                bool full = print_mode(modes[i], parsed[i]);
                write_full = write_full || (full && !strcmp(modes[i], "workspace-write"));
            } else {
                printf("%s: unavailable (%s)\n", modes[i],
                       dsh_error_name(rcs[i]) ? dsh_error_name(rcs[i]) : dsh_strerror(rcs[i]));
            }
            free(reports[i]);
        }
        int64_t abi = 0;
        dsh_json_get_int64(parsed[1] ? parsed[1] : parsed[0], "landlockAbi", 0, 1000, &abi);
        const char *f = host.kernel_facts;
        struct kernel_facts facts = {
            .abi = (int)abi, .seccomp = fact(f, "seccomp yes"), .namespaces = fact(f, "namespaces yes"),
            .pid_ns = fact(f, "pid namespace yes"), .memory = fact(f, "memory yes"),
            .pids = fact(f, "pids yes"), .cpu = fact(f, "cpu yes"), .root = root,
            .userns = fact(f, "own user namespace yes"), .identity = identity_note,
            .container = container_engine(), .cgroups_read_only = fact(f, "mounted read-only"),
            .cgroup_hidden = fact(f, "is not under /sys/fs/cgroup")};
        print_reasons(parsed, &facts);
        free(identity_note);
        for (size_t i = 0; i < 3; i++)
            json_object_put(parsed[i]);
        status = write_full && ran ? DSHH_EXIT_OK : DSHH_EXIT_FAILURE;
    } else if (host.dl) {
        fprintf(stderr, "dsh doctor: the composition lends no sandbox or sandbox-policy service\n");
    }
    dshh__host_close(&host);
    dshh__profile_free(&profile);
    return status;
}
