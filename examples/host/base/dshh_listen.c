/* Listening sockets (dshh_listen.h): address parsing, the loopback test, Unix socket files that
 * only dsh's user can reach. */
#include "dshh_listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define BACKLOG 128

static int refuse(char *why, size_t why_len, int rc, const char *fmt, const char *arg)
{
    snprintf(why, why_len, fmt, arg);
    return rc;
}

static bool parse_port(const char *text, in_port_t *port)
{
    char *end;
    if (!*text || *text == '+' || *text == '-' || *text == ' ')
        return false;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || *end || v > 65535)
        return false;
    *port = htons((in_port_t)v);
    return true;
}

int dshh__listen_parse(const char *text, struct dshh_listen_addr *a, char *why, size_t why_len)
{
    *a = (struct dshh_listen_addr){0};
    if (strlen(text) >= sizeof a->text)
        return refuse(why, why_len, -EINVAL, "the address \"%.40s...\" is too long", text);
    strcpy(a->text, text);
    if (!strncmp(text, "unix:", 5)) {
        struct sockaddr_un *un = (struct sockaddr_un *)&a->sa;
        const char *path = text + 5;
        if (path[0] != '/')
            return refuse(why, why_len, -EINVAL, "unix:%s: the socket path must be absolute", path);
        if (strlen(path) >= sizeof un->sun_path)
            return refuse(why, why_len, -EINVAL, "unix:%s: the socket path is too long", path);
        un->sun_family = AF_UNIX;
        strcpy(un->sun_path, path);
        a->len = (socklen_t)sizeof *un;
        a->unix_socket = a->loopback = true;
        return 0;
    }
    char host[INET6_ADDRSTRLEN + 2];
    const char *colon = strrchr(text, ':');
    size_t hlen = colon ? (size_t)(colon - text) : 0;
    in_port_t port;
    if (!colon || hlen == 0 || hlen >= sizeof host || !parse_port(colon + 1, &port))
        return refuse(why, why_len, -EINVAL,
                      "\"%s\" is no address: use 127.0.0.1:PORT, [::1]:PORT or unix:PATH", text);
    memcpy(host, text, hlen);
    host[hlen] = '\0';
    if (!strcmp(host, "localhost"))
        strcpy(host, "127.0.0.1");
    struct sockaddr_in *in4 = (struct sockaddr_in *)&a->sa;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->sa;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = port;
        a->len = (socklen_t)sizeof *in4;
        a->loopback = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
        return 0;
    }
    if (hlen > 2 && host[0] == '[' && host[hlen - 1] == ']') {
        host[hlen - 1] = '\0';
        if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1) {
            in6->sin6_family = AF_INET6;
            in6->sin6_port = port;
            a->len = (socklen_t)sizeof *in6;
            const uint8_t *b = in6->sin6_addr.s6_addr;
            a->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
                          (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && b[12] == 127);
            return 0;
        }
    }
    return refuse(why, why_len, -EINVAL,
                  "\"%s\" is no address: the host must be a numeric IPv4 address, [IPv6] or "
                  "localhost",
                  text);
}

/* Whether something listens on the Unix socket at path. */
static bool socket_in_use(const struct dshh_listen_addr *a)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return true; /* cannot tell: leave the file alone */
    bool used = connect(fd, (const struct sockaddr *)&a->sa, a->len) == 0 || errno != ECONNREFUSED;
    close(fd);
    return used;
}

int dshh__listen_open(struct dshh_listen_addr *a, char *why, size_t why_len)
{
    int family = a->sa.ss_family, rc;
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return refuse(why, why_len, -errno, "cannot make a socket for %s", a->text);
    if (a->unix_socket) {
        const char *path = ((const struct sockaddr_un *)&a->sa)->sun_path;
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (!S_ISSOCK(st.st_mode)) {
                close(fd);
                return refuse(why, why_len, -EEXIST, "%s exists and is no socket", path);
            }
            if (socket_in_use(a)) {
                close(fd);
                return refuse(why, why_len, -EADDRINUSE, "another process listens on %s", path);
            }
            unlink(path);
        }
        /* Created 0600 from the start: no moment where another user could connect. */
        mode_t old = umask(0177);
        rc = bind(fd, (const struct sockaddr *)&a->sa, a->len);
        umask(old);
        if (rc == 0 && lstat(path, &st) == 0) {
            a->file_dev = st.st_dev;
            a->file_ino = st.st_ino;
        }
    } else {
        int on = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (family == AF_INET6)
            (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
        rc = bind(fd, (const struct sockaddr *)&a->sa, a->len);
    }
    if (rc < 0 || listen(fd, BACKLOG) < 0) {
        rc = -errno;
        close(fd);
        char text[200];
        snprintf(text, sizeof text, "cannot listen on %s: %s", a->text, strerror(-rc));
        return refuse(why, why_len, rc, "%s", text);
    }
    return fd;
}

int dshh__listen_port(int fd)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        return -errno;
    if (sa.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&sa)->sin_port);
    if (sa.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    return -EAFNOSUPPORT;
}

void dshh__listen_close(const struct dshh_listen_addr *a, int fd)
{
    struct stat now;
    const char *path = ((const struct sockaddr_un *)&a->sa)->sun_path;
    /* Another process may have replaced the file since: only dsh's own goes. */
    if (a->unix_socket && a->file_ino && lstat(path, &now) == 0 && now.st_ino == a->file_ino &&
        now.st_dev == a->file_dev)
        unlink(path);
    close(fd);
}
