/* Output flow control for a host whose client reads slower than programs write (README "Peers
 * that stop reading"): a run whose live output finds the client's queue high is paused (ABI 1.5
 * pause_output) until the queue has drained to its low mark, so what the client has not read yet
 * waits in the confined child, charged to its range, and not in dsh. */
#include "dshh_output_gate.h"

#include <stdio.h>
#include <stdlib.h>

/* Bytes waiting at which a run with live output is paused, and to which they must fall before
 * paused runs go on (hysteresis: a run is not paused and resumed for every entry). */
#define PAUSE_ABOVE ((size_t)1 << 20)
#define RESUME_AT ((size_t)256 << 10)

static void resume_all(void *arg)
{
    struct dshh_output_gate *gate = arg;
    gate->resume_timer = 0;
    const struct dsh_provider *p = gate->host->provider;
    /* A run that ended meanwhile answers not-found: nothing to resume. */
    for (size_t i = 0; i < gate->n_paused; i++)
        p->pause_output(gate->host->instance, gate->paused[i], false);
    if (gate->n_paused)
        gate->host->logger.log(gate->host->logger.ctx, DSH_LOG_INFO, "paused runs resumed: the client read their output");
    gate->n_paused = 0;
}

/* The queue drained to RESUME_AT (inside a write or a drain): resumes from the loop. */
static void on_low(void *arg)
{
    struct dshh_output_gate *gate = arg;
    if (gate->n_paused && !gate->resume_timer) {
        int64_t id = dshh__loop_add_timer(gate->host->loop, 0, resume_all, gate);
        gate->resume_timer = id > 0 ? id : 0;
    }
}

void dshh__output_gate_init(struct dshh_output_gate *gate, struct dshh_host *host, struct dshh_out_queue *out)
{
    *gate = (struct dshh_output_gate){.host = host, .out = out};
    dshh__out_queue_notify_low(out, RESUME_AT, on_low, gate);
}

void dshh__output_gate_check(struct dshh_output_gate *gate, dsh_run_id run)
{
    const struct dsh_provider *p = gate->host->provider;
    if (dshh__out_queue_waiting(gate->out) <= PAUSE_ABOVE || !DSH_HAS(p, pause_output) || !p->pause_output)
        return;
    for (size_t i = 0; i < gate->n_paused; i++)
        if (gate->paused[i] == run)
            return;
    if (gate->n_paused == gate->cap_paused) {
        size_t cap = gate->cap_paused ? 2 * gate->cap_paused : 8;
        dsh_run_id *grown = realloc(gate->paused, cap * sizeof *grown);
        if (!grown)
            return; /* not paused: its output waits here instead */
        gate->paused = grown;
        gate->cap_paused = cap;
    }
    if (p->pause_output(gate->host->instance, run, true) < 0)
        return;
    gate->paused[gate->n_paused++] = run;
    char message[128];
    snprintf(message, sizeof message, "run %llu paused: the client has %zu KiB of output unread",
             (unsigned long long)run, dshh__out_queue_waiting(gate->out) >> 10);
    gate->host->logger.log(gate->host->logger.ctx, DSH_LOG_INFO, message);
}

void dshh__output_gate_close(struct dshh_output_gate *gate)
{
    dshh__out_queue_notify_low(gate->out, 0, NULL, NULL);
    if (gate->resume_timer)
        dshh__loop_cancel_timer(gate->host->loop, gate->resume_timer);
    free(gate->paused);
    *gate = (struct dshh_output_gate){0};
}
