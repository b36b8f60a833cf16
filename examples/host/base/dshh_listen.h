/* Listening sockets of dsh (dshh_listen.c): `127.0.0.1:PORT`, `[::1]:PORT`, `HOST:PORT` with a
 * numeric HOST (or `localhost`), `unix:PATH`. examples/host/README.md, "Listening". */
#ifndef DSHH_LISTEN_H
#define DSHH_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct dshh_listen_addr {
    struct sockaddr_storage sa;
    socklen_t len;
    bool unix_socket;
    bool loopback;   /* 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104, or a Unix socket */
    char text[160];  /* as given, for messages */
    dev_t file_dev;  /* a Unix socket's file once dshh__listen_open made it */
    ino_t file_ino;
};

/* Parses text; -EINVAL with a sentence in why when it is no address of the forms above. */
int dshh__listen_parse(const char *text, struct dshh_listen_addr *a, char *why, size_t why_len);
/* A non-blocking, close-on-exec socket listening on a. A Unix socket is created with mode 0600
 * (only dsh's user may connect); a stale socket file at its path (nothing listens) is replaced,
 * any other file refused. Returns the fd, or -errno with a sentence in why. */
int dshh__listen_open(struct dshh_listen_addr *a, char *why, size_t why_len);
/* The TCP port fd listens on (the one the kernel chose for port 0), or -errno. */
int dshh__listen_port(int fd);
/* Closes fd; for a Unix socket also removes its file if it is still the one dsh made. */
void dshh__listen_close(const struct dshh_listen_addr *a, int fd);

#endif
