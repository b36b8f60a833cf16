/* dsh-egress-proxy: the host side of a restricted run's network allow-list.
 *
 *   dsh-egress-proxy [--allow PATTERN]... [--deny PATTERN]... [--override NAME]...
 *                    [--allow-private]
 *
 * Started by the services library for one confinement (fds: shared/egress_protocol.h). It makes
 * the range's network namespace (loopback only), opens in it the resolver (UDP 127.0.0.1:53)
 * and one TCP listener per permitted port (on every address of the namespace), returns to the
 * host's namespace and reports ready with the fd that holds the range's namespace, which the
 * launcher joins. Sockets keep the namespace they were made in, so the program reaches these
 * listeners and nothing else, and the proxy, out of the program's reach, serves them:
 *
 * - a question for a name the policy permits is resolved here (the host's resolver; an
 *   --override name is 127.0.0.1 and exempt from the private-address rule), every address is
 *   checked (dshx__net_address_private), and the program gets a synthetic address 127.77.x.y of
 *   this name; any other name gets NXDOMAIN;
 * - a connection is accepted on its port; the address it was made to names the host (an address
 *   the resolver never gave is refused: an IP literal); the port is checked for that name; the
 *   proxy connects to the addresses it resolved itself, reads the program's first bytes and
 *   checks the TLS server name (or the HTTP Host header) equals the name; bytes that are neither
 *   pass only on a port named explicitly (not 80 or 443); then it relays both ways, counting.
 *
 * Every decision goes into the ledger (fd 4). A refused connection is reset. The proxy ends when
 * the library's end of fd 3 closes. Once its sockets exist it confines itself: Landlock, and no
 * capability left. */
#include "connect_head.h"
#include "datagram.h"
#include "dns_wire.h"
#include "egress_protocol.h"
#include "first_bytes.h"
#include "landlock_defs.h"
#include "landlock_probe.h"
#include "net_policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/capability.h>
#include <linux/if_packet.h>
#include <linux/securebits.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_NAMES   DSHX_EGRESS_NAMES
#define MAX_ADDRS   8
#define MAX_CONNS   256
#define RELAY_BUF   (64 * 1024)
#define SYNTH_NET   DSHX_EGRESS_SYNTH_NET
#define RESOLVERS   4  /* threads resolving names with the host's resolver, one name each at a time */
#define MAX_PARKED  64 /* questions waiting for their name's resolution */
#define RESOLVING   (-2) /* lookup(): a resolver thread has the name */

struct name {
    char text[DSHX_NET_NAME_MAX + 1];
    int reason; /* OK once resolved; else why the resolver refused it */
    bool resolving;        /* a resolver thread has it: no answer yet */
    bool logged;           /* a refused name's refusal is in the ledger for the run that began ... */
    uint32_t logged_start; /* ... at this period_start */
    struct sockaddr_storage addr[MAX_ADDRS];
    int naddr;
};

enum conn_state { PROXY_HEAD, CONNECTING, INSPECTING, RELAYING };

struct conn {
    int cfd, ufd;
    enum conn_state state;
    int name; /* index into names */
    uint16_t port;
    int next_addr;
    int entry; /* ledger entry, -1 when the ledger is full */
    unsigned char *c2u, *u2c;
    size_t c2u_len, u2c_len;
    bool c_eof, u_eof, c_shut, u_shut;
    bool via_proxy; /* came through the CONNECT port: answer 200 once connected */
    bool waiting;   /* its CONNECT head names a name being resolved */
    uint64_t sent, received;
};

static const char *const reason_texts[] = {
#define REASON_TEXT(name, text) text,
    DSHX_EGRESS_REASON_TABLE(REASON_TEXT)
#undef REASON_TEXT
};

static struct {
    struct dshx__net_pattern allow[DSHX_NET_MAX_PATTERNS], deny[DSHX_NET_MAX_PATTERNS];
    struct dshx__net_pattern override[DSHX_NET_MAX_PATTERNS];
    size_t nallow, ndeny, noverride;
    bool allow_private;
    uint16_t ports[DSHX_NET_MAX_PORTS];
    int nports;
    int listen_fd[DSHX_NET_MAX_PORTS];
    int dns_fd;
    int proxy_fd; /* the CONNECT port (HTTPS_PROXY) */
    uint16_t proxy_port;
    struct name *names;
    int nnames;
    struct conn *conns[MAX_CONNS];
    int nconns;
    struct dshx__egress_ledger *ledger;
    bool live[DSHX_EGRESS_LEDGER_ENTRIES]; /* the entry belongs to a connection */
    int resolver_fd[2];    /* SOCK_SEQPACKET: [0] the loop's end, [1] the resolver threads' */
    int queue[MAX_NAMES];  /* names waiting for a resolver thread (each name once) */
    int queue_head, queue_tail;
    int resolving;         /* names a resolver thread has now */
    struct parked_query {
        struct dshx__dns_query q;
        struct sockaddr_storage from;
        socklen_t fromlen;
    } parked[MAX_PARKED];
    int nparked;
    int watch_fd; /* the range's loopback: datagrams to anywhere but the resolver (the library's) */
} g;

