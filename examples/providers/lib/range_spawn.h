/* Managed process ranges (range_spawn.c): the session group and the start of a range. */
#ifndef DSHX_RANGE_SPAWN_H
#define DSHX_RANGE_SPAWN_H

#include "services_config.h"

#include <stdbool.h>
#include <stdint.h>

struct dshx__range_cgroup;

struct dshx__range {
    struct dsh_process pub; /* first: the handle the host sees */
    int cmd_fd;             /* seqpacket to the supervisor: terminate in, status out */
    struct dshx__range_cgroup *cgroup; /* the range's own cgroup (range_cgroup.c), or NULL */
    bool freeze_sent;
    bool in_pid_ns;
    bool reaped;
    bool have_status;
    bool terminate_sent;
    uint32_t terminate_grace;
    struct dsh_exit_status status;
};

/* The session group of a services instance (range_cgroup.h) with cfg's totals written; *ret NULL
 * where no range cgroup can be made here. Fails when a total whose controller the report counted
 * cannot be set. */
int dshx__range_session_create(const struct dshx__config *cfg, struct dshx__range_cgroup **ret_session,
                               struct dsh_error *ret_error);

/* Starts a range; its cgroup is made in session (NULL: the range has none). */
int dshx__range_spawn(const struct dshx__config *cfg, const struct dshx__range_cgroup *session,
                      const struct dsh_spawn_request *request, struct dshx__range **ret_range,
                      struct dsh_error *ret_error);

#endif /* DSHX_RANGE_SPAWN_H */
