/* One run: the per-call state machine from confinement to the delivered result.
 *
 *   CONFINING --confined--> STARTING --hello/run frame--> RUNNING --outcome--> CLOSING --> done
 *
 * Any phase can select an outcome (timeout, abort, protocol, ...). Selecting stops the deadline
 * and begins closing: terminate the managed range, wait for quiescence, drain the output pipes
 * (bounded by graceMs), then deliver the result exactly once. */
#ifndef PTC_RUN_H
#define PTC_RUN_H

#include "internal.h"

enum ptc_phase { PTC_CONFINING, PTC_STARTING, PTC_RUNNING, PTC_CLOSING };

struct ptc_pipe {
    struct ptc_watch watch;
    struct ptc_run *run;
    bool is_stderr;
    bool eof;
    unsigned char partial[4]; /* an incomplete UTF-8 sequence carried to the next read */
    size_t partial_len;
};

struct ptc_open_call {
    uint64_t id;
    size_t arg_bytes;
};

#define PTC_STDERR_TAIL 4096

struct ptc_run {
    struct ptc_run *next;
    struct dsh_instance *inst;
    dsh_run_id id;
    struct dsh_run_callbacks cb;
    struct ptc_spec spec;
    enum ptc_phase phase;
    bool code_started; /* the program was submitted to the ready process */

    /* confinement */
    bool confine_pending;
    uint64_t confine_op;
    int confine_status;
    struct dsh_confinement *confinement;
    char **launch_env; /* env additions of the launch itself (embedded NODE_OPTIONS) */

    /* process */
    struct dsh_process *process;
    struct ptc_control control;
    struct ptc_watch control_watch;
    struct ptc_pipe out, err;
    struct ptc_watch quiescence_watch;
    bool quiescent;
    struct dsh_exit_status exit_status;
    bool cleanup_failed;

    /* binding calls and output */
    struct ptc_open_call *calls;
    size_t n_calls, cap_calls;
    uint64_t open_arg_bytes;
    struct ptc_ledger ledger;
    char stderr_tail[PTC_STDERR_TAIL];
    size_t stderr_tail_len;

    struct ptc_timer deadline, drain;

    /* outcome */
    bool outcome_selected;
    bool terminal_seen;     /* the child's result frame arrived */
    bool control_lost;      /* the control channel ended before the result */
    const char *kind;       /* NULL = ok */
    char *message;
    bool has_value;
    json_object *value;
    bool finish_scheduled;
};

/* run.c */
void ptc__run_select(struct ptc_run *run, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Called when the range became quiescent or a pipe reached EOF: finishes when both hold. */
void ptc__run_maybe_finish(struct ptc_run *run);
/* run_io.c */
int ptc__run_watch_process(struct ptc_run *run);
void ptc__run_send_program(struct ptc_run *run);
void ptc__run_pipe_close(struct ptc_run *run, struct ptc_pipe *pipe);
/* result.c: the result JSON (transfer full) */
char *ptc__run_result_json(struct ptc_run *run, size_t *ret_len);
/* utf8.c: appends sanitized text of bytes (carrying incomplete sequences in pipe->partial) */
int ptc__utf8_sanitize(struct ptc_pipe *pipe, const char *bytes, size_t len, bool at_eof,
                       char **ret_text, size_t *ret_len);

#endif