static _Noreturn void usage(const char *why)
{
    fprintf(stderr, "dsh-egress-proxy: %s\n", why);
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *why = NULL;
        if (strcmp(argv[i], "--allow-private") == 0) {
            g.allow_private = true;
            continue;
        }
        if (i + 1 >= argc)
            usage("missing option value");
        struct dshx__net_pattern *list;
        size_t *n;
        if (strcmp(argv[i], "--allow") == 0)
            list = g.allow, n = &g.nallow;
        else if (strcmp(argv[i], "--deny") == 0)
            list = g.deny, n = &g.ndeny;
        else if (strcmp(argv[i], "--override") == 0)
            list = g.override, n = &g.noverride;
        else
            usage("bad option");
        if (*n >= DSHX_NET_MAX_PATTERNS || dshx__net_pattern_parse(argv[++i], &list[*n], &why) < 0)
            usage(why ? why : "too many patterns");
        if (list == g.override && (list[*n].wildcard || list[*n].port))
            usage("an override is a plain name");
        (*n)++;
    }
    if ((g.nports = dshx__net_ports(g.allow, g.nallow, g.ports)) < 0)
        usage("too many ports");
}

/* ---- ledger ---------------------------------------------------------------------------------- */

static uint32_t write_begin(struct dshx__egress_entry *e)
{
    uint32_t seq = e->seq;
    __atomic_store_n(&e->seq, seq + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return seq;
}

static void write_end(struct dshx__egress_entry *e, uint32_t seq)
{
    __atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}

static uint32_t take_serial(void)
{
    uint32_t serial = g.ledger->next_serial;
    __atomic_store_n(&g.ledger->next_serial, serial + 1, __ATOMIC_RELEASE);
    return serial;
}

/* An entry to write a decision into: an unused one, else the one that closed longest ago before
 * the current run began (its runs have had their report); -1 when every entry may still be
 * reported. */
static int free_entry(void)
{
    struct dshx__egress_ledger *l = g.ledger;
    if (l->count < DSHX_EGRESS_LEDGER_ENTRIES)
        return (int)l->count;
    uint32_t start = __atomic_load_n(&l->period_start, __ATOMIC_ACQUIRE);
    int oldest = -1;
    for (int i = 0; i < DSHX_EGRESS_LEDGER_ENTRIES; i++)
        if (!g.live[i] && l->entries[i].closed < start &&
            (oldest < 0 || l->entries[i].closed < l->entries[oldest].closed))
            oldest = i;
    return oldest;
}

/* A decision: its entry, or -1 when the ledger is full. A live entry (open) belongs to a
 * connection until its last ledger_update. */
static int ledger_add(const char *name, uint16_t port, int reason, bool open)
{
    struct dshx__egress_ledger *l = g.ledger;
    if (reason != DSHX_EGRESS_OK)
        __atomic_add_fetch(&l->refused, 1, __ATOMIC_RELEASE);
    int i = free_entry();
    if (i < 0) {
        __atomic_add_fetch(&l->omitted, 1, __ATOMIC_RELEASE);
        return -1;
    }
    struct dshx__egress_entry *e = &l->entries[i];
    uint32_t seq = write_begin(e);
    e->port = port;
    e->reason = (uint8_t)reason;
    e->open = open;
    e->serial = take_serial();
    e->closed = open ? UINT32_MAX : e->serial;
    e->bytes_sent = e->bytes_received = 0;
    snprintf(e->name, sizeof(e->name), "%s", name);
    write_end(e, seq);
    if ((uint32_t)i == l->count)
        __atomic_store_n(&l->count, (uint32_t)i + 1, __ATOMIC_RELEASE);
    g.live[i] = open;
    return i;
}

/* The connection's counts and verdict; closing, its last word: the entry is closed (reusable once
 * a later run began). */
static void ledger_update(struct conn *c, int reason, bool closing)
{
    if (c->entry < 0)
        return;
    struct dshx__egress_entry *e = &g.ledger->entries[c->entry];
    uint32_t seq = write_begin(e);
    if (reason != DSHX_EGRESS_OK && e->reason == DSHX_EGRESS_OK)
        __atomic_add_fetch(&g.ledger->refused, 1, __ATOMIC_RELEASE);
    e->reason = (uint8_t)reason;
    e->open = !closing && !(c->c_shut && c->u_shut) && reason == DSHX_EGRESS_OK;
    e->bytes_sent = c->sent;
    e->bytes_received = c->received;
    if (closing)
        e->closed = take_serial();
    write_end(e, seq);
    if (closing) {
        g.live[c->entry] = false;
        c->entry = -1;
    }
}

/* ---- the resolver ------------------------------------------------------------------------------ */

static int find_name(const char *text)
{
    for (int i = 0; i < g.nnames; i++)
        if (strcmp(g.names[i].text, text) == 0)
            return i;
    return -1;
}

static bool overridden(const char *text)
{
    for (size_t i = 0; i < g.noverride; i++)
        if (strcmp(g.override[i].name, text) == 0)
            return true;
    return false;
}

/* What a resolver thread found for a name: its addresses, or why the name is refused. */
struct resolution {
    int idx;
    int reason;
    int naddr;
    struct sockaddr_storage addr[MAX_ADDRS];
};

struct resolve_request {
    int idx;
    char text[DSHX_NET_NAME_MAX + 1];
};

/* Resolves a permitted name with the host's resolver (blocking: a resolver thread's work) and
 * checks every address. */
static void resolve_host(const char *text, struct resolution *r)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    r->naddr = 0;
    if (getaddrinfo(text, NULL, &hints, &res) != 0 || !res) {
        r->reason = DSHX_EGRESS_RESOLVE_FAILED;
        return;
    }
    r->reason = DSHX_EGRESS_OK;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
            a->ai_addrlen > sizeof(r->addr[0]))
            continue;
        /* Every address is checked: one private answer refuses the name (a rebinding answer
         * mixes a public and a private one). */
        if (!g.allow_private && dshx__net_address_private(a->ai_addr)) {
            r->reason = DSHX_EGRESS_PRIVATE_ADDRESS;
            r->naddr = 0;
            break;
        }
        if (r->naddr < MAX_ADDRS)
            memcpy(&r->addr[r->naddr++], a->ai_addr, a->ai_addrlen);
    }
    freeaddrinfo(res);
    if (r->reason == DSHX_EGRESS_OK && r->naddr == 0)
        r->reason = DSHX_EGRESS_RESOLVE_FAILED;
}

