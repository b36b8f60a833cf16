/* The network allow-list, library side (net_allow.h). */
#include "net_allow.h"
#include "datagram.h"
#include "egress_protocol.h"
#include "net_policy.h"
#include "dsh_strv.h"

#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READY_TIMEOUT_MS 5000 /* the proxy's start-up: an exec and a few sockets */
#define RUN_DATAGRAM_DESTINATIONS 32 /* refused UDP destinations listed per run; the rest omitted */
#define DRAIN_BUDGET 1024 /* datagrams read per report: the watch's queue holds a few hundred */

/* What an entry open when the current run began had carried by then (its serial says which
 * decision: the proxy may reuse the entry once it closed). */
struct run_base {
    uint32_t serial;
    uint64_t sent, received;
};

/* Datagrams of the current run to one destination (all refused). */
struct run_datagrams {
    uint32_t destination; /* IPv4, host byte order */
    uint16_t port;
    uint64_t bytes;
};

struct dshx__egress {
    pid_t pid;
    int control_fd;
    int watch_fd; /* the range's UDP datagrams but the resolver's (the proxy's packet socket) */
    struct dshx__egress_ledger *ledger;
    uint32_t run_start; /* the ledger's period_start, as written here */
    uint32_t base_refused, base_omitted;
    struct run_base base[DSHX_EGRESS_LEDGER_ENTRIES];
    struct run_datagrams datagrams[RUN_DATAGRAM_DESTINATIONS];
    uint32_t ndatagrams, datagrams_refused, datagrams_omitted;
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

/* The ready record and the datagram watch that comes with it (SCM_RIGHTS); any other fd that came
 * is closed. */
static ssize_t receive_ready(int fd, struct dshx__egress_ready *ready, int *ret_watch)
{
    struct iovec iov = {.iov_base = ready, .iov_len = sizeof(*ready)};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
            int got;
            struct stat st;
            memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (*ret_watch < 0 && fstat(got, &st) == 0 && S_ISSOCK(st.st_mode))
                *ret_watch = got;
            else
                close(got);
        }
    }
    return n;
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
    if (e)
        e->watch_fd = -1;
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
                n = receive_ready(e->control_fd, &ready, &e->watch_fd);
            break;
        }
        if (n != (ssize_t)sizeof(ready) || ready.magic != DSHX_EGRESS_READY_MAGIC || ready.error || e->watch_fd < 0 ||
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
    if (e->watch_fd >= 0)
        close(e->watch_fd);
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

/* Reads the datagrams the range sent since the last look (never waits: the kernel queued each one
 * before the program's send returned) into the current run's list. */
static void drain_watch(struct dshx__egress *e)
{
    for (int budget = DRAIN_BUDGET; budget > 0; budget--) {
        unsigned char buf[DSHX_DATAGRAM_CAPTURE];
        struct sockaddr_ll from;
        socklen_t fromlen = sizeof(from);
        ssize_t n = recvfrom(e->watch_fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from,
                             &fromlen);
        if (n < 0)
            break;
        struct dshx__datagram d;
        if (from.sll_pkttype != PACKET_HOST ||
            dshx__datagram_parse(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf), (size_t)n, &d) < 0)
            continue;
        e->datagrams_refused++;
        uint32_t i = 0;
        while (i < e->ndatagrams && (e->datagrams[i].destination != d.destination || e->datagrams[i].port != d.port))
            i++;
        if (i == e->ndatagrams && i == RUN_DATAGRAM_DESTINATIONS) {
            e->datagrams_omitted++;
            continue;
        }
        if (i == e->ndatagrams)
            e->datagrams[e->ndatagrams++] = (struct run_datagrams){d.destination, d.port, 0};
        e->datagrams[i].bytes += d.payload;
    }
    /* What the watch's full queue dropped is refused all the same, and not listed. */
    struct tpacket_stats stats;
    socklen_t len = sizeof(stats);
    if (getsockopt(e->watch_fd, SOL_PACKET, PACKET_STATISTICS, &stats, &len) == 0) {
        e->datagrams_refused += stats.tp_drops;
        e->datagrams_omitted += stats.tp_drops;
    }
}

