/* See fault_services.h. */
#include "fault_services.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FAULT(ctx) ((struct fault_services *)(ctx))

static int map_host_path(void *ctx, const char *host_path, char *buf, size_t buflen)
{
    (void)ctx;
    return snprintf(buf, buflen, "%s", host_path); /* one world: every path is visible as itself */
}

static struct dsh_confinement *new_confinement(void)
{
    static const char *const argv[] = {"/fault/launcher", NULL};
    static const char *const env[] = {NULL};
    struct dsh_confinement *c = calloc(1, sizeof *c);
    FAULT_REQUIRE(c != NULL, "out of memory");
    *c = (struct dsh_confinement){.struct_size = sizeof *c, .argv = argv, .env = env,
                                  .report_json = "{\"enforcement\":\"none\",\"capabilities\":{}}"};
    return c;
}

static int confine(void *ctx, const char *const *argv, const char *policy_json, size_t policy_len,
                   dsh_confined_fn on_confined, void *userdata, uint64_t *ret_op)
{
    (void)policy_json, (void)policy_len;
    struct fault_services *f = FAULT(ctx);
    /* The double plays no type stripper: its confinement is refused (and not counted), so every
     * program is stripped by its child (env/stripper.c hands the request back). */
    size_t n = argv[1] ? strlen(argv[1]) : 0;
    if (n >= 12 && strcmp(argv[1] + n - 12, "/stripper.js") == 0)
        return DSH_E_SANDBOX_UNAVAILABLE;
    f->confines++;
    *ret_op = (uint64_t)f->confines;
    f->on_confined = on_confined;
    f->confined_userdata = userdata;
    if (f->hold_confine) {
        f->confine_pending = true;
        return 0;
    }
    /* Completion inside confine(): the plugin must continue from its loop. */
    if (f->confine_status < 0)
        on_confined(userdata, f->confine_status, NULL);
    else
        on_confined(userdata, 0, new_confinement());
    return 0;
}

void fault_complete_confine(struct fault_services *f, int status)
{
    FAULT_REQUIRE(f->confine_pending, "no confine() is pending");
    f->confine_pending = false;
    f->on_confined(f->confined_userdata, status, status < 0 ? NULL : new_confinement());
}

static int cancel_confine(void *ctx, uint64_t op)
{
    (void)op;
    struct fault_services *f = FAULT(ctx);
    if (!f->confine_pending)
        return DSH_E_NOT_FOUND;
    f->confine_pending = false;
    f->confine_cancelled = true;
    return 0;
}

static int is_denial(void *ctx, const struct dsh_confinement *confinement, const char *text, size_t len)
{
    (void)ctx, (void)confinement, (void)text, (void)len;
    return 0;
}

static void release_confinement(void *ctx, struct dsh_confinement *confinement)
{
    (void)ctx;
    free(confinement);
}