/* A resolver thread: one name at a time from the loop, its resolution back. The names and the
 * policy it reads are the loop's, fixed before the threads start; nothing else is shared. */
static void *resolver_thread(void *arg)
{
    (void)arg;
    struct resolve_request rq;
    while (recv(g.resolver_fd[1], &rq, sizeof(rq), 0) == (ssize_t)sizeof(rq)) {
        struct resolution r = {.idx = rq.idx};
        rq.text[sizeof(rq.text) - 1] = '\0';
        resolve_host(rq.text, &r);
        if (send(g.resolver_fd[1], &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
            break;
    }
    return NULL;
}

/* Hands the waiting names to idle resolver threads (at most RESOLVERS at once, so the loop's
 * writes never wait for room). */
static void dispatch_resolutions(void)
{
    while (g.resolving < RESOLVERS && g.queue_head != g.queue_tail) {
        struct resolve_request rq = {.idx = g.queue[g.queue_head]};
        g.queue_head = (g.queue_head + 1) % MAX_NAMES;
        snprintf(rq.text, sizeof(rq.text), "%s", g.names[rq.idx].text);
        if (send(g.resolver_fd[0], &rq, sizeof(rq), MSG_NOSIGNAL) != (ssize_t)sizeof(rq)) {
            g.names[rq.idx].reason = DSHX_EGRESS_RESOLVE_FAILED;
            g.names[rq.idx].resolving = false;
            continue;
        }
        g.resolving++;
    }
}

static int reason_of_verdict(enum dshx__net_verdict v)
{
    switch (v) {
    case DSHX_NET_OK:
        return DSHX_EGRESS_OK;
    case DSHX_NET_DENIED:
        return DSHX_EGRESS_DENIED;
    case DSHX_NET_PORT:
        return DSHX_EGRESS_PORT;
    default:
        return DSHX_EGRESS_NOT_ALLOWED;
    }
}

/* The index of name text once resolved and checked, RESOLVING while a resolver thread has it (its
 * first sight hands it to one), or -1 with why in *ret_reason; a name is refused by the policy
 * (verdict, without a port) or by its addresses, and each refused name is logged once per run. */
static int lookup(const char *text, int *ret_reason)
{
    int idx = find_name(text);
    if (idx < 0 && g.nnames >= MAX_NAMES) {
        ledger_add(text, 0, DSHX_EGRESS_TOO_MANY_NAMES, false);
        *ret_reason = DSHX_EGRESS_TOO_MANY_NAMES;
        return -1;
    }
    if (idx < 0) {
        idx = g.nnames++;
        struct name *n = &g.names[idx];
        memset(n, 0, sizeof(*n));
        snprintf(n->text, sizeof(n->text), "%s", text);
        /* Before the resolver can give this name's address out (the library reads it). */
        snprintf(g.ledger->names[idx], sizeof(g.ledger->names[idx]), "%s", text);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        n->reason = reason_of_verdict(dshx__net_decide(g.allow, g.nallow, g.deny, g.ndeny, text, 0));
        if (n->reason == DSHX_EGRESS_OK && overridden(text)) {
            struct sockaddr_in *sin = (struct sockaddr_in *)&n->addr[0];
            sin->sin_family = AF_INET;
            sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            n->naddr = 1;
        } else if (n->reason == DSHX_EGRESS_OK) {
            n->resolving = true;
            g.queue[g.queue_tail] = idx;
            g.queue_tail = (g.queue_tail + 1) % MAX_NAMES;
            dispatch_resolutions();
        }
    }
    struct name *n = &g.names[idx];
    if (n->resolving)
        return RESOLVING;
    uint32_t start = __atomic_load_n(&g.ledger->period_start, __ATOMIC_ACQUIRE);
    if (n->reason != DSHX_EGRESS_OK && (!n->logged || n->logged_start != start)) {
        ledger_add(text, 0, n->reason, false);
        n->logged = true;
        n->logged_start = start;
    }
    *ret_reason = g.names[idx].reason;
    return g.names[idx].reason == DSHX_EGRESS_OK ? idx : -1;
}

/* Answers a question, or parks it while its name resolves (SERVFAIL when the park is full: the
 * program's resolver asks again). */
static void answer_query(const struct dshx__dns_query *q, const struct sockaddr_storage *from, socklen_t fromlen)
{
    uint8_t out[DSHX_DNS_MAX_QUERY + 32];
    char text[DSHX_NET_NAME_MAX + 1];
    int rcode = DSHX_DNS_NXDOMAIN, idx = -1, reason;
    if (q->qclass != 1) {
        rcode = DSHX_DNS_REFUSED;
    } else if (dshx__net_name_normalize(q->name, strlen(q->name), text) == 0) {
        idx = lookup(text, &reason);
        if (idx == RESOLVING && g.nparked < MAX_PARKED) {
            g.parked[g.nparked++] = (struct parked_query){.q = *q, .from = *from, .fromlen = fromlen};
            return;
        }
        rcode = idx >= 0 ? DSHX_DNS_NOERROR
                : idx == RESOLVING || reason == DSHX_EGRESS_TOO_MANY_NAMES ? DSHX_DNS_SERVFAIL
                                                                          : DSHX_DNS_NXDOMAIN;
    }
    uint32_t synth = htonl(SYNTH_NET + (uint32_t)idx + 1);
    int a = rcode == DSHX_DNS_NOERROR && q->qtype == DSHX_DNS_TYPE_A;
    size_t n = dshx__dns_answer(q, rcode, a, (const uint8_t *)&synth, 60, out);
    (void)sendto(g.dns_fd, out, n, MSG_DONTWAIT, (const struct sockaddr *)from, fromlen);
}

static void on_dns(void)
{
    uint8_t msg[DSHX_DNS_MAX_QUERY + 1];
    struct sockaddr_storage from;
    socklen_t fromlen = sizeof(from);
    ssize_t len = recvfrom(g.dns_fd, msg, sizeof(msg), MSG_DONTWAIT, (struct sockaddr *)&from, &fromlen);
    struct dshx__dns_query q;
    if (len <= 0 || dshx__dns_parse_query(msg, (size_t)len, &q) < 0)
        return; /* not a query: no answer */
    answer_query(&q, &from, fromlen);
}

/* The name a synthetic address (host byte order) was given for, or -1: an address the resolver
 * never gave. */
static int name_of_address(uint32_t a)
{
    if ((a & 0xffff0000u) == SYNTH_NET && (a & 0xffffu) >= 1 && (int)(a & 0xffffu) <= g.nnames &&
        g.names[(a & 0xffffu) - 1].reason == DSHX_EGRESS_OK)
        return (int)(a & 0xffffu) - 1;
    return -1;
}

/* ---- connections ------------------------------------------------------------------------------- */

static void reset_close(int fd)
{
    if (fd < 0)
        return;
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd);
}

static void conn_free(int i, int reason)
{
    struct conn *c = g.conns[i];
    ledger_update(c, reason, true);
    if (reason != DSHX_EGRESS_OK) {
        reset_close(c->cfd);
        reset_close(c->ufd);
    } else {
        close(c->cfd);
        if (c->ufd >= 0)
            close(c->ufd);
    }
    free(c->c2u);
    free(c->u2c);
    free(c);
    g.conns[i] = g.conns[--g.nconns];
}

static void start_connect(struct conn *c)
{
    struct name *n = &g.names[c->name];
    while (c->next_addr < n->naddr) {
        struct sockaddr_storage sa = n->addr[c->next_addr++];
        socklen_t len;
        if (sa.ss_family == AF_INET) {
            ((struct sockaddr_in *)&sa)->sin_port = htons(c->port);
            len = sizeof(struct sockaddr_in);
        } else {
            ((struct sockaddr_in6 *)&sa)->sin6_port = htons(c->port);
            len = sizeof(struct sockaddr_in6);
        }
        int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        if (connect(fd, (struct sockaddr *)&sa, len) == 0 || errno == EINPROGRESS) {
            c->ufd = fd;
            c->state = CONNECTING;
            return;
        }
        close(fd);
    }
    c->ufd = -1;
}

static void on_accept(int li)
{
    int cfd = accept4(g.listen_fd[li], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0)
        return;
    uint16_t port = g.ports[li];
    struct sockaddr_in local;
    socklen_t len = sizeof(local);
    char addr_text[INET_ADDRSTRLEN] = "?";
    int idx = -1;
    if (getsockname(cfd, (struct sockaddr *)&local, &len) == 0 && local.sin_family == AF_INET) {
        inet_ntop(AF_INET, &local.sin_addr, addr_text, sizeof(addr_text));
        idx = name_of_address(ntohl(local.sin_addr.s_addr));
    }
    if (idx < 0 || g.nconns >= MAX_CONNS) {
        ledger_add(idx < 0 ? addr_text : g.names[idx].text, port,
                   idx < 0 ? DSHX_EGRESS_IP_LITERAL : DSHX_EGRESS_TOO_MANY_CONNECTIONS, false);
        reset_close(cfd);
        return;
    }
    int reason = reason_of_verdict(dshx__net_decide(g.allow, g.nallow, g.deny, g.ndeny, g.names[idx].text, port));
    struct conn *c = calloc(1, sizeof(*c));
    if (c && reason == DSHX_EGRESS_OK) {
        c->c2u = malloc(RELAY_BUF);
        c->u2c = malloc(RELAY_BUF);
    }
    if (!c || reason != DSHX_EGRESS_OK || !c->c2u || !c->u2c) {
        ledger_add(g.names[idx].text, port, c ? reason : DSHX_EGRESS_CONNECT_FAILED, false);
        if (c) {
            free(c->c2u);
            free(c->u2c);
        }
        free(c);
        reset_close(cfd);
        return;
    }
    c->cfd = cfd;
    c->name = idx;
    c->port = port;
    c->entry = ledger_add(g.names[idx].text, port, DSHX_EGRESS_OK, true);
    g.conns[g.nconns++] = c;
    start_connect(c);
    if (c->ufd < 0)
        conn_free(g.nconns - 1, DSHX_EGRESS_CONNECT_FAILED);
}

/* A connection to the CONNECT port: its request head decides the host (proxy_head). */
static void on_proxy_accept(void)
{
    int cfd = accept4(g.proxy_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0)
        return;
    struct conn *c = g.nconns < MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
    if (c) {
        c->c2u = malloc(RELAY_BUF);
        c->u2c = malloc(RELAY_BUF);
    }
    if (!c || !c->c2u || !c->u2c) {
        if (c) {
            free(c->c2u);
            free(c->u2c);
        }
        free(c);
        ledger_add("(proxy)", g.proxy_port, DSHX_EGRESS_TOO_MANY_CONNECTIONS, false);
        reset_close(cfd);
        return;
    }
    c->cfd = cfd;
    c->ufd = -1;
    c->entry = -1;
    c->state = PROXY_HEAD;
    c->via_proxy = true;
    g.conns[g.nconns++] = c;
}

/* Answers the CONNECT with a status line the program reads (the socket's buffer is empty: one
 * small write), then closes when status is not 200. */
static void proxy_answer(struct conn *c, int status, const char *host, uint16_t port, int reason)
{
    char text[640];
    int n = status == 200 ? snprintf(text, sizeof text, "HTTP/1.1 200 Connection established\r\n\r\n")
            : snprintf(text, sizeof text,
                       "HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n"
                       "the sandbox refused network access to %.256s:%u (%s)\n",
                       status, status == 403 ? "Forbidden" : status == 400 ? "Bad Request" : "Bad Gateway",
                       host, (unsigned)port, reason_texts[reason]);
    if (n > 0)
        (void)!write(c->cfd, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

/* The CONNECT head: the name (checked like a question), its port, then the connection as any
 * other, the first bytes checked against this name. Returns false when the connection ended. */
static bool proxy_head(int i)
{
    struct conn *c = g.conns[i];
    char raw[256], text[DSHX_NET_NAME_MAX + 1];
    uint16_t port = 0;
    size_t head = 0;
    enum dshx__connect_head r = dshx__connect_head_parse(c->c2u, c->c2u_len, raw, &port, &head);
    if (r == DSHX_CONNECT_MORE && !c->c_eof)
        return true;
    if (r != DSHX_CONNECT_OK) {
        proxy_answer(c, 400, "(malformed request)", 0, DSHX_EGRESS_UNNAMED);
        ledger_add("(proxy)", g.proxy_port, DSHX_EGRESS_UNNAMED, false);
        conn_free(i, DSHX_EGRESS_OK); /* an orderly close: the program reads the answer */
        return false;
    }
    int reason = DSHX_EGRESS_IP_LITERAL, idx = -1;
    if (dshx__net_name_normalize(raw, strlen(raw), text) == 0) {
        reason = reason_of_verdict(dshx__net_decide(g.allow, g.nallow, g.deny, g.ndeny, text, port));
        if (reason == DSHX_EGRESS_OK)
            idx = lookup(text, &reason); /* resolved and its addresses checked, or refused */
        else
            ledger_add(text, port, reason, false);
    } else {
        snprintf(text, sizeof text, "%.*s", (int)(sizeof text - 1), raw); /* the ledger shows a bounded copy */
        ledger_add(text, port, reason, false);
    }
    if (idx == RESOLVING) {
        c->waiting = true; /* on_resolved() asks again */
        return true;
    }
    if (idx < 0) {
        proxy_answer(c, 403, text, port, reason);
        conn_free(i, DSHX_EGRESS_OK);
        return false;
    }
    c->name = idx;
    c->port = port;
    c->entry = ledger_add(text, port, DSHX_EGRESS_OK, true);
    memmove(c->c2u, c->c2u + head, c->c2u_len - head); /* a ClientHello sent early stays */
    c->c2u_len -= head;
    start_connect(c);
    if (c->ufd < 0) {
        proxy_answer(c, 502, text, port, DSHX_EGRESS_CONNECT_FAILED);
        ledger_update(c, DSHX_EGRESS_CONNECT_FAILED, true);
        conn_free(i, DSHX_EGRESS_OK);
        return false;
    }
    return true;
}

/* The program's first bytes decide (TLS server name, HTTP Host): OK, -1 to wait, or a reason. */
static int inspect(struct conn *c)
{
    char raw[256], norm[DSHX_NET_NAME_MAX + 1];
    int is_tls;
    switch (dshx__first_bytes_inspect(c->c2u, c->c2u_len, raw, &is_tls)) {
    case DSHX_FIRST_MORE:
        return c->c2u_len >= DSHX_FIRST_BYTES_MAX || c->c_eof ? DSHX_EGRESS_UNNAMED : -1;
    case DSHX_FIRST_NAMED:
        if (dshx__net_name_normalize(raw, strlen(raw), norm) < 0 ||
            strcmp(norm, g.names[c->name].text) != 0)
            return is_tls ? DSHX_EGRESS_SNI_MISMATCH : DSHX_EGRESS_HOST_MISMATCH;
        return DSHX_EGRESS_OK;
    case DSHX_FIRST_OTHER:
        return c->port == 80 || c->port == 443 ? DSHX_EGRESS_NOT_TLS_OR_HTTP : DSHX_EGRESS_OK;
    default:
        return DSHX_EGRESS_UNNAMED;
    }
}

/* Writes what buf holds to fd (either direction of the relay), counting the bytes; a write error
 * ends both directions. */
static void relay_out(struct conn *c, int fd, unsigned char *buf, size_t *len, uint64_t *count)
{
    ssize_t n = write(fd, buf, *len);
    if (n > 0) {
        *count += (uint64_t)n;
        memmove(buf, buf + n, *len - (size_t)n);
        *len -= (size_t)n;
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        c->u_eof = c->c_eof = true;
        *len = 0;
    }
}

/* One step of a connection after poll; returns false when it ended. */
static bool step(int i, short crev, short urev)
{
    struct conn *c = g.conns[i];
    if (c->state == PROXY_HEAD) {
        if ((crev & (POLLIN | POLLHUP | POLLERR)) && c->c2u_len < DSHX_CONNECT_HEAD_MAX) {
            ssize_t n = read(c->cfd, c->c2u + c->c2u_len, DSHX_CONNECT_HEAD_MAX - c->c2u_len);
            if (n > 0)
                c->c2u_len += (size_t)n;
            else if (n == 0 || (errno != EAGAIN && errno != EINTR))
                c->c_eof = true;
        }
        if (!proxy_head(i))
            return false;
        if (c->state == PROXY_HEAD) {
            if (c->c_eof) {
                conn_free(i, DSHX_EGRESS_OK);
                return false;
            }
            return true;
        }
        return true; /* connecting now: the next poll says when */
    }
    if (c->state == CONNECTING) {
        if (!(urev & (POLLOUT | POLLERR | POLLHUP)))
            return true;
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
            close(c->ufd);
            start_connect(c);
            if (c->ufd < 0) {
                if (c->via_proxy)
                    proxy_answer(c, 502, g.names[c->name].text, c->port, DSHX_EGRESS_CONNECT_FAILED);
                conn_free(i, DSHX_EGRESS_CONNECT_FAILED);
                return false;
            }
            return true;
        }
        c->state = INSPECTING;
        urev = 0;
        if (c->via_proxy)
            proxy_answer(c, 200, "", 0, DSHX_EGRESS_OK);
    }
    /* program -> host */
    if ((crev & (POLLIN | POLLHUP | POLLERR)) && !c->c_eof && c->c2u_len < RELAY_BUF) {
        size_t room = RELAY_BUF - c->c2u_len;
        if (c->state == INSPECTING && room > DSHX_FIRST_BYTES_MAX - c->c2u_len)
            room = DSHX_FIRST_BYTES_MAX - c->c2u_len;
        ssize_t n = room ? read(c->cfd, c->c2u + c->c2u_len, room) : 0;
        if (n > 0)
            c->c2u_len += (size_t)n;
        else if (room && (n == 0 || (errno != EAGAIN && errno != EINTR)))
            c->c_eof = true;
    }
    if (c->state == INSPECTING) {
        int r = inspect(c);
        if (r > 0) {
            conn_free(i, r);
            return false;
        }
        if (r == DSHX_EGRESS_OK)
            c->state = RELAYING;
    }
    if (c->state == RELAYING && c->c2u_len > 0)
        relay_out(c, c->ufd, c->c2u, &c->c2u_len, &c->sent);
    if (c->state == RELAYING && c->c_eof && c->c2u_len == 0 && !c->u_shut) {
        shutdown(c->ufd, SHUT_WR);
        c->u_shut = true;
    }
    /* host -> program: also while inspecting (a server may speak first) */
    if ((urev & (POLLIN | POLLHUP | POLLERR)) && !c->u_eof && c->u2c_len < RELAY_BUF) {
        ssize_t n = read(c->ufd, c->u2c + c->u2c_len, RELAY_BUF - c->u2c_len);
        if (n > 0)
            c->u2c_len += (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            c->u_eof = true;
    }
    if (c->u2c_len > 0)
        relay_out(c, c->cfd, c->u2c, &c->u2c_len, &c->received);
    if (c->u_eof && c->u2c_len == 0 && !c->c_shut) {
        shutdown(c->cfd, SHUT_WR);
        c->c_shut = true;
    }
    if (c->c_eof && c->u_eof && c->u2c_len == 0 && (c->c2u_len == 0 || c->state != RELAYING)) {
        conn_free(i, c->state == RELAYING || c->sent || c->received ? DSHX_EGRESS_OK
                                                                     : DSHX_EGRESS_UNNAMED);
        return false;
    }
    ledger_update(c, DSHX_EGRESS_OK, false);
    return true;
}

/* Resolutions the threads finished: each name takes its addresses (or its refusal), and the
 * questions and CONNECT heads that waited for it are decided. */
static void on_resolved(void)
{
    struct resolution r;
    while (recv(g.resolver_fd[0], &r, sizeof(r), MSG_DONTWAIT) == (ssize_t)sizeof(r)) {
        g.resolving--;
        if (r.idx < 0 || r.idx >= g.nnames || !g.names[r.idx].resolving || r.naddr < 0 || r.naddr > MAX_ADDRS)
            continue;
        struct name *n = &g.names[r.idx];
        n->reason = r.reason;
        n->naddr = r.naddr;
        memcpy(n->addr, r.addr, sizeof(n->addr));
        n->resolving = false;
    }
    dispatch_resolutions();
    /* Whatever waited is asked again: answered now, or parked again (then at most as many). */
    int parked = g.nparked;
    struct parked_query waiting[MAX_PARKED];
    memcpy(waiting, g.parked, sizeof(waiting[0]) * (size_t)parked);
    g.nparked = 0;
    for (int i = 0; i < parked; i++)
        answer_query(&waiting[i].q, &waiting[i].from, waiting[i].fromlen);
    for (int i = g.nconns - 1; i >= 0; i--)
        if (g.conns[i]->state == PROXY_HEAD && g.conns[i]->waiting) {
            g.conns[i]->waiting = false;
            proxy_head(i);
        }
}

/* ---- start-up ---------------------------------------------------------------------------------- */

/* The ready record; once ready, with the datagram watch, which the library reads from then on. */
static void ready(int netns_fd, int error, const char *step)
{
    struct dshx__egress_ready r = {.magic = DSHX_EGRESS_READY_MAGIC, .netns_fd = netns_fd, .error = error,
                                   .proxy_port = g.proxy_port};
    snprintf(r.step, sizeof(r.step), "%s", step);
    struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control = {0};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (!error) {
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof(control.buf);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &g.watch_fd, sizeof(int));
    }
    (void)!sendmsg(DSHX_EGRESS_FD_CONTROL, &msg, MSG_NOSIGNAL);
    if (error)
        exit(1);
    close(g.watch_fd);
}

static int listen_on(int type, uint32_t addr, uint16_t port)
{
    int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr)};
    /* Not for the resolver's UDP port: a program's socket (it may bind UDP) cannot share it. */
    if (fd < 0 || (type == SOCK_STREAM && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) ||
        bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || (type == SOCK_STREAM && listen(fd, 128) < 0))
        return -1;
    return fd;
}

