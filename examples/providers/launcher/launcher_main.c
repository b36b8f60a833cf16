/* dsh-sandbox-launch: confines itself, then execs the program.
 *
 *   dsh-sandbox-launch --mode read-only|workspace-write --landlock-abi N [--namespaces]
 *                      [--nproc N] [--uid N --gid N] [--ro PATH]... [--rw PATH]...
 *                      [--owned PATH]... [--tmpfs PATH --tmpfs-size BYTES]
 *                      [--netns PATH --net-port PORT...] -- PROGRAM [ARG]...
 *
 * --owned grants nothing: with --uid, PATH (like every rw root) is bind-mounted through the
 * mapping host uid/gid <-> --uid/--gid, so the program acts as the host's user there.
 *
 * --tmpfs makes PATH (also writable) a tmpfs of at most BYTES in the launcher's mount namespace
 * (needs --namespaces): the run's private temp dir, so filling it never touches the host's disk.
 *
 * --netns (needs --namespaces) joins the network namespace of the run's egress proxy instead of an
 * empty one (the network allow-list): its resolver is named in /etc/resolv.conf, TCP connect
 * reaches only the --net-port ports (Landlock) and the seccomp set allows AF_INET sockets.
 *
 * Order: close inherited fds but 0..3, rlimits, namespaces + read-only mounts (when asked),
 * no_new_privs + Landlock, drop capabilities and switch to --uid/--gid, seccomp, execve. Any
 * failure exits 125 with one line on stderr: the program never runs less confined than the host
 * reported. */
#include "identity.h"
#include "landlock.h"
#include "launcher_limits.h"
#include "mount_hide.h"
#include "mount_layer.h"
#include "net_join.h"
#include "privileges.h"
#include "seccomp_filter.h"
#include "world.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_SETUP 125
#define MAX_PATHS  DSHX_MAX_ROOTS

extern char **environ;

struct args {
    const char *mode;
    int abi;
    bool namespaces;
    unsigned long long nproc;
    const char *ro[MAX_PATHS + 1];
    const char *rw[MAX_PATHS + 1];
    const char *owned[MAX_PATHS + 1];
    size_t nro, nrw, nowned;
    struct dshx__identity id;
    bool uid_set, gid_set;
    const char *tmpfs;
    unsigned long long tmpfs_size;
    const char *netns;
    unsigned short net_ports[16];
    size_t nnet_ports;
    char **program;
};

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "dsh-sandbox-launch: confinement failed: %s\n", what);
    exit(EXIT_SETUP);
}

static bool number(const char *s, unsigned long long max, unsigned long long *ret)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v > max)
        return false;
    *ret = v;
    return true;
}

static void parse(int argc, char **argv, struct args *a)
{
    unsigned long long v;
    int i = 1;
    for (; i < argc; i++) {
        const char *o = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--") == 0) {
            i++;
            break;
        } else if (strcmp(o, "--namespaces") == 0) {
            a->namespaces = true;
            continue;
        }
        if (!val)
            die("missing option value");
        i++;
        if (strcmp(o, "--mode") == 0) {
            a->mode = val;
        } else if (strcmp(o, "--landlock-abi") == 0 && number(val, 64, &v) && v >= 1) {
            a->abi = (int)v;
        } else if (strcmp(o, "--nproc") == 0 && number(val, 1u << 22, &v)) {
            a->nproc = v;
        } else if (strcmp(o, "--uid") == 0 && number(val, 0xfffffffeu, &v)) {
            a->id.uid = (uid_t)v;
            a->uid_set = true;
        } else if (strcmp(o, "--gid") == 0 && number(val, 0xfffffffeu, &v)) {
            a->id.gid = (gid_t)v;
            a->gid_set = true;
        } else if (strcmp(o, "--ro") == 0 && a->nro < MAX_PATHS && val[0] == '/') {
            a->ro[a->nro++] = val;
        } else if (strcmp(o, "--owned") == 0 && a->nowned < MAX_PATHS && val[0] == '/') {
            a->owned[a->nowned++] = val;
        } else if (strcmp(o, "--rw") == 0 && a->nrw < MAX_PATHS && val[0] == '/') {
            a->rw[a->nrw++] = val;
        } else if (strcmp(o, "--tmpfs") == 0 && !a->tmpfs && a->nrw < MAX_PATHS && val[0] == '/') {
            a->tmpfs = a->rw[a->nrw++] = val;
        } else if (strcmp(o, "--netns") == 0 && !a->netns && val[0] == '/') {
            a->netns = val;
        } else if (strcmp(o, "--net-port") == 0 && a->nnet_ports < 16 && number(val, 65535, &v) && v) {
            a->net_ports[a->nnet_ports++] = (unsigned short)v;
        } else if (strcmp(o, "--tmpfs-size") == 0 && number(val, 1ull << 50, &v) && v >= 4096) {
            a->tmpfs_size = v;
        } else {
            die("bad option");
        }
    }
    if (!a->mode || (strcmp(a->mode, "read-only") != 0 && strcmp(a->mode, "workspace-write") != 0))
        die("missing or unknown --mode");
    if (a->abi < 1)
        die("missing --landlock-abi");
    if (a->uid_set != a->gid_set)
        die("--uid and --gid go together");
    a->id.set = a->uid_set;
    if (a->id.set && (!a->namespaces || a->id.uid == 0 || a->id.gid == 0))
        die("a dedicated identity needs --namespaces and non-zero ids");
    if (strcmp(a->mode, "read-only") == 0 && a->nrw > 0)
        die("read-only mode takes no writable roots");
    if (a->tmpfs && (!a->tmpfs_size || !a->namespaces))
        die("--tmpfs needs --tmpfs-size and --namespaces");
    if ((a->netns || a->nnet_ports) && (!a->netns || !a->nnet_ports || !a->namespaces))
        die("--netns needs --net-port and --namespaces");
    if (i >= argc || argv[i][0] != '/')
        die("missing absolute program path");
    a->program = &argv[i];
}

