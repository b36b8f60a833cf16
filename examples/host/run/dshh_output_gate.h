/* Pausing runs whose live output the client has not read (dshh_output_gate.c). */
#ifndef DSHH_OUTPUT_GATE_H
#define DSHH_OUTPUT_GATE_H

#include "dshh_host.h"
#include "dshh_out_queue.h"

struct dshh_output_gate {
    struct dshh_host *host;
    struct dshh_out_queue *out; /* the client's queue */
    dsh_run_id *paused;         /* runs paused since the queue was last low */
    size_t n_paused, cap_paused;
    int64_t resume_timer;       /* resuming them is scheduled on the loop (its timer id, or 0) */
};
/* Watches out's low mark (out must outlive the gate). */
void dshh__output_gate_init(struct dshh_output_gate *gate, struct dshh_host *host, struct dshh_out_queue *out);
/* After run's output was queued: pauses it while the client's queue is high (ABI 1.5
 * pause_output; nothing with an older provider). */
void dshh__output_gate_check(struct dshh_output_gate *gate, dsh_run_id run);
/* Also cancels a scheduled resume (the gate may be freed while the loop goes on: a --listen client). */
void dshh__output_gate_close(struct dshh_output_gate *gate);

#endif