void dshx__egress_begin_run(struct dshx__egress *e)
{
    struct dshx__egress_ledger *l = e->ledger;
    drain_watch(e); /* the run before's, reported or not: not this one's */
    e->ndatagrams = e->datagrams_refused = e->datagrams_omitted = 0;
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

/* A datagram's destination: the name of a synthetic address (the proxy's table), else the address. */
static void destination_text(const struct dshx__egress *e, uint32_t address, char out[256])
{
    uint32_t i = address & 0xffffu;
    if ((address & 0xffff0000u) == DSHX_EGRESS_SYNTH_NET && i >= 1 && i <= DSHX_EGRESS_NAMES) {
        memcpy(out, e->ledger->names[i - 1], 256);
        out[255] = '\0';
        if (out[0])
            return;
    }
    struct in_addr in = {.s_addr = htonl(address)};
    inet_ntop(AF_INET, &in, out, 256);
}

struct report {
    json_object *list;
    char diagnostic[512];
    size_t dlen;
};

static void report_connection(struct report *r, const char *host, unsigned port, unsigned reason, uint64_t sent,
                              uint64_t received, bool open)
{
    const char *why = reason < DSHX_EGRESS_REASON_COUNT ? reason_texts[reason] : "refused";
    json_object *c = json_object_new_object();
    json_object_object_add(c, "host", json_object_new_string(host));
    json_object_object_add(c, "port", json_object_new_int((int)port));
    json_object_object_add(c, "verdict", json_object_new_string(reason == DSHX_EGRESS_OK ? "allowed" : "refused"));
    if (reason != DSHX_EGRESS_OK) {
        json_object_object_add(c, "reason", json_object_new_string(why));
        const char *lead = r->dlen ? "; " : "the sandbox refused network access to ";
        size_t room = sizeof(r->diagnostic) - r->dlen;
        int w = port ? snprintf(r->diagnostic + r->dlen, room, "%s%s:%u (%s)", lead, host, port, why)
                     : snprintf(r->diagnostic + r->dlen, room, "%s%s (%s)", lead, host, why);
        if (w > 0 && (size_t)w < room)
            r->dlen += (size_t)w;
    }
    json_object_object_add(c, "bytesSent", json_object_new_int64((int64_t)sent));
    json_object_object_add(c, "bytesReceived", json_object_new_int64((int64_t)received));
    if (open)
        json_object_object_add(c, "open", json_object_new_boolean(true));
    json_object_array_add(r->list, c);
}

json_object *dshx__egress_report(struct dshx__egress *e)
{
    struct report r = {.list = json_object_new_array()};
    json_object *o = json_object_new_object();
    struct dshx__egress_entry *entries = malloc(sizeof(*entries) * DSHX_EGRESS_LEDGER_ENTRIES);
    if (!o || !r.list || !entries) {
        json_object_put(o);
        json_object_put(r.list);
        free(entries);
        return NULL;
    }
    drain_watch(e);
    uint32_t count = __atomic_load_n(&e->ledger->count, __ATOMIC_ACQUIRE);
    if (count > DSHX_EGRESS_LEDGER_ENTRIES)
        count = DSHX_EGRESS_LEDGER_ENTRIES;
    /* In the order of the decisions (an entry is reused once its run has been reported). */
    uint32_t order[DSHX_EGRESS_LEDGER_ENTRIES], serial[DSHX_EGRESS_LEDGER_ENTRIES], n = 0;
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
    for (uint32_t k = 0; k < n; k++) {
        const struct dshx__egress_entry *en = &entries[order[k]];
        report_connection(&r, en->name, en->port, en->reason, en->bytes_sent, en->bytes_received, en->open);
    }
    free(entries);
    for (uint32_t i = 0; i < e->ndatagrams; i++) {
        char host[256];
        destination_text(e, e->datagrams[i].destination, host);
        report_connection(&r, host, e->datagrams[i].port, DSHX_EGRESS_UDP, e->datagrams[i].bytes, 0, false);
    }
    uint32_t refused = __atomic_load_n(&e->ledger->refused, __ATOMIC_ACQUIRE) - e->base_refused;
    uint32_t omitted = __atomic_load_n(&e->ledger->omitted, __ATOMIC_ACQUIRE) - e->base_omitted;
    json_object_object_add(o, "mode", json_object_new_string("allow-list"));
    json_object_object_add(o, "connections", r.list);
    json_object_object_add(o, "refused", json_object_new_int64((int64_t)refused + e->datagrams_refused));
    json_object_object_add(o, "omitted", json_object_new_int64((int64_t)omitted + e->datagrams_omitted));
    if (r.dlen)
        json_object_object_add(o, "diagnostic", json_object_new_string(r.diagnostic));
    return o;
}