int main(int argc, char **argv)
{
    char err[512] = "";
    dshx__close_inherited_fds();
    static struct args a; /* static: large and zero-initialised; the launcher is single-use */
    parse(argc, argv, &a);

    if (dshx__set_rlimits(a.nproc, err, sizeof(err)) < 0)
        die(err);
    /* The cwd must name the new mounts once the roots are bound over themselves. */
    char cwd[4096];
    bool have_cwd = getcwd(cwd, sizeof(cwd)) != NULL;
    int idmap_fd = -1;
    pid_t idmap_helper = -1;
    if (a.id.set && (idmap_fd = dshx__idmap_userns(&a.id, &idmap_helper, err, sizeof(err))) < 0)
        die(err);
    int netns_fd = -1; /* opened while the host's /proc is still in view */
    if (a.netns && (netns_fd = dshx__net_open(a.netns, err, sizeof(err))) < 0)
        die(err);
    if (a.namespaces && dshx__mount_layer_apply(a.rw, a.owned, idmap_fd, err, sizeof(err)) < 0)
        die(err);
    /* The mount layer made an empty network namespace; the allow-list's replaces it. */
    if (netns_fd >= 0 && (dshx__net_join(netns_fd, err, sizeof(err)) < 0 ||
                          dshx__net_resolver_conf(err, sizeof(err)) < 0))
        die(err);
    if (idmap_fd >= 0)
        close(idmap_fd);
    dshx__reap_helper(idmap_helper); /* long gone by now: no zombie reaches the program */
    /* The temp dir belongs to the ids the program runs as. */
    if (a.tmpfs && dshx__mount_private_tmpfs(a.tmpfs, a.tmpfs_size, a.id.set ? a.id.uid : geteuid(),
                                             a.id.set ? a.id.gid : getegid(), err, sizeof(err)) < 0)
        die(err);
    if (a.id.set && dshx__identity_names(&a.id, err, sizeof(err)) < 0)
        die(err);
    const char *const *visible[] = {a.ro,
                                    a.rw,
                                    a.owned,
                                    dshx__world_system_roots,
                                    dshx__world_devices_rw,
                                    dshx__world_devices_ro,
                                    NULL};
    if (a.namespaces && dshx__hide_unrelated(visible, err, sizeof(err)) < 0)
        die(err);
    if (a.namespaces && have_cwd && chdir(cwd) < 0)
        die("chdir back into the working directory");
    struct dshx__landlock_plan plan = {.abi = a.abi, .ro = a.ro, .rw = a.rw,
                                       .connect_ports = a.net_ports, .nconnect_ports = a.nnet_ports};
    if (dshx__landlock_apply(&plan, err, sizeof(err)) < 0) /* also sets no_new_privs */
        die(err);
    if (dshx__drop_capabilities(&a.id, err, sizeof(err)) < 0)
        die(err);
    if (dshx__seccomp_apply(a.netns != NULL, err, sizeof(err)) < 0)
        die(err);

    execve(a.program[0], a.program, environ);
    fprintf(stderr, "dsh-sandbox-launch: exec %s: %s\n", a.program[0], strerror(errno));
    return 127;
}