/* `local 0.0.0.0/0 dev lo`: every IPv4 address is the namespace's own, so whatever a program
 * sends, to an IP literal too, stays in the range and meets the proxy (a listener or the datagram
 * watch) instead of failing unseen with ENETUNREACH. */
static int route_every_address_here(int lo_index)
{
    struct {
        struct nlmsghdr nh;
        struct rtmsg rt;
        struct rtattr oif;
        int32_t index;
    } req = {
        .nh = {.nlmsg_len = sizeof(req), .nlmsg_type = RTM_NEWROUTE, .nlmsg_seq = 1,
               .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL},
        .rt = {.rtm_family = AF_INET, .rtm_table = RT_TABLE_LOCAL, .rtm_protocol = RTPROT_STATIC,
               .rtm_scope = RT_SCOPE_HOST, .rtm_type = RTN_LOCAL},
        .oif = {.rta_len = RTA_LENGTH(sizeof(int32_t)), .rta_type = RTA_OIF},
        .index = lo_index,
    };
    struct {
        struct nlmsghdr nh;
        struct nlmsgerr err;
    } ack;
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -1;
    ssize_t n = send(fd, &req, sizeof(req), 0) == (ssize_t)sizeof(req) ? recv(fd, &ack, sizeof(ack), 0) : -1;
    int err = n < (ssize_t)sizeof(ack) ? (n < 0 ? errno : EPROTO)
              : ack.nh.nlmsg_type != NLMSG_ERROR ? EPROTO
                                                 : -ack.err.error;
    close(fd);
    errno = err;
    return err ? -1 : 0;
}

