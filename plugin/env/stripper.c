/* Type strippers: per session, a long-lived Node running only bootstrap/stripper.js, confined by
 * the host's sandbox service like a program but read-only with a single root of its own (the
 * directory of its script: no workspace, no writable root, no network), spawned as a managed
 * range and closed by waiting for its quiescence like an environment.
 *
 * Why one per session: a stripper sees every program it strips and chooses which bytes get
 * blanked, so a compromised shared stripper could read one session's programs and signal through
 * another's. Bound: PTC_STRIPPERS_MAX alive, the least recently used idle one closed first.
 *
 * Trust: nothing a stripper sends is believed. Lines are bounded by maxMessageBytes and parsed
 * strictly; answers come in request order and must name the request's id; a stripped text must
 * keep the strip invariant (base/strip_check.c); a refusal's message is only ever shown as the
 * program's own syntax error (its run frame's `syntaxError`). A broken answer is a protocol
 * failure of the run it was for (never a successful strip) and ends the stripper; a stripper that
 * cannot answer (cannot start, exits, or is silent for PTC_STRIPPER_ANSWER_MS) hands its requests
 * back to the child, which strips them itself as it always could. A stripper that exits after it
 * was ready is started again at once. */
#include "stripper.h"
#include "control.h"
#include "language.h"
#include "strip_check.h"
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_list.h"
#include "dsh_strv.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

enum stripper_state { STRIPPER_CONFINING, STRIPPER_STARTING, STRIPPER_READY, STRIPPER_CLOSING };

struct ptc_strip_request {
    struct ptc_strip_request *next;
    uint64_t id;
    char *source;
    size_t len;
    char *format;
    ptc_strip_done_fn done; /* NULL once cancelled */
    void *arg;
    struct ptc_stripper *owner;
    bool settled; /* answered (or handed back), delivered from the loop */
    enum ptc_strip_answer answer;
    char *text;
    size_t text_len;
};

struct ptc_stripper {
    struct ptc_stripper *next;
    struct ptc_strippers *set;
    struct ptc_host *host;
    char *session_id;
    char *policy_json;
    enum stripper_state state;
    uint64_t last_used;
    bool was_ready; /* it answered once: a later exit restarts it */

    bool confine_pending;
    uint64_t confine_op;
    int confine_status;
    struct dsh_confinement *confinement;
    char *start_error;

    struct dsh_process *process;
    struct ptc_control control;
    struct ptc_watch control_watch, out_watch, err_watch, quiescence_watch;
    bool quiescent;
    struct ptc_timer answer_timer;

    struct ptc_strip_request *pending; /* oldest first: answers come in this order */
    struct ptc_strip_request *settled; /* answers waiting for delivery from the loop */
    uint64_t next_id;

    /* What it has pending on the loop; all three can be queued at once. */
    struct ptc_deferred confined_call, deliver_call, free_call;
};

static void close_stripper(struct ptc_stripper *s);
static struct ptc_stripper *start_stripper(struct ptc_strippers *set, const char *session_id);

/* ---- requests ---------------------------------------------------------------------------- */

static void free_request(struct ptc_strip_request *r)
{
    free(r->source);
    free(r->format);
    free(r->text);
    free(r);
}

static void deliver_settled(struct ptc_stripper *s)
{
    while (s->settled) {
        struct ptc_strip_request *r = s->settled;
        s->settled = r->next;
        if (r->done)
            r->done(r->arg, r->answer, r->text ? r->text : "", r->text_len);
        free_request(r);
    }
}

static void on_deliver_call(struct ptc_deferred *call)
{
    deliver_settled(ptc__container_of(call, struct ptc_stripper, deliver_call));
}

/* Moves the oldest pending request to the delivery queue with its answer (text copied). */
static void settle_head(struct ptc_stripper *s, enum ptc_strip_answer answer, const char *text, size_t len)
{
    struct ptc_strip_request *r = s->pending;
    if (!r)
        return;
    s->pending = r->next;
    r->next = NULL;
    r->settled = true;
    r->answer = answer;
    if ((r->text = malloc(len + 1))) {
        memcpy(r->text, text, len);
        r->text[len] = '\0';
        r->text_len = len;
    } else if (answer == PTC_STRIP_ANSWER_CODE || answer == PTC_STRIP_ANSWER_SYNTAX_ERROR) {
        r->answer = PTC_STRIP_ANSWER_IN_CHILD; /* out of memory: the child strips */
    }
    struct ptc_strip_request **tail = &s->settled;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    /* Delivered from the loop: a requester is never called back inside its own request. */
    ptc__defer(&s->host->loop, &s->deliver_call, on_deliver_call);
    ptc__timer_arm(&s->answer_timer, s->pending ? PTC_STRIPPER_ANSWER_MS : 0);
}

