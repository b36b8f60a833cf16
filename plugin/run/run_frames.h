/* The evaluation side of a run (run_frames.c): the run frame, frames the child sends for it,
 * raw output while it is active, and replies to binding calls. */
#ifndef PTC_RUN_FRAMES_H
#define PTC_RUN_FRAMES_H

#include "ptc_runs.h"

struct ptc_run;

/* Registers the spec's images, then sends the run frame (and the initializer, once). */
void ptc__run_send_program(struct ptc_run *run);
/* The environment's frame and output events (struct ptc_env_events; arg is the run). */
void ptc__run_on_frame(void *arg, const struct ptc_frame *frame);
void ptc__run_on_output(void *arg, const char *text, size_t len);
/* The provider calls reply and registerImage (host-abi/ABI.md). */
int ptc__runs_reply(struct ptc_runs *runs, dsh_run_id id, uint64_t call, bool ok, const char *text, size_t len);
int ptc__runs_register_image(struct ptc_runs *runs, dsh_run_id id, const char *attachment_id, const char *host_path,
                             char **ret_descriptor_json, size_t *ret_len, struct dsh_error *err);

#endif
