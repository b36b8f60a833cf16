/* The network allow-list, library side (net_allow.h). */
#include "net_allow.h"
#include "egress_protocol.h"
#include "net_policy.h"
#include "dsh_strv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READY_TIMEOUT_MS 5000 /* the proxy's start-up: an exec and a few sockets */

/* What an entry open when the current run began had carried by then (its serial says which
 * decision: the proxy may reuse the entry once it closed). */
struct run_base {
    uint32_t serial;
    uint64_t sent, received;
};

struct dshx__egress {
    pid_t pid;
    int control_fd;
    struct dshx__egress_ledger *ledger;
    uint32_t run_start; /* the ledger's period_start, as written here */
    uint32_t base_refused, base_omitted;
    struct run_base base[DSHX_EGRESS_LEDGER_ENTRIES];
};

static const char *const reason_texts[] = {
#define REASON_TEXT(name, text) text,
    DSHX_EGRESS_REASON_TABLE(REASON_TEXT)
#undef REASON_TEXT
};

/* ---- the policy ---------------------------------------------------------------------------------- */

static int pattern_list(json_object *v, const char *field, bool plain, const char **out,
                        struct dsh_error *ret_error)
{
    if (!json_object_is_type(v, json_type_array))
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network.%s must be a list of strings", field);
    size_t n = json_object_array_length(v);
    if (n > DSHX_NET_MAX_PATTERNS)
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network.%s holds more than %d patterns",
                          field, DSHX_NET_MAX_PATTERNS);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        struct dshx__net_pattern p;
        const char *why = NULL;
        if (!json_object_is_type(e, json_type_string))
            return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network.%s must be a list of strings", field);
        const char *text = json_object_get_string(e);
        if (dshx__net_pattern_parse(text, &p, &why) < 0 || (plain && (p.wildcard || p.port)))
            return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network.%s: \"%.200s\" is refused: %s",
                              field, text, why ? why : "a plain host name is required here");
        out[i] = text;
    }
    out[n] = NULL;
    return 0;
}

int dshx__net_allow_parse(json_object *network, struct dshx__net_allow *ret, struct dsh_error *ret_error)
{
    memset(ret, 0, sizeof(*ret));
    if (!network)
        return 0;
    if (!json_object_is_type(network, json_type_object))
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network must be an object");
    bool have_mode = false;
    int rc = 0;
    json_object_object_foreach(network, key, v)
    {
        if (rc < 0)
            break;
        if (strcmp(key, "mode") == 0) {
            const char *m = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
            if (strcmp(m, "none") != 0 && strcmp(m, "allow-list") != 0)
                rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network.mode must be none or allow-list");
            ret->allow_list = strcmp(m, "allow-list") == 0;
            have_mode = true;
        } else if (strcmp(key, "allow") == 0) {
            rc = pattern_list(v, key, false, ret->allow, ret_error);
        } else if (strcmp(key, "deny") == 0) {
            rc = pattern_list(v, key, false, ret->deny, ret_error);
        } else if (strcmp(key, "resolverOverride") == 0) {
            rc = pattern_list(v, key, true, ret->override, ret_error);
        } else if (strcmp(key, "allowPrivateAddresses") == 0) {
            if (!json_object_is_type(v, json_type_boolean))
                rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID,
                                "policy network.allowPrivateAddresses must be a boolean");
            ret->allow_private = json_object_get_boolean(v);
        } else {
            rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network has an unknown key: %.64s", key);
        }
    }
    if (rc == 0 && !have_mode)
        rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network.mode is missing");
    struct dshx__net_pattern p[DSHX_NET_MAX_PATTERNS];
    size_t n = 0;
    for (; rc == 0 && ret->allow[n]; n++)
        dshx__net_pattern_parse(ret->allow[n], &p[n], &(const char *){NULL});
    uint16_t ports[DSHX_NET_MAX_PORTS];
    if (rc == 0 && dshx__net_ports(p, n, ports) < 0)
        rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy network.allow opens more than %d ports",
                        DSHX_NET_MAX_PORTS);
    return rc;
}

static json_object *string_array(const char *const *v)
{
    json_object *a = json_object_new_array();
    for (; a && v && *v; v++)
        json_object_array_add(a, json_object_new_string(*v));
    return a;
}

int dshx__net_allow_check_options(const char *mode, const char *const *allow, const char *const *deny,
                                  const char *const *override, struct dsh_error *ret_error)
{
    json_object *o = json_object_new_object();
    if (!o)
        return dshx__fail(ret_error, -ENOMEM, "out of memory");
    json_object_object_add(o, "mode", json_object_new_string(mode ? mode : "none"));
    json_object_object_add(o, "allow", string_array(allow));
    json_object_object_add(o, "deny", string_array(deny));
    json_object_object_add(o, "resolverOverride", string_array(override));
    struct dshx__net_allow parsed;
    struct dsh_error err = {0};
    int rc = dshx__net_allow_parse(o, &parsed, &err);
    json_object_put(o);
    if (rc < 0) /* "policy network.allow: ..." -> "network_allow: ..." for the options */
        return dshx__fail(ret_error, rc == -ENOMEM ? rc : DSH_E_CONFIG_INVALID, "option %s",
                          strncmp(err.message, "policy ", 7) == 0 ? err.message + 7 : err.message);
    return 0;
}