/* A packet socket on the range's loopback that keeps the headers of each UDP datagram the range
 * sends, but the resolver's questions and answers. Every packet of the namespace passes loopback
 * once as received (PACKET_HOST; an IPv4 socket sees no outgoing copies), and the filter runs in
 * the kernel, so the relayed TCP bytes cost it nothing but the check. */
static int watch_datagrams(int lo_index)
{
    enum { ACCEPT = 15, DROP = 16 };
    static const struct sock_filter code[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_AD_OFF + SKF_AD_PKTTYPE),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_HOST, 0, DROP - 2),
        /* 2 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9), /* protocol */
        /* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, DROP - 4),
        /* 4 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 6), /* fragment offset */
        /* 5 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, DROP - 6, 0),
        /* 6 */ BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0), /* X = the IP header's length */
        /* 7 */ BPF_STMT(BPF_LD | BPF_H | BPF_IND, 0), /* source port */
        /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 53, 0, 11 - 9),
        /* 9 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 12), /* source address */
        /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, INADDR_LOOPBACK, DROP - 11, 0),
        /* 11 */ BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2), /* destination port */
        /* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 53, 0, ACCEPT - 13),
        /* 13 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16), /* destination address */
        /* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, INADDR_LOOPBACK, DROP - 15, 0),
        /* 15 */ BPF_STMT(BPF_RET | BPF_K, DSHX_DATAGRAM_CAPTURE),
        /* 16 */ BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = (struct sock_filter *)code};
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP), .sll_ifindex = lo_index};
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ||
        bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
        return -1;
    return fd;
}

