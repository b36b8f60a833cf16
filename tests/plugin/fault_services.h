/* Fault-injection double of the host's services (subprocess, sandbox, sandboxPolicy, fs) for the
 * plugin's state-machine tests. No process is started: spawn() hands the plugin the host ends of a
 * real socketpair, two real pipes and an eventfd, and the test plays the child on the other ends.
 * A type stripper (bootstrap/stripper.js) is never confined: its confine() fails.
 * Each fault a real backend produces only rarely (a confinement that is still pending, a failed
 * spawn, a range that can no longer be observed) is switched on by a field below. */
#ifndef FAULT_SERVICES_H
#define FAULT_SERVICES_H

#include "dsh_services.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The double's own checks: a broken one prints why and aborts (no test framework needed, so the
 * fuzz targets of tests/fuzz link it too). */
#define FAULT_REQUIRE(cond, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fault_services: ");                                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* One spawned "process": the child's ends. */
struct fault_child {
    int control_fd; /* the child's end of the control socketpair (non-blocking) */
    int stdout_fd, stderr_fd; /* write ends */
    struct dsh_process process;
    bool terminated, quiescent, released, frozen;
    char pending[65536]; /* bytes read from the control channel, not yet a whole line */
    size_t pending_len;
};

#define FAULT_MAX_CHILDREN 16

struct fault_services {
    struct dsh_fs_service fs;
    struct dsh_sandbox_service sandbox;
    struct dsh_subprocess_service subprocess;
    struct dsh_sandbox_policy_service policy;
    struct dsh_logger logger;
    struct dsh_services bundle;

    /* faults */
    bool hold_confine;         /* confine() stays pending until fault_complete_confine() */
    int confine_status;        /* < 0: confinement fails with this status */
    int spawn_status;          /* < 0: spawn() fails with this status */
    bool hold_quiescence;      /* terminate() does not end the range until fault_end_range() */
    bool lose_range;           /* poll_quiescent() reports DSH_E_CLEANUP_FAILED */
    bool can_freeze;           /* freeze() works (otherwise DSH_E_UNSUPPORTED, as without a cgroup) */
    int freeze_polls_pending;  /* freeze() reports "still freezing" this many times first */
    uint32_t oom_kills;        /* usage() (ABI 1.3) counts this many kills at the memory limit */

    /* what the plugin did */
    int confines, spawns, terminates, releases, freezes;
    uint64_t freeze_ns[128]; /* CLOCK_MONOTONIC of the first 128 freeze() calls */
    uint64_t last_freeze_ns; /* and of the latest */
    int warnings;           /* messages logged at DSH_LOG_WARN or above */
    char last_warning[512]; /* the latest of them */
    bool confine_pending, confine_cancelled;
    dsh_confined_fn on_confined;
    void *confined_userdata;
    struct fault_child children[FAULT_MAX_CHILDREN];
    int n_children;

    /* sandboxPolicy */
    char mode[32];
    char workspace_root[256];
    dsh_mode_change_fn on_change;
    void *change_userdata;
};

void fault_services_init(struct fault_services *f, const char *workspace_root);
/* A workspace directory of this process, made on first use and removed at exit: the policy's root
 * must exist and may not be a shared directory like /tmp under workspace-write (resolve refuses
 * it). */
const char *fault_workspace(void);
void fault_services_destroy(struct fault_services *f);
/* Completes a held confine() with status (0: a confinement). */
void fault_complete_confine(struct fault_services *f, int status);
/* The range of child ends now: pipes and control close, the quiescence fd becomes readable. */
void fault_end_range(struct fault_services *f, struct fault_child *child);
/* Commits a new mode for the default session and tells the subscriber. */
void fault_change_mode(struct fault_services *f, const char *mode);

/* The child side. */
void fault_child_send(struct fault_child *child, const char *line);
/* The next whole control line the plugin sent (malloc'd), or NULL when none is complete yet: the
 * plugin writes only inside dispatch(), so the test pumps the loop until one is. */
char *fault_child_take_line(struct fault_child *child);

#endif