json_object *dshx__net_allow_policy_json(const struct dshx__config *cfg)
{
    if (!cfg->network_mode || strcmp(cfg->network_mode, "allow-list") != 0)
        return NULL;
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "mode", json_object_new_string("allow-list"));
    json_object_object_add(o, "allow", string_array((const char *const *)cfg->network_allow));
    json_object_object_add(o, "deny", string_array((const char *const *)cfg->network_deny));
    json_object_object_add(o, "allowPrivateAddresses", json_object_new_boolean(cfg->network_allow_private));
    if (cfg->network_override && cfg->network_override[0])
        json_object_object_add(o, "resolverOverride", string_array((const char *const *)cfg->network_override));
    return o;
}

/* ---- the proxy ----------------------------------------------------------------------------------- */

static int push_list(struct dsh_strv *sv, const char *opt, const char *const *v)
{
    int rc = 0;
    for (; rc == 0 && *v; v++)
        if ((rc = dsh_strv_push(sv, opt)) == 0)
            rc = dsh_strv_push(sv, *v);
    return rc;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *proxy_path(const struct dshx__config *cfg)
{
    const char *slash = strrchr(cfg->launcher_path, '/');
    char *path = NULL;
    if (asprintf(&path, "%.*s/dsh-egress-proxy", (int)(slash - cfg->launcher_path), cfg->launcher_path) < 0)
        return NULL;
    return path;
}

int dshx__egress_start(const struct dshx__config *cfg, const struct dshx__net_allow *policy,
                       struct dsh_strv *launcher_args, struct dsh_strv *env, struct dshx__egress **ret)
{
    /* The proxy makes the namespace without a user namespace and the launcher joins it by a
     * /proc path of the host's: both need root on the host. */
    if (!cfg->kernel.root || !cfg->kernel.namespaces) {
        dshx__log(cfg, DSH_LOG_ERROR, "sandbox unavailable: the network allow-list needs a root host with "
                                      "network namespaces");
        return DSH_E_SANDBOX_UNAVAILABLE;
    }
    struct dshx__egress *e = calloc(1, sizeof(*e));
    char *path = proxy_path(cfg);
    struct dsh_strv argv = {0};
    int sp[2] = {-1, -1}, ledger = -1, rc = e && path ? 0 : -ENOMEM;
    if (rc == 0)
        rc = dsh_strv_push(&argv, path);
    if (rc == 0)
        rc = push_list(&argv, "--allow", policy->allow);
    if (rc == 0)
        rc = push_list(&argv, "--deny", policy->deny);
    if (rc == 0)
        rc = push_list(&argv, "--override", policy->override);
    if (rc == 0 && policy->allow_private)
        rc = dsh_strv_push(&argv, "--allow-private");
    if (rc == 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
        rc = -errno;
    if (rc == 0 && ((ledger = memfd_create("dsh-egress-ledger", MFD_CLOEXEC)) < 0 ||
                    ftruncate(ledger, sizeof(struct dshx__egress_ledger)) < 0))
        rc = -errno;
    if (rc == 0 && (e->ledger = mmap(NULL, sizeof(*e->ledger), PROT_READ | PROT_WRITE, MAP_SHARED, ledger, 0)) == MAP_FAILED) {
        e->ledger = NULL;
        rc = -errno;
    }
    char **args = rc == 0 ? dsh_strv_finish(&argv) : NULL;
    if (rc == 0 && !args)
        rc = -ENOMEM;
    static char *const empty_env[] = {NULL};
    pid_t parent = getpid();
    if (rc == 0 && (e->pid = fork()) == 0) {
        /* Async-signal-safe only: the host may have threads. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(127);
        /* Both sources above the targets first, so no dup2 clobbers the other (and dup2 onto
         * a different fd clears close-on-exec); then no other host fd reaches the proxy. */
        int control = fcntl(sp[1], F_DUPFD_CLOEXEC, 16), led = fcntl(ledger, F_DUPFD_CLOEXEC, 16);
        if (control < 0 || led < 0 || dup2(control, DSHX_EGRESS_FD_CONTROL) < 0 ||
            dup2(led, DSHX_EGRESS_FD_LEDGER) < 0 || syscall(SYS_close_range, 5U, ~0U, 0U) < 0)
            _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(args[0], args, empty_env);
        _exit(127);
    }
    if (rc == 0 && e->pid < 0)
        rc = -errno;
    dsh_strv_free(args);
    dsh_strv_clear(&argv);
    free(path);
    if (sp[1] >= 0)
        close(sp[1]);
    if (ledger >= 0)
        close(ledger);
    if (e)
        e->control_fd = sp[0];
    else if (sp[0] >= 0)
        close(sp[0]);
    struct dshx__egress_ready ready = {0};
    if (rc == 0) {
        /* Waiting is on our own helper's start-up, never on the program or the network. */
        long long deadline = now_ms() + READY_TIMEOUT_MS;
        ssize_t n = -1;
        for (;;) {
            struct pollfd p = {.fd = e->control_fd, .events = POLLIN};
            long long left = deadline - now_ms();
            int r = poll(&p, 1, left > 0 ? (int)left : 0);
            if (r < 0 && errno == EINTR)
                continue;
            if (r > 0)
                n = recv(e->control_fd, &ready, sizeof(ready), MSG_DONTWAIT);
            break;
        }
        if (n != (ssize_t)sizeof(ready) || ready.magic != DSHX_EGRESS_READY_MAGIC || ready.error ||
            ready.netns_fd < 0 || ready.proxy_port <= 0 || ready.proxy_port > 65535) {
            ready.step[sizeof(ready.step) - 1] = '\0';
            dshx__log(cfg, DSH_LOG_ERROR, "sandbox unavailable: the egress proxy did not start: %s%s%s",
                      n == (ssize_t)sizeof(ready) ? ready.step : "no answer",
                      ready.error ? ": " : "", ready.error ? strerror(ready.error) : "");
            rc = DSH_E_SANDBOX_UNAVAILABLE;
        }
    }
    if (rc == 0)
        rc = dsh_strv_push(launcher_args, "--netns");
    if (rc == 0)
        rc = dsh_strv_pushf(launcher_args, "/proc/%d/fd/%d", (int)e->pid, (int)ready.netns_fd);
    struct dshx__net_pattern p[DSHX_NET_MAX_PATTERNS];
    size_t n = 0;
    for (; rc == 0 && policy->allow[n]; n++)
        dshx__net_pattern_parse(policy->allow[n], &p[n], &(const char *){NULL});
    uint16_t ports[DSHX_NET_MAX_PORTS];
    int nports = rc == 0 ? dshx__net_ports(p, n, ports) : 0;
    for (int i = 0; rc == 0 && i < nports; i++)
        if ((rc = dsh_strv_push(launcher_args, "--net-port")) == 0)
            rc = dsh_strv_pushf(launcher_args, "%u", (unsigned)ports[i]);
    /* Programs that honour HTTPS_PROXY (curl, pip, Python's urllib, git) use the CONNECT port;
     * the others resolve names through the range's resolver. */
    if (rc == 0 && (rc = dsh_strv_push(launcher_args, "--net-port")) == 0)
        rc = dsh_strv_pushf(launcher_args, "%d", (int)ready.proxy_port);
    if (rc == 0)
        rc = dsh_strv_pushf(env, "HTTPS_PROXY=http://127.0.0.1:%d", (int)ready.proxy_port);
    if (rc == 0)
        rc = dsh_strv_pushf(env, "https_proxy=http://127.0.0.1:%d", (int)ready.proxy_port);
    if (rc < 0) {
        dshx__egress_stop(e);
        return rc;
    }
    *ret = e;
    return 0;
}

void dshx__egress_stop(struct dshx__egress *e)
{
    if (!e)
        return;
    if (e->control_fd >= 0)
        close(e->control_fd);
    if (e->pid > 0) {
        kill(e->pid, SIGKILL);
        while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    if (e->ledger)
        munmap(e->ledger, sizeof(*e->ledger));
    free(e);
}

/* One entry as it stands, or false while the proxy writes it (the caller skips it this time). */
static bool read_entry(const struct dshx__egress_entry *src, struct dshx__egress_entry *out)
{
    for (int tries = 0; tries < 64; tries++) {
        uint32_t seq = __atomic_load_n(&src->seq, __ATOMIC_ACQUIRE);
        if (seq == 0)
            return false;
        if (seq & 1)
            continue;
        memcpy(out, src, sizeof(*out));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&src->seq, __ATOMIC_RELAXED) == seq) {
            out->name[sizeof(out->name) - 1] = '\0';
            return true;
        }
    }
    return false;
}

void dshx__egress_begin_run(struct dshx__egress *e)
{
    struct dshx__egress_ledger *l = e->ledger;
    e->run_start = __atomic_load_n(&l->next_serial, __ATOMIC_ACQUIRE);
    __atomic_store_n(&l->period_start, e->run_start, __ATOMIC_RELEASE);
    e->base_refused = __atomic_load_n(&l->refused, __ATOMIC_ACQUIRE);
    e->base_omitted = __atomic_load_n(&l->omitted, __ATOMIC_ACQUIRE);
    uint32_t count = __atomic_load_n(&l->count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < DSHX_EGRESS_LEDGER_ENTRIES; i++) {
        struct dshx__egress_entry en;
        bool open = i < count && read_entry(&l->entries[i], &en) && en.closed == UINT32_MAX;
        e->base[i] = open ? (struct run_base){en.serial, en.bytes_sent, en.bytes_received} : (struct run_base){0};
    }
}

/* The entry's part in the current run: false when it was decided and closed before the run. */
static bool in_run(const struct dshx__egress *e, uint32_t slot, struct dshx__egress_entry *en)
{
    if (en->serial >= e->run_start)
        return true;
    if (en->closed < e->run_start)
        return false;
    const struct run_base *b = &e->base[slot];
    if (b->serial == en->serial) {
        en->bytes_sent -= en->bytes_sent >= b->sent ? b->sent : en->bytes_sent;
        en->bytes_received -= en->bytes_received >= b->received ? b->received : en->bytes_received;
    }
    return true;
}

json_object *dshx__egress_report(const struct dshx__egress *e)
{
    json_object *o = json_object_new_object(), *list = json_object_new_array();
    if (!o || !list) {
        json_object_put(o);
        json_object_put(list);
        return NULL;
    }
    uint32_t count = __atomic_load_n(&e->ledger->count, __ATOMIC_ACQUIRE);
    if (count > DSHX_EGRESS_LEDGER_ENTRIES)
        count = DSHX_EGRESS_LEDGER_ENTRIES;
    /* In the order of the decisions (an entry is reused once its run has been reported). */
    uint32_t order[DSHX_EGRESS_LEDGER_ENTRIES], serial[DSHX_EGRESS_LEDGER_ENTRIES], n = 0;
    struct dshx__egress_entry *entries = malloc(sizeof(*entries) * DSHX_EGRESS_LEDGER_ENTRIES);
    if (!entries) {
        json_object_put(o);
        json_object_put(list);
        return NULL;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!read_entry(&e->ledger->entries[i], &entries[i]) || !in_run(e, i, &entries[i]))
            continue;
        uint32_t k = n++;
        for (; k > 0 && serial[k - 1] > entries[i].serial; k--) {
            serial[k] = serial[k - 1];
            order[k] = order[k - 1];
        }
        serial[k] = entries[i].serial;
        order[k] = i;
    }
    char diagnostic[512] = "";
    size_t dlen = 0;
    for (uint32_t k = 0; k < n; k++) {
        const struct dshx__egress_entry *en = &entries[order[k]];
        const char *reason = en->reason < DSHX_EGRESS_REASON_COUNT ? reason_texts[en->reason] : "refused";
        json_object *c = json_object_new_object();
        json_object_object_add(c, "host", json_object_new_string(en->name));
        json_object_object_add(c, "port", json_object_new_int(en->port));
        json_object_object_add(c, "verdict", json_object_new_string(en->reason == DSHX_EGRESS_OK ? "allowed" : "refused"));
        if (en->reason != DSHX_EGRESS_OK) {
            json_object_object_add(c, "reason", json_object_new_string(reason));
            const char *lead = dlen ? "; " : "the sandbox refused network access to ";
            int w = en->port ? snprintf(diagnostic + dlen, sizeof(diagnostic) - dlen, "%s%s:%u (%s)", lead,
                                        en->name, (unsigned)en->port, reason)
                             : snprintf(diagnostic + dlen, sizeof(diagnostic) - dlen, "%s%s (%s)", lead,
                                        en->name, reason);
            if (w > 0 && (size_t)w < sizeof(diagnostic) - dlen)
                dlen += (size_t)w;
        }
        json_object_object_add(c, "bytesSent", json_object_new_int64((int64_t)en->bytes_sent));
        json_object_object_add(c, "bytesReceived", json_object_new_int64((int64_t)en->bytes_received));
        if (en->open)
            json_object_object_add(c, "open", json_object_new_boolean(true));
        json_object_array_add(list, c);
    }
    free(entries);
    uint32_t refused = __atomic_load_n(&e->ledger->refused, __ATOMIC_ACQUIRE);
    uint32_t omitted = __atomic_load_n(&e->ledger->omitted, __ATOMIC_ACQUIRE);
    json_object_object_add(o, "mode", json_object_new_string("allow-list"));
    json_object_object_add(o, "connections", list);
    json_object_object_add(o, "refused", json_object_new_int64((int64_t)(refused - e->base_refused)));
    json_object_object_add(o, "omitted", json_object_new_int64((int64_t)(omitted - e->base_omitted)));
    if (dlen)
        json_object_object_add(o, "diagnostic", json_object_new_string(diagnostic));
    return o;
}
