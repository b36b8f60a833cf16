/* The subprocess service: spawn / terminate / poll_quiescent / release over managed ranges
 * (range_spawn.c starts them, dsh-range-supervisor owns them). */
#include "services.h"
#include "range_cgroup.h"
#include "range_spawn.h"
#include "supervisor_protocol.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define RELEASE_WAIT_MS 5000

struct dshx__subprocess {
    const struct dshx__config *cfg;
    struct dshx__range_cgroup *session; /* parent group of every range (totals); NULL until the first spawn */
    bool no_session;                    /* none can be made here: ranges get no cgroup */
    uint32_t injected_failures; /* fault injection: observations failed so far */
};

static struct dshx__range *range_of(struct dsh_process *p)
{
    return (struct dshx__range *)p; /* pub is the first member */
}

static int spawn(void *ctx, const struct dsh_spawn_request *request,
                 struct dsh_process **ret_process, struct dsh_error *ret_error)
{
    struct dshx__subprocess *sp = ctx;
    if (!ret_process)
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "ret_process is NULL");
    struct dshx__range *r = NULL;
    if (!sp->session && !sp->no_session) {
        int rc = dshx__range_session_create(sp->cfg, &sp->session, ret_error);
        if (rc < 0)
            return rc;
        sp->no_session = !sp->session;
    }
    int rc = dshx__range_spawn(sp->cfg, sp->session, request, &r, ret_error);
    if (rc < 0)
        return rc;
    *ret_process = &r->pub;
    return 0;
}

/* Reads the supervisor's reports; keeps the exit status when it arrives. A supervisor that exits
 * before reading a command of ours (a terminate sent as the program exited) makes the first
 * recv fail with ECONNRESET; its reports are still queued behind that error. */
static void drain_reports(struct dshx__range *r)
{
    struct dshx__sup_msg m;
    ssize_t n;
    bool reset_seen = false;
    while (r->cmd_fd >= 0) {
        n = recv(r->cmd_fd, &m, sizeof(m), MSG_DONTWAIT);
        if (n < 0 && errno == ECONNRESET && !reset_seen) {
            reset_seen = true;
            continue;
        }
        if (n <= 0)
            break;
        if (n == (ssize_t)sizeof(m) && m.type == DSHX_SUP_EXITED) {
            r->have_status = true;
            r->status = (struct dsh_exit_status){.exited = m.a, .code = m.b, .signal = m.c};
        }
        /* The program was never exec'd (its reason is on the range's stderr): 127, as a shell
         * says of a command it cannot run. */
        if (n == (ssize_t)sizeof(m) && m.type == DSHX_SUP_EXEC_FAILED) {
            r->have_status = true;
            r->status = (struct dsh_exit_status){.exited = 1, .code = 127};
        }
    }
}