/* The stripper cannot answer what it holds: the child strips those programs. */
static void lost(struct ptc_stripper *s, const char *why)
{
    /* One that never served (it cannot start here, e.g. no launchable Node) is worth only an
     * informational line per attempt: the runs go on exactly as without a stripper. */
    if (s->pending)
        ptc__log(s->host, s->state == STRIPPER_READY ? DSH_LOG_WARN : DSH_LOG_INFO,
                 "type stripper of session \"%s\": %s; the programs are stripped in their own process", s->session_id, why);
    while (s->pending)
        settle_head(s, PTC_STRIP_ANSWER_IN_CHILD, why, strlen(why));
    bool restart = s->was_ready && !s->set->shutting_down && s->state != STRIPPER_CLOSING;
    struct ptc_strippers *set = s->set;
    char *session = restart ? strdup(s->session_id) : NULL;
    close_stripper(s);
    if (session) {
        ptc__log(set->host, DSH_LOG_INFO, "type stripper of session \"%s\" ended (%s); starting it again", session, why);
        start_stripper(set, session);
        free(session);
    }
}

/* The stripper broke its protocol: the request it answered fails, the rest go to the child. */
static void broken(struct ptc_stripper *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void broken(struct ptc_stripper *s, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char message[600];
    int n = snprintf(message, sizeof message, "the type stripper broke its protocol: %s", why);
    ptc__log(s->host, DSH_LOG_ERROR, "type stripper of session \"%s\": %s", s->session_id, message);
    if (s->pending)
        settle_head(s, PTC_STRIP_ANSWER_REFUSED, message, (size_t)n < sizeof message ? (size_t)n : sizeof message - 1);
    s->was_ready = false; /* a stripper that lies is not restarted until someone asks again */
    lost(s, "the stripper was ended after a protocol failure");
}

/* ---- the stripper's lines ------------------------------------------------------------------- */

static void on_answer(struct ptc_stripper *s, json_object *answer)
{
    struct ptc_strip_request *r = s->pending;
    int64_t id;
    bool ok;
    size_t len = 0, at = 0;
    const char *text;
    if (!r) {
        broken(s, "an answer without a request");
        return;
    }
    if (!dsh_json_get_int64(answer, "id", 0, INT64_MAX, &id) || (uint64_t)id != r->id) {
        broken(s, "the answer does not name the request it answers (id %llu)", (unsigned long long)r->id);
        return;
    }
    if (!dsh_json_get_bool(answer, "ok", &ok)) {
        broken(s, "the answer has no boolean ok");
        return;
    }
    if (!ok) {
        if (!(text = dsh_json_get_string(answer, "message", &len))) {
            broken(s, "a refusal without a message");
            return;
        }
        /* Not erasable TypeScript (as the stripper reads it): the child reports this message,
         * naming its own file, instead of stripping the program itself. */
        settle_head(s, PTC_STRIP_ANSWER_SYNTAX_ERROR, text, len);
        return;
    }
    if (!(text = dsh_json_get_string(answer, "code", &len))) {
        broken(s, "a stripped answer without code");
        return;
    }
    enum ptc_strip_violation v = ptc__strip_check(r->source, r->len, text, len, &at);
    if (v != PTC_STRIP_NONE) {
        broken(s, "its output was refused: %s (byte %zu)", ptc__strip_violation_text(v), at);
        return;
    }
    s->was_ready = true;
    settle_head(s, PTC_STRIP_ANSWER_CODE, text, len);
}

static void handle_line(struct ptc_stripper *s, const char *line, size_t len)
{
    json_object *frame = dsh_json_parse_strict(line, len);
    const char *type = dsh_json_get_text(frame, "type");
    if (!frame || !json_object_is_type(frame, json_type_object)) {
        json_object_put(frame);
        broken(s, "a line that is not a JSON object");
        return;
    }
    if (s->state == STRIPPER_STARTING) {
        if (!type || strcmp(type, "ready") != 0)
            broken(s, "it did not start with a ready line");
        else {
            s->state = STRIPPER_READY;
            s->was_ready = true;
            ptc__log(s->host, DSH_LOG_DEBUG, "type stripper of session \"%s\" is ready", s->session_id);
        }
    } else {
        on_answer(s, frame);
    }
    json_object_put(frame);
}

static void on_control(struct ptc_watch *watch, uint32_t events)
{
    struct ptc_stripper *s = ptc__container_of(watch, struct ptc_stripper, control_watch);
    struct ptc_loop *loop = &s->host->loop;
    if ((events & EPOLLOUT) && ptc__control_flush(&s->control) != 0)
        ptc__watch_modify(loop, watch, EPOLLIN);
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    int rc = ptc__control_read(&s->control), got = 0;
    char *line;
    size_t len;
    while (rc >= 0 && s->state != STRIPPER_CLOSING && (got = ptc__control_next_line(&s->control, &line, &len)) > 0)
        handle_line(s, line, len);
    if (s->state == STRIPPER_CLOSING) { /* nothing more is read from it */
        ptc__watch_remove(loop, watch);
        return;
    }
    if (rc == -E2BIG || got == -E2BIG)
        broken(s, "a line exceeds maxMessageBytes (%lld bytes)", (long long)s->host->config.max_message_bytes);
    else if (rc < 0 || s->control.eof)
        lost(s, "the stripper exited");
}

/* Discards what a pipe holds: stdout carries nothing and stderr only the stripper's own
 * diagnostics; both are drained so the stripper never blocks on them. */
static void drain_pipe(struct ptc_stripper *s, struct ptc_watch *watch)
{
    char buf[4096];
    for (int rounds = 0; rounds < 16; rounds++) {
        ssize_t n = read(watch->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            ptc__watch_remove(&s->host->loop, watch);
            return;
        }
    }
}

static void on_stdout(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    drain_pipe(ptc__container_of(watch, struct ptc_stripper, out_watch), watch);
}

static void on_stderr(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    drain_pipe(ptc__container_of(watch, struct ptc_stripper, err_watch), watch);
}

static void on_answer_timeout(struct ptc_timer *timer)
{
    struct ptc_stripper *s = ptc__container_of(timer, struct ptc_stripper, answer_timer);
    char why[96];
    snprintf(why, sizeof why, "the stripper did not answer within %d ms", PTC_STRIPPER_ANSWER_MS);
    s->was_ready = false; /* a silent stripper is started again only when asked */
    lost(s, why);
}

/* ---- lifetime ------------------------------------------------------------------------------ */

static void close_fds(struct ptc_stripper *s)
{
    struct ptc_loop *loop = &s->host->loop;
    ptc__watch_remove(loop, &s->control_watch);
    ptc__control_destroy(&s->control);
    struct ptc_watch *pipes[] = {&s->out_watch, &s->err_watch};
    for (size_t i = 0; i < 2; i++) {
        ptc__watch_remove(loop, pipes[i]);
        if (pipes[i]->fd >= 0)
            close(pipes[i]->fd);
        pipes[i]->fd = -1;
    }
    ptc__watch_remove(loop, &s->quiescence_watch);
}

static void destroy(struct ptc_stripper *s)
{
    struct ptc_host *host = s->host;
    DSH_LIST_REMOVE(&s->set->head, s);
    close_fds(s);
    ptc__timer_destroy(&host->loop, &s->answer_timer);
    if (s->process)
        host->services.subprocess->release(host->services.subprocess->ctx, s->process);
    if (s->confinement)
        host->services.sandbox->release_confinement(host->services.sandbox->ctx, s->confinement);
    ptc__defer_cancel(&s->confined_call);
    ptc__defer_cancel(&s->deliver_call);
    ptc__defer_cancel(&s->free_call);
    /* Unload: nobody is told any more. */
    struct ptc_strip_request *lists[] = {s->pending, s->settled};
    for (size_t i = 0; i < 2; i++)
        while (lists[i]) {
            struct ptc_strip_request *r = lists[i];
            lists[i] = r->next;
            free_request(r);
        }
    free(s->session_id);
    free(s->policy_json);
    free(s->start_error);
    free(s);
}

/* Frees it once its range is quiescent and its answers were delivered. */
static void free_when_done(struct ptc_deferred *call)
{
    struct ptc_stripper *s = ptc__container_of(call, struct ptc_stripper, free_call);
    if (s->confine_pending || (s->process && !s->quiescent))
        return;
    deliver_settled(s);
    destroy(s);
}

static void on_quiescent(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    struct ptc_stripper *s = ptc__container_of(watch, struct ptc_stripper, quiescence_watch);
    const struct dsh_subprocess_service *sp = s->host->services.subprocess;
    struct dsh_exit_status status;
    int rc = sp->poll_quiescent(sp->ctx, s->process, &status);
    if (rc == 0)
        return;
    ptc__watch_remove(&s->host->loop, watch);
    /* A range that can no longer be observed is released (killed and waited for) like this one. */
    s->quiescent = true;
    if (s->state != STRIPPER_CLOSING) {
        /* Bytes it wrote before it ended are still in the socket. */
        if (s->control_watch.armed)
            on_control(&s->control_watch, EPOLLIN);
        if (s->state != STRIPPER_CLOSING)
            lost(s, "the stripper exited");
        return;
    }
    ptc__defer(&s->host->loop, &s->free_call, free_when_done);
}

/* Ends the stripper: every request it still holds goes back to the child first. */
static void close_stripper(struct ptc_stripper *s)
{
    static const char why[] = "the stripper was closed";
    if (s->state == STRIPPER_CLOSING)
        return;
    while (s->pending)
        settle_head(s, PTC_STRIP_ANSWER_IN_CHILD, why, sizeof why - 1);
    s->state = STRIPPER_CLOSING;
    ptc__timer_arm(&s->answer_timer, 0);
    const struct ptc_host *host = s->host;
    if (s->confine_pending && host->services.sandbox->cancel_confine(host->services.sandbox->ctx, s->confine_op) == 0)
        s->confine_pending = false;
    if (s->process && !s->quiescent) {
        const struct dsh_subprocess_service *sp = host->services.subprocess;
        if (sp->terminate(sp->ctx, s->process, 0) < 0)
            s->quiescent = true; /* release() kills and waits for it */
    }
    if (!s->process || s->quiescent)
        ptc__defer(&s->host->loop, &s->free_call, free_when_done);
}

static void fail_start(struct ptc_stripper *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_start(struct ptc_stripper *s, const char *fmt, ...)
{
    char why[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    s->was_ready = false;
    lost(s, why);
}

/* Queues r's request line on the stripper's channel. 0 or a negative errno (-E2BIG: the bound). */
static int send_request(struct ptc_stripper *s, const struct ptc_strip_request *r)
{
    json_object *frame = json_object_new_object();
    json_object_object_add(frame, "id", json_object_new_uint64(r->id));
    json_object_object_add(frame, "format", json_object_new_string(r->format));
    /* The name only appears in syntax errors, which the child reports itself. */
    json_object_object_add(frame, "filename", json_object_new_string("[program]"));
    json_object_object_add(frame, "source", json_object_new_string_len(r->source, (int)r->len));
    const char *text = json_object_to_json_string_ext(frame, DSH_JSON_PRINT_FLAGS);
    int rc = ptc__control_queue(&s->control, text, strlen(text));
    json_object_put(frame);
    if (rc == 0 && ptc__control_flush(&s->control) == 0)
        ptc__watch_modify(&s->host->loop, &s->control_watch, EPOLLIN | EPOLLOUT);
    return rc;
}

static void spawn_stripper(struct ptc_stripper *s)
{
    struct ptc_host *host = s->host;
    struct dsh_spawn_request request = {
        .struct_size = sizeof request,
        .argv = s->confinement->argv,
        .env = s->confinement->env,
        .cwd = "/",
    };
    struct dsh_error err = {0};
    const struct dsh_subprocess_service *sp = host->services.subprocess;
    if (sp->spawn(sp->ctx, &request, &s->process, &err) < 0) {
        s->process = NULL;
        fail_start(s, "the stripper could not be started: %s", err.message[0] ? err.message : "spawn failed");
        return;
    }
    struct ptc_loop *loop = &host->loop;
    struct dsh_process *p = s->process;
    ptc__control_init(&s->control, p->control_fd, (uint64_t)host->config.max_message_bytes);
    s->out_watch.fd = p->stdout_fd; /* closed by close_fds from here on */
    s->err_watch.fd = p->stderr_fd;
    s->state = STRIPPER_STARTING;
    if (ptc__watch_add(loop, &s->control_watch, p->control_fd, EPOLLIN, on_control) < 0 ||
        ptc__watch_add(loop, &s->out_watch, p->stdout_fd, EPOLLIN, on_stdout) < 0 ||
        ptc__watch_add(loop, &s->err_watch, p->stderr_fd, EPOLLIN, on_stderr) < 0 ||
        ptc__watch_add(loop, &s->quiescence_watch, p->quiescence_fd, EPOLLIN, on_quiescent) < 0) {
        fail_start(s, "the stripper could not be observed");
        return;
    }
    /* Requests made while it was confined: it reads them after its warm-up. */
    for (struct ptc_strip_request *r = s->pending; r; r = r->next)
        if (send_request(s, r) < 0) {
            lost(s, "the requests do not fit in the stripper's channel");
            return;
        }
}

static void after_confined(struct ptc_deferred *call)
{
    struct ptc_stripper *s = ptc__container_of(call, struct ptc_stripper, confined_call);
    if (s->state == STRIPPER_CLOSING) {
        ptc__defer(&s->host->loop, &s->free_call, free_when_done);
        return;
    }
    if (s->start_error)
        fail_start(s, "the stripper could not be started: %s", s->start_error);
    else if (s->confine_status < 0 || !s->confinement)
        fail_start(s, "the sandbox could not confine the stripper: %s",
                   dsh_strerror(s->confine_status ? s->confine_status : DSH_E_SANDBOX_UNAVAILABLE));
    else
        spawn_stripper(s);
}

static void on_confined(void *userdata, int status, struct dsh_confinement *confinement)
{
    struct ptc_stripper *s = userdata;
    s->confine_pending = false;
    s->confine_status = status;
    s->confinement = confinement;
    /* Possibly called from inside confine(): continue from the loop. */
    ptc__defer(&s->host->loop, &s->confined_call, after_confined);
}

/* Least recently used stripper that holds no request, if the set is full. */
static struct ptc_stripper *eviction_candidate(const struct ptc_strippers *set, bool *ret_full)
{
    struct ptc_stripper *oldest = NULL;
    unsigned alive = 0;
    for (struct ptc_stripper *s = set->head; s; s = s->next) {
        if (s->state == STRIPPER_CLOSING)
            continue;
        alive++;
        if (!s->pending && (!oldest || s->last_used < oldest->last_used))
            oldest = s;
    }
    *ret_full = alive >= PTC_STRIPPERS_MAX;
    return *ret_full ? oldest : NULL;
}

static struct ptc_stripper *start_stripper(struct ptc_strippers *set, const char *session_id)
{
    struct ptc_host *host = set->host;
    if (set->shutting_down || !host->language->stripper_argv)
        return NULL;
    bool full;
    struct ptc_stripper *evict = eviction_candidate(set, &full);
    if (full && !evict)
        return NULL; /* every stripper is busy: the child strips */
    if (evict)
        close_stripper(evict);
    struct ptc_stripper *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->set = set;
    s->host = host;
    s->control.fd = -1;
    s->out_watch.fd = s->err_watch.fd = -1;
    s->last_used = ++set->tick;
    s->session_id = strdup(session_id);
    if (!s->session_id || ptc__timer_init(&host->loop, &s->answer_timer, on_answer_timeout) < 0) {
        free(s->session_id);
        free(s);
        return NULL;
    }
    s->next = set->head;
    set->head = s;
    s->state = STRIPPER_CONFINING;

    char **argv = NULL, dir[PATH_MAX];
    struct dsh_error err = {0};
    if (host->language->stripper_argv(host, &argv, dir, sizeof dir, &err) < 0) {
        s->start_error = strdup(err.message);
        ptc__defer(&host->loop, &s->confined_call, after_confined);
        return s;
    }
    json_object *policy = json_object_new_object();
    json_object_object_add(policy, "mode", json_object_new_string("read-only"));
    json_object_object_add(policy, "workspaceRoot", json_object_new_string(dir));
    json_object_object_add(policy, "sessionId", json_object_new_string(session_id));
    s->policy_json = strdup(json_object_to_json_string_ext(policy, DSH_JSON_PRINT_FLAGS));
    json_object_put(policy);
    const struct dsh_sandbox_service *sb = host->services.sandbox;
    int rc = s->policy_json ? 0 : -ENOMEM;
    if (rc == 0) {
        s->confine_pending = true;
        rc = sb->confine(sb->ctx, (const char *const *)argv, s->policy_json, strlen(s->policy_json), on_confined, s,
                         &s->confine_op);
    }
    dsh_strv_free(argv);
    if (rc < 0) {
        s->confine_pending = false;
        s->confine_status = rc;
        ptc__defer(&host->loop, &s->confined_call, after_confined);
    }
    return s;
}

/* ---- the set ------------------------------------------------------------------------------- */

void ptc__strippers_init(struct ptc_strippers *set, struct ptc_host *host)
{
    *set = (struct ptc_strippers){.host = host};
}

void ptc__strippers_prestart(struct ptc_strippers *set)
{
    const struct dsh_sandbox_policy_service *svc = set->host->services.sandbox_policy;
    if (!set->host->language->stripper_argv || !svc)
        return;
    char text[4096];
    int n = svc->resolve(svc->ctx, NULL, text, sizeof text);
    json_object *policy = n > 0 && (size_t)n < sizeof text ? dsh_json_parse_strict(text, (size_t)n) : NULL;
    const char *session = dsh_json_get_text(policy, "sessionId");
    if (!session)
        session = "";
    start_stripper(set, session);
    json_object_put(policy);
}

static struct ptc_stripper *find(const struct ptc_strippers *set, const char *session_id)
{
    for (struct ptc_stripper *s = set->head; s; s = s->next)
        if (s->state != STRIPPER_CLOSING && strcmp(s->session_id, session_id) == 0)
            return s;
    return NULL;
}

struct ptc_strip_request *ptc__strip_request(struct ptc_strippers *set, const char *session_id, const char *format,
                                             const char *program, ptc_strip_done_fn done, void *arg)
{
    size_t len = strlen(program);
    /* A program whose request could not be one frame is stripped by the child. */
    if (len + 256 > (uint64_t)set->host->config.max_message_bytes)
        return NULL;
    struct ptc_stripper *s = find(set, session_id);
    if (!s && !(s = start_stripper(set, session_id)))
        return NULL;
    struct ptc_strip_request *r = calloc(1, sizeof *r);
    if (!r || !(r->source = strdup(program)) || !(r->format = strdup(format))) {
        if (r)
            free_request(r);
        return NULL;
    }
    r->len = len;
    r->owner = s;
    r->id = ++s->next_id;
    r->done = done;
    r->arg = arg;
    /* A stripper still confining gets it once spawned; one starting reads it after its warm-up. */
    if (s->process && send_request(s, r) < 0) {
        free_request(r);
        return NULL;
    }
    struct ptc_strip_request **tail = &s->pending;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    if (!s->pending->next)
        ptc__timer_arm(&s->answer_timer, PTC_STRIPPER_ANSWER_MS);
    s->last_used = ++set->tick;
    return r;
}

bool ptc__strip_imminent(const struct ptc_strip_request *request)
{
    return request->settled || request->owner->state == STRIPPER_READY;
}

unsigned ptc__strippers_ready(const struct ptc_strippers *set)
{
    unsigned n = 0;
    for (const struct ptc_stripper *s = set->head; s; s = s->next)
        n += s->state == STRIPPER_READY;
    return n;
}

void ptc__strip_cancel(struct ptc_strip_request *request)
{
    if (request)
        request->done = NULL;
}

void ptc__strippers_shutdown(struct ptc_strippers *set)
{
    set->shutting_down = true;
    for (struct ptc_stripper *s = set->head; s; s = s->next)
        close_stripper(s);
}

bool ptc__strippers_closing(const struct ptc_strippers *set)
{
    return set->head != NULL;
}

void ptc__strippers_destroy_all(struct ptc_strippers *set)
{
    while (set->head)
        destroy(set->head);
}