static int make_namespace(void)
{
    int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (host < 0)
        ready(-1, errno, "open the host's network namespace");
    if (unshare(CLONE_NEWNET) < 0)
        ready(-1, errno, "unshare the network namespace");
    int range = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    if (range < 0 || s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        ready(-1, errno, "loopback");
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0 || ioctl(s, SIOCGIFINDEX, &ifr) < 0)
        ready(-1, errno, "loopback up");
    close(s);
    if (route_every_address_here(ifr.ifr_ifindex) < 0)
        ready(-1, errno, "route every address to loopback");
    if ((g.watch_fd = watch_datagrams(ifr.ifr_ifindex)) < 0)
        ready(-1, errno, "the datagram watch");
    if ((g.dns_fd = listen_on(SOCK_DGRAM, INADDR_LOOPBACK, 53)) < 0)
        ready(-1, errno, "the resolver's socket");
    for (int i = 0; i < g.nports; i++)
        if ((g.listen_fd[i] = listen_on(SOCK_STREAM, INADDR_ANY, g.ports[i])) < 0)
            ready(-1, errno, "a listener");
    /* The CONNECT port: 3128, or the next one no listener has. */
    for (g.proxy_port = 3128;; g.proxy_port++) {
        bool taken = false;
        for (int i = 0; i < g.nports; i++)
            taken |= g.ports[i] == g.proxy_port;
        if (!taken)
            break;
    }
    if ((g.proxy_fd = listen_on(SOCK_STREAM, INADDR_LOOPBACK, g.proxy_port)) < 0)
        ready(-1, errno, "the proxy port");
    if (setns(host, CLONE_NEWNET) < 0)
        ready(-1, errno, "return to the host's network namespace");
    close(host);
    return range;
}