static int spawn(void *ctx, const struct dsh_spawn_request *request, struct dsh_process **ret_process,
                 struct dsh_error *ret_error)
{
    (void)request;
    struct fault_services *f = FAULT(ctx);
    f->spawns++;
    if (f->spawn_status < 0)
        return dsh_error_setf(ret_error, f->spawn_status, "injected spawn failure");
    FAULT_REQUIRE(f->n_children < FAULT_MAX_CHILDREN, "more than %d processes", FAULT_MAX_CHILDREN);
    struct fault_child *c = &f->children[f->n_children++];
    int control[2], out[2], err[2];
    FAULT_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, control) == 0, "socketpair: %s", strerror(errno));
    FAULT_REQUIRE(pipe2(out, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2: %s", strerror(errno));
    FAULT_REQUIRE(pipe2(err, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2: %s", strerror(errno));
    c->control_fd = control[1];
    c->stdout_fd = out[1];
    c->stderr_fd = err[1];
    c->process = (struct dsh_process){
        .struct_size = sizeof c->process,
        .pid = 1,
        .control_fd = control[0],
        .stdout_fd = out[0],
        .stderr_fd = err[0],
        .quiescence_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
    };
    FAULT_REQUIRE(c->process.quiescence_fd >= 0, "eventfd: %s", strerror(errno));
    *ret_process = &c->process;
    return 0;
}

static struct fault_child *child_of(struct fault_services *f, struct dsh_process *process)
{
    for (int i = 0; i < f->n_children; i++)
        if (&f->children[i].process == process)
            return &f->children[i];
    FAULT_REQUIRE(false, "unknown process handle");
    return NULL;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void fault_end_range(struct fault_services *f, struct fault_child *c)
{
    (void)f;
    if (c->quiescent)
        return;
    c->quiescent = true;
    close_fd(&c->control_fd);
    close_fd(&c->stdout_fd);
    close_fd(&c->stderr_fd);
    uint64_t one = 1;
    FAULT_REQUIRE(write(c->process.quiescence_fd, &one, sizeof one) == (ssize_t)sizeof one, "eventfd write");
}

static int terminate(void *ctx, struct dsh_process *process, uint32_t grace_ms)
{
    (void)grace_ms;
    struct fault_services *f = FAULT(ctx);
    struct fault_child *c = child_of(f, process);
    f->terminates++;
    c->terminated = true;
    if (!f->hold_quiescence)
        fault_end_range(f, c);
    return 0;
}

static void log_message(void *ctx, int level, const char *message)
{
    struct fault_services *f = FAULT(ctx);
    if (level < DSH_LOG_WARN)
        return;
    f->warnings++;
    snprintf(f->last_warning, sizeof f->last_warning, "%s", message);
}

static int poll_quiescent(void *ctx, struct dsh_process *process, struct dsh_exit_status *ret_status)
{
    struct fault_services *f = FAULT(ctx);
    struct fault_child *c = child_of(f, process);
    if (f->lose_range)
        return DSH_E_CLEANUP_FAILED;
    if (!c->quiescent)
        return 0;
    *ret_status = (struct dsh_exit_status){.signal = c->terminated ? 9 : 0, .exited = !c->terminated};
    return 1;
}

static int usage(void *ctx, struct dsh_process *process, struct dsh_range_usage *ret_usage)
{
    (void)process;
    *ret_usage = (struct dsh_range_usage){.struct_size = sizeof *ret_usage, .oom_kills = FAULT(ctx)->oom_kills};
    return 0;
}

static int freeze(void *ctx, struct dsh_process *process)
{
    struct fault_services *f = FAULT(ctx);
    struct fault_child *c = child_of(f, process);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    f->last_freeze_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    if (f->freezes < (int)(sizeof f->freeze_ns / sizeof f->freeze_ns[0]))
        f->freeze_ns[f->freezes] = f->last_freeze_ns;
    f->freezes++;
    if (!f->can_freeze)
        return DSH_E_UNSUPPORTED;
    if (f->freeze_polls_pending > 0) {
        f->freeze_polls_pending--;
        return 0;
    }
    c->frozen = true;
    return 1;
}

static void release(void *ctx, struct dsh_process *process)
{
    struct fault_services *f = FAULT(ctx);
    struct fault_child *c = child_of(f, process);
    f->releases++;
    c->released = true;
    close_fd(&c->control_fd);
    close_fd(&c->stdout_fd);
    close_fd(&c->stderr_fd);
    close_fd(&c->process.quiescence_fd);
}

static int policy_resolve(void *ctx, const char *session_id, char *buf, size_t buflen)
{
    (void)session_id;
    struct fault_services *f = FAULT(ctx);
    return snprintf(buf, buflen, "{\"mode\":\"%s\",\"workspaceRoot\":\"%s\",\"sessionId\":\"s\"}", f->mode,
                    f->workspace_root);
}

static int subscribe(void *ctx, dsh_mode_change_fn on_change, void *userdata, uint64_t *ret_subscription)
{
    struct fault_services *f = FAULT(ctx);
    f->on_change = on_change;
    f->change_userdata = userdata;
    *ret_subscription = 1;
    return 0;
}

static int unsubscribe(void *ctx, uint64_t subscription)
{
    (void)subscription;
    FAULT(ctx)->on_change = NULL;
    return 0;
}

void fault_change_mode(struct fault_services *f, const char *mode)
{
    snprintf(f->mode, sizeof f->mode, "%s", mode);
    FAULT_REQUIRE(f->on_change != NULL, "no mode subscriber");
    f->on_change(f->change_userdata, "s", mode);
}

#define SERVICE_HEADER(s) .struct_size = sizeof(s), .abi_major = DSH_ABI_MAJOR, .abi_minor = DSH_ABI_MINOR

void fault_services_init(struct fault_services *f, const char *workspace_root)
{
    memset(f, 0, sizeof *f);
    snprintf(f->mode, sizeof f->mode, "workspace-write");
    snprintf(f->workspace_root, sizeof f->workspace_root, "%s", workspace_root);
    f->fs = (struct dsh_fs_service){SERVICE_HEADER(f->fs), .ctx = f, .map_host_path = map_host_path};
    f->sandbox = (struct dsh_sandbox_service){SERVICE_HEADER(f->sandbox), .ctx = f, .confine = confine,
                                              .cancel_confine = cancel_confine, .is_denial = is_denial,
                                              .release_confinement = release_confinement};
    f->subprocess = (struct dsh_subprocess_service){SERVICE_HEADER(f->subprocess), .ctx = f, .spawn = spawn,
                                                    .terminate = terminate, .poll_quiescent = poll_quiescent,
                                                    .release = release, .freeze = freeze, .usage = usage};
    f->policy = (struct dsh_sandbox_policy_service){SERVICE_HEADER(f->policy), .ctx = f, .resolve = policy_resolve,
                                                    .subscribe = subscribe, .unsubscribe = unsubscribe};
    f->logger = (struct dsh_logger){SERVICE_HEADER(f->logger), .ctx = f, .log = log_message};
    f->bundle = (struct dsh_services){SERVICE_HEADER(f->bundle), .fs = &f->fs, .subprocess = &f->subprocess,
                                      .sandbox = &f->sandbox, .sandbox_policy = &f->policy, .logger = &f->logger};
}

static char workspace_dir[64];

static void remove_workspace(void)
{
    rmdir(workspace_dir);
}

const char *fault_workspace(void)
{
    if (!workspace_dir[0]) {
        snprintf(workspace_dir, sizeof workspace_dir, "/tmp/dsh-plugin-ws-XXXXXX");
        FAULT_REQUIRE(mkdtemp(workspace_dir) != NULL, "mkdtemp: %s", strerror(errno));
        atexit(remove_workspace);
    }
    return workspace_dir;
}

void fault_services_destroy(struct fault_services *f)
{
    for (int i = 0; i < f->n_children; i++) {
        struct fault_child *c = &f->children[i];
        FAULT_REQUIRE(c->released, "process %d was never released", i);
        close_fd(&c->control_fd);
        close_fd(&c->stdout_fd);
        close_fd(&c->stderr_fd);
    }
}

void fault_child_send(struct fault_child *c, const char *line)
{
    size_t len = strlen(line);
    FAULT_REQUIRE(write(c->control_fd, line, len) == (ssize_t)len, "control write: %s", strerror(errno));
    FAULT_REQUIRE(write(c->control_fd, "\n", 1) == 1, "control write: %s", strerror(errno));
}

char *fault_child_take_line(struct fault_child *c)
{
    for (;;) {
        char *nl = memchr(c->pending, '\n', c->pending_len);
        if (nl) {
            size_t len = (size_t)(nl - c->pending);
            char *line = strndup(c->pending, len);
            memmove(c->pending, nl + 1, c->pending_len - len - 1);
            c->pending_len -= len + 1;
            return line;
        }
        FAULT_REQUIRE(c->pending_len < sizeof c->pending, "a control line longer than the test buffer");
        ssize_t n = read(c->control_fd, c->pending + c->pending_len, sizeof c->pending - c->pending_len);
        if (n <= 0)
            return NULL;
        c->pending_len += (size_t)n;
    }
}