static int terminate(void *ctx, struct dsh_process *process, uint32_t grace_ms)
{
    if (!process)
        return DSH_E_REQUEST_INVALID;
    struct dshx__range *r = range_of(process);
    if (r->reaped)
        return 0;
    const struct dshx__config *cfg = ((struct dshx__subprocess *)ctx)->cfg;
    if (cfg->fault_freeze_skipped_ms && grace_ms < cfg->fault_freeze_skipped_ms)
        grace_ms = cfg->fault_freeze_skipped_ms; /* fault injection: the range runs on a while */
    /* A frozen range cannot act on SIGTERM: it is killed as a whole, supervisor included. */
    if (r->freeze_sent) {
        r->terminate_sent = true;
        r->terminate_grace = 0;
        return dshx__range_cgroup_kill(r->cgroup);
    }
    /* Idempotent; a later call may only shorten the grace. */
    if (r->terminate_sent && grace_ms >= r->terminate_grace)
        return 0;
    struct dshx__sup_msg m = {.type = DSHX_SUP_TERMINATE,
                              .a = (int32_t)(grace_ms > INT32_MAX ? INT32_MAX : grace_ms)};
    if (send(r->cmd_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EPIPE &&
        errno != ECONNRESET) {
        /* Cannot reach the supervisor: in a PID namespace killing it kills the range. */
        if (r->in_pid_ns)
            (void)syscall(SYS_pidfd_send_signal, r->pub.quiescence_fd, SIGKILL, NULL, 0);
        else
            return -errno;
    }
    r->terminate_sent = true;
    r->terminate_grace = grace_ms;
    return 0;
}

static int poll_quiescent(void *ctx, struct dsh_process *process,
                          struct dsh_exit_status *ret_status)
{
    struct dshx__subprocess *sp = ctx;
    if (!process)
        return DSH_E_REQUEST_INVALID;
    struct dshx__range *r = range_of(process);
    /* Test-only fault injection: a terminated range whose quiescence cannot be observed. */
    if (r->terminate_sent && sp->injected_failures < sp->cfg->fail_quiescence_observations) {
        sp->injected_failures++;
        return DSH_E_CLEANUP_FAILED;
    }
    if (!r->reaped) {
        struct pollfd p = {.fd = r->pub.quiescence_fd, .events = POLLIN};
        if (poll(&p, 1, 0) <= 0)
            return 0;
        drain_reports(r);
        siginfo_t si = {0};
        if (waitid((idtype_t)P_PIDFD, (id_t)r->pub.quiescence_fd, &si, WEXITED | WNOHANG | __WALL) <
            0) {
            if (errno != ECHILD) /* ECHILD: already reaped elsewhere; the pidfd said it exited */
                return -errno;
        } else if (si.si_pid == 0) {
            return 0;
        }
        r->reaped = true;
        if (!r->have_status) {
            /* The supervisor died without its report. In a PID namespace its death killed the
             * range; as a subreaper it may have left descendants behind. */
            if (!r->in_pid_ns)
                return DSH_E_CLEANUP_FAILED;
            r->have_status = true;
            r->status = (struct dsh_exit_status){.signal = si.si_code == CLD_EXITED ? SIGKILL
                                                                                    : si.si_status};
        }
    }
    if (!r->have_status)
        return DSH_E_CLEANUP_FAILED;
    if (ret_status)
        *ret_status = r->status;
    return 1;
}

static int freeze(void *ctx, struct dsh_process *process)
{
    if (!process)
        return DSH_E_REQUEST_INVALID;
    if (((struct dshx__subprocess *)ctx)->cfg->fault_freeze_skipped_ms)
        return 1; /* fault injection: reported frozen, nothing was stopped */
    struct dshx__range *r = range_of(process);
    if (!r->cgroup)
        return DSH_E_UNSUPPORTED;
    if (r->reaped && dshx__range_cgroup_empty(r->cgroup) == 1)
        return 1; /* nothing of the range is left to run */
    if (!r->freeze_sent) {
        int rc = dshx__range_cgroup_freeze(r->cgroup);
        if (rc < 0)
            return rc;
        r->freeze_sent = true;
    }
    return dshx__range_cgroup_frozen(r->cgroup);
}

static int usage(void *ctx, struct dsh_process *process, struct dsh_range_usage *ret_usage)
{
    (void)ctx;
    if (!process || !ret_usage || ret_usage->struct_size < sizeof(ret_usage->struct_size))
        return DSH_E_REQUEST_INVALID;
    struct dshx__range *r = range_of(process);
    if (!r->cgroup)
        return DSH_E_UNSUPPORTED;
    struct dshx__range_usage u;
    dshx__range_cgroup_usage(r->cgroup, &u);
    struct dsh_range_usage full = {
        .struct_size = sizeof(full),
        .oom_kills = u.oom_kills > UINT32_MAX ? UINT32_MAX : (uint32_t)u.oom_kills,
        .memory_peak_bytes = u.memory_peak_bytes,
        .cpu_usage_usec = u.cpu_usage_usec,
        .cpu_periods = u.cpu_periods,
        .cpu_throttled_periods = u.cpu_throttled_periods,
        .process_limit_hits = u.process_limit_hits,
    };
    /* A caller compiled against an older record gets the part it knows. */
    uint32_t size = ret_usage->struct_size < sizeof(full) ? ret_usage->struct_size : (uint32_t)sizeof(full);
    memcpy(ret_usage, &full, size);
    ret_usage->struct_size = size;
    return 0;
}

/* Kills what is left in the range's cgroup (a subreaper range can leave descendants; a frozen
 * one is all still there) and removes the group once it is empty. */
static void remove_cgroup(const struct dshx__config *cfg, struct dshx__range *r)
{
    if (!r->cgroup)
        return;
    if (dshx__range_cgroup_empty(r->cgroup) != 1)
        (void)dshx__range_cgroup_kill(r->cgroup);
    for (int waited = 0; dshx__range_cgroup_empty(r->cgroup) == 0 && waited < RELEASE_WAIT_MS; waited++)
        usleep(1000);
    if (dshx__range_cgroup_remove(r->cgroup) < 0)
        dshx__log(cfg, DSH_LOG_WARN, "a range's cgroup could not be removed");
    r->cgroup = NULL;
}

static bool wait_readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc;
    while ((rc = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
    }
    return rc > 0;
}

static void release(void *ctx, struct dsh_process *process)
{
    if (!process)
        return;
    struct dshx__range *r = range_of(process);
    if (!r->reaped) {
        terminate(ctx, process, 0);
        if (!wait_readable(r->pub.quiescence_fd, RELEASE_WAIT_MS)) {
            (void)syscall(SYS_pidfd_send_signal, r->pub.quiescence_fd, SIGKILL, NULL, 0);
            (void)wait_readable(r->pub.quiescence_fd, RELEASE_WAIT_MS);
        }
        siginfo_t si;
        while (waitid((idtype_t)P_PIDFD, (id_t)r->pub.quiescence_fd, &si, WEXITED | __WALL) < 0 &&
               errno == EINTR) {
        }
    }
    remove_cgroup(((struct dshx__subprocess *)ctx)->cfg, r);
    if (r->cmd_fd >= 0)
        close(r->cmd_fd);
    close(r->pub.quiescence_fd);
    free(r);
}

int dshx__subprocess_create(const struct dshx__config *cfg, struct dsh_subprocess_service *vt,
                            struct dshx__subprocess **ret_subprocess)
{
    struct dshx__subprocess *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return -ENOMEM;
    sp->cfg = cfg;
    *vt = (struct dsh_subprocess_service){
        .struct_size = sizeof(*vt),
        .abi_major = DSH_ABI_MAJOR,
        .abi_minor = DSH_ABI_MINOR,
        .ctx = sp,
        .spawn = spawn,
        .terminate = terminate,
        .poll_quiescent = poll_quiescent,
        .release = release,
        .freeze = freeze,
        .usage = usage,
    };
    *ret_subprocess = sp;
    return 0;
}

void dshx__subprocess_destroy(struct dshx__subprocess *subprocess)
{
    /* Every range was released before (ABI.md): the session group is empty. */
    if (subprocess && subprocess->session && dshx__range_cgroup_remove(subprocess->session) < 0)
        dshx__log(subprocess->cfg, DSH_LOG_WARN, "the session's cgroup could not be removed");
    free(subprocess);
}