/* Once its sockets exist the proxy needs to read (the resolver's configuration, NSS libraries)
 * and to connect out, nothing more: Landlock takes every right to write, make, remove or execute
 * a file and to bind a TCP port (no rule grants them), leaving reading everywhere. A kernel
 * without Landlock leaves it as it is (the program's own confinement needs Landlock anyway). */
static void confine_self(void)
{
    int abi = dshx__landlock_probe_abi();
    if (abi < 1)
        return;
    uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    uint64_t handled = read | LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                       LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                       LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                       LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                       LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                       LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2)
        handled |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
    struct dshx__landlock_ruleset_attr attr = {.handled_access_fs = handled};
    size_t size = sizeof(uint64_t);
    if (abi >= 4) {
        attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP;
        size = 2 * sizeof(uint64_t);
    }
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    int root = open("/", O_PATH | O_CLOEXEC);
    struct landlock_path_beneath_attr pb = {.allowed_access = read, .parent_fd = root};
    if (ruleset < 0 || root < 0 || syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0 ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
        ready(-1, errno, "confine the proxy (Landlock)");
    close(root);
    close(ruleset);
}

/* Nor does it need a capability once its sockets exist: root keeps none (bounding, ambient,
 * permitted, effective; exec could not give them back), so a proxy a program's bytes took over
 * holds nothing of root but the uid, which Landlock leaves reading files. */
