/* Messages between the host (range_spawn.c, subprocess_service.c) and dsh-range-supervisor over a
 * SOCK_SEQPACKET pair: one fixed-size record per packet. The supervisor's end is fd 4. */
#ifndef DSHX_SUPERVISOR_PROTOCOL_H
#define DSHX_SUPERVISOR_PROTOCOL_H

#include <stdint.h>

enum {
    DSHX_SUP_STARTED = 1,     /* supervisor -> host: the program was exec'd */
    DSHX_SUP_EXEC_FAILED = 2, /* supervisor -> host: a = errno of execve */
    DSHX_SUP_EXITED = 3,    /* supervisor -> host: the range is empty; a/b/c = exited/code/signal */
    DSHX_SUP_TERMINATE = 4, /* host -> supervisor: a = grace in ms (0 = SIGKILL now) */
};

struct dshx__sup_msg {
    uint32_t type;
    int32_t a;
    int32_t b;
    int32_t c;
};

#define DSHX_SUP_FD_CMD 4

#endif /* DSHX_SUPERVISOR_PROTOCOL_H */
