/* What a container does to the sandbox, reproduced without a container (root only: each case
 * makes a private mount namespace of its own first, so the host's mounts never change):
 *
 * - /proc/sys mounted read-only, as every engine does. On Linux >= 6.14 the supervisor wrote its
 *   PID namespace's pid_max there, and every run failed with "dsh-range-supervisor: cannot start
 *   .../dsh-sandbox-launch: Read-only file system" (podman --cap-add SYS_ADMIN). The services
 *   now probe the mount and do without pid_max (the pids cgroup is the exact bound).
 * - root without CAP_SYS_ADMIN (a container's root under the default capabilities), with a nodev
 *   /dev/shm (an engine's). The ranges get a user namespace of their own for their PID, mount,
 *   network and IPC namespaces, where that /dev/shm's nodev is locked: the launcher clears nodev
 *   on /dev alone, and every capability but identity is full. */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct fx f;
static bool ready;

static void teardown(void)
{
    if (ready)
        fx_teardown(&f);
}

TestSuite(container, .fini = teardown, .timeout = 120);

/* A private mount namespace with /proc/sys read-only, as a container engine mounts it. */
static void container_mounts(void)
{
    if (geteuid() != 0)
        cr_skip_test("needs root: a private mount namespace with /proc/sys read-only");
    cr_assert(unshare(CLONE_NEWNS) == 0, "unshare: %s", strerror(errno));
    cr_assert(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "private /: %s", strerror(errno));
    cr_assert(mount("/proc/sys", "/proc/sys", NULL, MS_BIND, NULL) == 0, "bind /proc/sys: %s", strerror(errno));
    cr_assert(mount(NULL, "/proc/sys", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) == 0,
              "read-only /proc/sys: %s", strerror(errno));
}

static const char *cap(json_object *rep, const char *name)
{
    json_object *caps = NULL, *v = NULL;
    json_object_object_get_ex(rep, "capabilities", &caps);
    return json_object_object_get_ex(caps, name, &v) ? json_object_get_string(v) : "(missing)";
}

static void run_ok(const char *mode, const char *js, struct run *r)
{
    fx_run(&f, mode, js, NULL, r);
    cr_assert_eq(r->confine_status, 0, "confine failed: %d", r->confine_status);
    cr_assert(r->st.exited && r->st.code == 0, "the run failed (exit %d/%d/%d): stderr [%s]", r->st.exited,
              r->st.code, r->st.signal, r->err ? r->err : "");
}

Test(container, proc_sys_read_only)
{
    container_mounts();
    fx_setup(&f, NULL);
    ready = true;
    struct run r;
    run_ok(WW, "R('W',()=>fs.writeFileSync(WS+'/inside.txt','x'))", &r);
    cr_assert_str_eq(tag_value(&r, "W"), "OK");
    json_object *rep = json_tokener_parse(r.report);
    /* The supervisor owns a PID namespace still; only pid_max is left alone. */
    cr_assert_str_eq(cap(rep, "processLifetime"), "full");
    cr_assert_str_eq(cap(rep, "fileMetadata"), "full");
    json_object_put(rep);
    run_free(&r);
    hostile_case(&f, WW, "W", "R('W',()=>fs.writeFileSync(SH+'/victim.txt','x'))", NULL, NULL);
}

/* Drops CAP_SYS_ADMIN from every set of this process (it stays uid 0). */
static void drop_cap_sys_admin(void)
{
    cr_assert(prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) == 0, "bounding: %s", strerror(errno));
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[2];
    cr_assert(syscall(SYS_capget, &hdr, data) == 0);
    unsigned idx = CAP_SYS_ADMIN / 32, bit = 1u << (CAP_SYS_ADMIN % 32);
    data[idx].effective &= ~bit;
    data[idx].permitted &= ~bit;
    data[idx].inheritable &= ~bit;
    cr_assert(syscall(SYS_capset, &hdr, data) == 0, "capset: %s", strerror(errno));
    cr_assert(unshare(CLONE_NEWPID) < 0 && errno == EPERM, "CAP_SYS_ADMIN is still held");
}

Test(container, root_without_cap_sys_admin)
{
    container_mounts();
    /* A nodev mount under /dev, as engines mount /dev/shm and /dev/mqueue. */
    cr_assert(mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m") == 0,
              "tmpfs on /dev/shm: %s", strerror(errno));
    drop_cap_sys_admin();
    fx_setup(&f, NULL);
    ready = true;
    struct run r;
    run_ok(WW, "R('W',()=>fs.writeFileSync(WS+'/inside.txt','x'));R('D',()=>fs.writeFileSync('/dev/null','x'))", &r);
    cr_assert_str_eq(tag_value(&r, "W"), "OK");
    cr_assert_str_eq(tag_value(&r, "D"), "OK", "/dev's devices open");
    json_object *rep = json_tokener_parse(r.report);
    static const char *const full[] = {"files", "fileMetadata", "network", "ipc", "signals",
                                       "ioctl", "syscalls", "privileges", "processLifetime"};
    for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
        cr_assert_str_eq(cap(rep, full[i]), "full", "%s", full[i]);
    /* The range's user namespace maps only root: no dedicated uid. */
    cr_assert_str_eq(cap(rep, "identity"), "partial");
    json_object_put(rep);
    run_free(&r);
    /* The namespaces are real: the mount layer's EROFS for chmod, the PID namespace's pid 1. */
    hostile_case(&f, WW, "M", "R('M',()=>fs.chmodSync(SH+'/victim.txt',0o600))", NULL, NULL);
    hostile_case(&f, WW, "K", "R('K',()=>process.kill(1,0))", NULL, NULL);
}