static void drop_capabilities(void)
{
    (void)prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                                       SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0);
    for (int cap = 0; cap < 64 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
            ready(-1, errno, "drop the bounding set");
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[2] = {{0}};
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 || syscall(SYS_capset, &hdr, data) < 0)
        ready(-1, errno, "drop the capabilities");
}

/* After the confinement, which the threads inherit. */
static void start_resolvers(void)
{
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, g.resolver_fd) < 0)
        ready(-1, errno, "the resolvers' socket");
    pthread_attr_t attr;
    pthread_t thread;
    int err = pthread_attr_init(&attr);
    if (!err)
        err = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; !err && i < RESOLVERS; i++)
        err = pthread_create(&thread, &attr, resolver_thread, NULL);
    if (err)
        ready(-1, err, "a resolver thread");
    pthread_attr_destroy(&attr);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    parse_args(argc, argv);
    g.ledger = mmap(NULL, sizeof(*g.ledger), PROT_READ | PROT_WRITE, MAP_SHARED, DSHX_EGRESS_FD_LEDGER, 0);
    if (g.ledger != MAP_FAILED)
        g.ledger->next_serial = 1;
    g.names = calloc(MAX_NAMES, sizeof(*g.names));
    if (g.ledger == MAP_FAILED || !g.names)
        ready(-1, errno ? errno : ENOMEM, "the ledger");
    close(DSHX_EGRESS_FD_LEDGER);
    int range = make_namespace();
    confine_self();
    drop_capabilities();
    start_resolvers();
    ready(range, 0, "");
    static struct pollfd p[4 + DSHX_NET_MAX_PORTS + 2 * MAX_CONNS];
    for (;;) {
        int n = 0;
        p[n++] = (struct pollfd){.fd = DSHX_EGRESS_FD_CONTROL, .events = POLLIN};
        p[n++] = (struct pollfd){.fd = g.dns_fd, .events = POLLIN};
        p[n++] = (struct pollfd){.fd = g.resolver_fd[0], .events = POLLIN};
        for (int i = 0; i < g.nports; i++)
            p[n++] = (struct pollfd){.fd = g.listen_fd[i], .events = g.nconns < MAX_CONNS ? POLLIN : 0};
        p[n++] = (struct pollfd){.fd = g.proxy_fd, .events = g.nconns < MAX_CONNS ? POLLIN : 0};
        int base = n;
        for (int i = 0; i < g.nconns; i++) {
            struct conn *c = g.conns[i];
            short ce = 0, ue = 0;
            if (c->state == PROXY_HEAD) {
                ce = c->waiting ? 0 : POLLIN;
            } else if (c->state == CONNECTING) {
                ue = POLLOUT;
            } else {
                if (!c->c_eof && c->c2u_len < RELAY_BUF)
                    ce |= POLLIN;
                if (c->u2c_len)
                    ce |= POLLOUT;
                if (!c->u_eof && c->u2c_len < RELAY_BUF)
                    ue |= POLLIN;
                if (c->c2u_len && c->state == RELAYING)
                    ue |= POLLOUT;
            }
            /* A side with nothing to wait for is left out, or its HUP would spin the loop. */
            p[n++] = (struct pollfd){.fd = ce ? c->cfd : -1, .events = ce};
            p[n++] = (struct pollfd){.fd = ue ? c->ufd : -1, .events = ue};
        }
        if (poll(p, (nfds_t)n, -1) < 0) {
            if (errno == EINTR)
                continue;
            return 1;
        }
        if (p[0].revents)
            return 0; /* the library closed its end (or sent something it never sends) */
        /* Connections first: their indexes are those of this poll set. */
        for (int i = g.nconns - 1; i >= 0; i--) {
            short cr = p[base + 2 * i].revents, ur = p[base + 2 * i + 1].revents;
            if (cr || ur)
                step(i, cr, ur);
        }
        if (p[1].revents & POLLIN)
            on_dns();
        if (p[2].revents & POLLIN)
            on_resolved();
        for (int i = 0; i < g.nports; i++)
            if (p[3 + i].revents & POLLIN)
                on_accept(i);
        if (p[3 + g.nports].revents & POLLIN)
            on_proxy_accept();
    }
}
