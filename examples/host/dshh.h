/* Internals of the reference host `dsh` shared between its source files (prefix dshh__). */
#ifndef DSHH_H
#define DSHH_H

#include "dsh_provider.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

/* Exit statuses of every dsh command. */
enum { DSHH_EXIT_OK = 0, DSHH_EXIT_FAILURE = 1, DSHH_EXIT_USAGE = 2 };

/* Provider names of the rows dsh implements itself (everything else is a provider to dlopen). */
#define DSHH_NAME_FS "dsh-fs-local"
#define DSHH_NAME_SUBPROCESS "dsh-subprocess-local"
#define DSHH_NAME_SANDBOX "dsh-sandbox-linux"
#define DSHH_NAME_POLICY "dsh-sandbox-policy"
#define DSHH_NAME_DEMO "dsh-demo-tools"
#define DSHH_DEMO_GLOBAL "tools"
#define DSHH_NAME_MCP_BINDINGS "dsh-mcp-bindings"

/* ---- profile.c: composition of a profile with patch layers ---------------------------------- */
struct dshh_layer {
    char *path; /* as given on the command line ("dsh --sandbox": made from an option) */
    yaml_document_t doc;
    bool loaded;
    bool from_option; /* made by dshh__profile_set_policy: its positions are not the user's */
};

struct dshh_row {
    char *id;
    char *name;
    char *path; /* optional shared object of a provider row; NULL = default */
    bool disabled;
    const struct dshh_layer *origin; /* layer that defined or inserted the row */
    const struct dshh_layer *layer;  /* last layer that changed the row */
    const struct dshh_layer *config_layer; /* owner of config (NULL when config is empty) */
    yaml_node_t *config;                   /* mapping node in config_layer->doc, or NULL */
};

struct dshh_profile {
    struct dshh_layer **layers;
    size_t nlayers;
    struct dshh_row *rows;
    size_t nrows;
};

/* Composes base + patches in order. On error prints "FILE:line:col: message" to err and returns
 * -1 (the profile is still safe to free). */
int dshh__profile_compose(struct dshh_profile *profile, const char *base,
                          const char *const *patches, size_t npatches, FILE *err);
void dshh__profile_free(struct dshh_profile *profile);
/* id, name, config, disabled or path: the keys a profile row or row patch may have. */
/* The checks composition makes of one row or row patch map of layer (its keys: known, each
 * once; name, disabled, path, config: of their kinds), reported as composition reports them
 * (FILE:L:C: problem). 0 when they pass, -1 otherwise. */
int dshh__row_check(FILE *err, const struct dshh_layer *layer, yaml_node_t *map);
const struct dshh_row *dshh__profile_find(const struct dshh_profile *profile, const char *id);
/* --sandbox MODE / --workspace DIR: a layer named "dsh OPTION" that sets key of the enabled
 * dsh-sandbox-policy row's config to value, keeping its other keys (the row's validation then
 * judges the value). 0, or -1 with a message on err. */
int dshh__profile_set_policy(struct dshh_profile *profile, const char *option, const char *key,
                             const char *value, FILE *err);

/* Loads one YAML file as a single document (an empty file gives a document without root). */
int dshh__yaml_load_file(const char *path, yaml_document_t *doc, FILE *err);
/* Mapping lookup: the value node of key, or NULL. */
yaml_node_t *dshh__yaml_get(yaml_document_t *doc, yaml_node_t *map, const char *key);
/* Scalar text of node, or NULL when node is not a scalar. */
const char *dshh__yaml_scalar(const yaml_node_t *node);
/* A plain scalar null/~/"" or an empty mapping: an empty config. */
bool dshh__yaml_is_empty(const yaml_node_t *node);

/* ---- dump.c: --dump-config ------------------------------------------------------------------- */
int dshh__dump_profile(const struct dshh_profile *profile, FILE *out);
/* Emits node (and its subtree) of doc as events on emitter. */
int dshh__yaml_emit_node(yaml_emitter_t *emitter, yaml_document_t *doc, yaml_node_t *node);

/* ---- validate.c: catalog validation of rows ---------------------------------------------------- */
struct dshh_options;
/* Validates the rows of the composition (all, or only the enabled ones); prints diagnostics to
 * err. Returns the number of invalid rows, or -1 when the catalog cannot be read. */
int dshh__validate_profile(const struct dshh_profile *profile, bool enabled_only, FILE *err);
int dshh__cmd_config(const struct dshh_options *opts, int argc, char **argv);
/* persistent_patch.c: `config persistent-patch`; format NULL = the row's effective format. */
int dshh__cmd_persistent_patch(const struct dshh_profile *profile, const char *format, FILE *out, FILE *err);

/* ---- loop.c: the single epoll loop ------------------------------------------------------------- */
struct dshh_loop;
typedef void (*dshh_fd_fn)(void *arg, uint32_t events);
typedef void (*dshh_timer_fn)(void *arg);

int dshh__loop_new(struct dshh_loop **ret_loop);
void dshh__loop_free(struct dshh_loop *loop);
/* Watches fd (level-triggered) until removed; fd stays owned by the caller. */
int dshh__loop_add_fd(struct dshh_loop *loop, int fd, uint32_t events, dshh_fd_fn fn, void *arg);
void dshh__loop_remove_fd(struct dshh_loop *loop, int fd);
/* Watches an input fd with fn; a regular file (not pollable) is instead read to its end at once,
 * calling fn until *eof, which fn sets. */
int dshh__loop_watch_input(struct dshh_loop *loop, int fd, dshh_fd_fn fn, void *arg, const bool *eof);
/* One-shot timer; returns an id > 0 or a negative errno. */
int64_t dshh__loop_add_timer(struct dshh_loop *loop, uint32_t delay_ms, dshh_timer_fn fn, void *arg);
void dshh__loop_cancel_timer(struct dshh_loop *loop, int64_t id);
/* Runs until dshh__loop_quit() (sticky: a quit before the run returns at once); returns 0 or a
 * negative errno. */
int dshh__loop_run(struct dshh_loop *loop);
void dshh__loop_quit(struct dshh_loop *loop);
/* dsh_defer_fn for the services. */
int dshh__loop_defer(void *loop, uint32_t delay_ms, void (*fn)(void *arg), void *arg);

/* ---- host.c: services + provider instance of a composition ----------------------------------- */
struct dshh_host {
    struct dshh_loop *loop;
    struct dsh_linux_services *services_impl;
    struct svc_values *svc_values; /* option strings the services may borrow */
    struct dsh_services services;
    struct dsh_logger logger;
    void *dl;
    const struct dsh_provider *provider;
    struct dsh_instance *instance;
    const char *provider_path;
    bool demo_tools;   /* the demo-tools row is enabled */
    struct dshh_native_set *native; /* the enabled dsh-native-bindings rows (native_bindings.h) */
    bool verbose;
    int dispatch_error; /* last negative status of dispatch(), reported once */
    char *kernel_facts; /* the services' "linux services: ..." line (dsh doctor explains with it) */
};

/* Builds services and loads the provider row. Prints a diagnostic and returns -1 on error. */
int dshh__host_open(struct dshh_host *host, const struct dshh_options *opts,
                    const struct dshh_profile *profile);
/* Whether a row of profile (enabled or not) is a provider row rather than a service row. */
bool dshh__profile_names_provider(const struct dshh_profile *profile);
/* Unloads the provider (delivering pending callbacks), then frees services and the loop. */
void dshh__host_close(struct dshh_host *host);
/* Answers a call of a native namespace through reply(), on this thread; false when global names
 * none (nothing is answered). */
bool dshh__host_native_call(struct dshh_host *host, dsh_run_id run, uint64_t call,
                            const char *global, const char *name, const char *args_json,
                            size_t args_len);

/* ---- provider_loader.c --------------------------------------------------------------------------- */
int dshh__provider_open(const char *path, const char *row_name, void **ret_dl,
                        const struct dsh_provider **ret_provider, FILE *err);

/* ---- demo_tools.c: the `tools` namespace ---------------------------------------------------------- */
extern const char *const dshh__demo_functions[]; /* NULL-terminated */
struct json_object;
/* demo_images.c: tools.registerImage({path, attachmentId?}) -> attachmentId */
void dshh__demo_register_image(struct dshh_host *host, dsh_run_id run, uint64_t call,
                               struct json_object *arg);
struct dshh_demo_pending;
/* Answers a demo call (possibly later through a loop timer). *pending collects the run's timers
 * so dshh__demo_cancel() can drop them when the run ends. */
void dshh__demo_call(struct dshh_host *host, dsh_run_id run, uint64_t call, const char *name,
                     const char *args_json, size_t args_len, struct dshh_demo_pending **pending);
void dshh__demo_cancel(struct dshh_host *host, struct dshh_demo_pending **pending);

/* ---- request.c: building run requests -------------------------------------------------------------- */
struct json_object;
/* Appends {"global": "tools", "functions": [...]} to bindings unless a namespace with that global
 * is already there. Returns true when the demo namespace was added. */
bool dshh__add_demo_bindings(struct json_object *bindings);
/* resolve() then run(). Prints nothing; fills err (message) on failure and returns the status. */
int dshh__start_run(struct dshh_host *host, const char *request_json, size_t request_len,
                    const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run,
                    struct dsh_error *err);
/* The resolved cwd of a recent run started through dshh__start_run (NULL when unknown): the
 * demo tool registerImage resolves relative paths against it. */
const char *dshh__run_cwd(dsh_run_id run);
/* Writes all of buf to fd, retrying on EINTR/partial writes. */
int dshh__write_all(int fd, const char *buf, size_t len);
/* The whole file at path ("-": stdin), NUL-terminated, its length in *ret_len; NULL with errno. */
char *dshh__read_text_file(const char *path, size_t *ret_len);
/* Whether the len bytes of text are UTF-8 (text_file.c). */
bool dshh__is_utf8(const char *text, size_t len);

/* ---- stop_signals.c: SIGINT/SIGTERM as loop events ------------------------------------------------ */
/* The exit status of a command stopped by signal sig: 128 + sig (143 for SIGTERM, 130 for SIGINT). */
#define DSHH_EXIT_SIGNAL(sig) (128 + (sig))
typedef void (*dshh_stop_fn)(void *arg, int sig);
/* From now on SIGINT and SIGTERM call fn(arg, sig) from the loop instead of ending dsh. */
int dshh__stop_signals_watch(struct dshh_loop *loop, dshh_stop_fn fn, void *arg);
/* Stops watching (NULL loop: the fd was not added); both signals are ignored afterwards. */
void dshh__stop_signals_unwatch(struct dshh_loop *loop);

struct iovec;
/* ---- out_queue.c: a bounded, non-blocking write queue per peer ---------------------------------- */
/* Gives back a piece handed to the queue (data as it was handed over). */
typedef void (*dshh_release_fn)(void *arg, char *data);
struct dshh_out_segment;
struct dshh_out_queue {
    struct dshh_loop *loop;
    int fd;
    size_t max;      /* bytes waiting at which a new message is refused (it may then exceed max by one message) */
    struct dshh_out_segment *head, *tail; /* what the peer has not taken, oldest first */
    size_t waiting;  /* bytes in them */
    bool watching;   /* EPOLLOUT is watched on host->loop while bytes wait */
    bool direct;     /* fd cannot be polled (a regular file): written at once, it never blocks */
    int error;       /* errno of a failed write (the peer is gone): later writes fail with it */
    int saved_flags; /* fd's flags before O_NONBLOCK was set, restored at close; -1: unchanged */
    size_t taken, taken_at_bound; /* bytes the peer took in all; and when max was last reached */
    size_t low;      /* on_low(on_low_arg) once waiting falls to low after it was above */
    bool above_low;
    dshh_timer_fn on_low;
    void *on_low_arg;
};
/* Makes fd non-blocking (not closed by the queue). */
int dshh__out_queue_open(struct dshh_out_queue *q, struct dshh_loop *loop, int fd, size_t max);
/* Queues iov as one message and writes what the peer takes now. 0; -ENOBUFS when max bytes
 * already wait and the peer took nothing since they last did (nothing is queued: the caller
 * applies its documented outcome); another -errno when the peer is gone. */
int dshh__out_queue_write(struct dshh_out_queue *q, const struct iovec *iov, int n);
/* The same, with iov[owned] handed over (owned < 0: none): the queue keeps that piece instead of
 * copying it and calls release(release_arg, its base) once it is written or dropped, also when
 * the write fails. */
int dshh__out_queue_write_owned(struct dshh_out_queue *q, const struct iovec *iov, int n, int owned,
                                dshh_release_fn release, void *release_arg);
/* fn(arg) is called (from inside a later write or drain: it must not write to q) each time the
 * bytes waiting fall to low or below after they were above it. */
void dshh__out_queue_notify_low(struct dshh_out_queue *q, size_t low, dshh_timer_fn fn, void *arg);
size_t dshh__out_queue_waiting(const struct dshh_out_queue *q);
/* Blocks until everything waiting is written (after the loop ended: the last answers). */
int dshh__out_queue_flush(struct dshh_out_queue *q);
/* Stops watching, frees what waits, restores the fd's flags. */
void dshh__out_queue_close(struct dshh_out_queue *q);

/* ---- output_gate.c: pausing runs whose live output the client has not read ----------------------- */
struct dshh_output_gate {
    struct dshh_host *host;
    struct dshh_out_queue *out; /* the client's queue */
    dsh_run_id *paused;         /* runs paused since the queue was last low */
    size_t n_paused, cap_paused;
    bool resume_pending;        /* resuming them is scheduled on the loop */
};
/* Watches out's low mark (out must outlive the gate). */
void dshh__output_gate_init(struct dshh_output_gate *gate, struct dshh_host *host, struct dshh_out_queue *out);
/* After run's output was queued: pauses it while the client's queue is high (ABI 1.5
 * pause_output; nothing with an older provider). */
void dshh__output_gate_check(struct dshh_output_gate *gate, dsh_run_id run);
void dshh__output_gate_close(struct dshh_output_gate *gate);

/* ---- lines.c: newline-delimited input ------------------------------------------------------------- */
struct dshh_lines {
    char *buf;
    size_t len, cap;
    size_t max; /* longest accepted line; set before the first feed */
    bool discarding; /* dropping the rest of an over-long line */
};
/* fn gets each complete line (not NUL-terminated, without its newline), or line NULL once for a
 * line that was dropped (longer than max, or out of memory). */
typedef void (*dshh_line_fn)(void *arg, const char *line, size_t len);
void dshh__lines_feed(struct dshh_lines *lines, const char *data, size_t n, dshh_line_fn fn, void *arg);
/* At EOF: a last line without its newline. */
void dshh__lines_finish(struct dshh_lines *lines, dshh_line_fn fn, void *arg);
/* One read of fd fed to lines; false at EOF or a read error (after finishing the last line). */
bool dshh__lines_read(struct dshh_lines *lines, int fd, dshh_line_fn fn, void *arg);
void dshh__lines_free(struct dshh_lines *lines);

/* ---- result_print.c ------------------------------------------------------------------------------- */
/* Where printing output for a person stands: the image line rules need the previous entry. */
struct dshh_output_printer {
    bool at_line_start; /* start with true */
    bool after_image;
};
/* Prints one output entry ({"type":"text"|"image",...}) for a person. */
void dshh__print_entry(struct dshh_output_printer *printer, struct json_object *entry, FILE *out);
/* The node budget of a result's envelope (all but its value, which stays text) of len bytes: an
 * output entry takes at least a dozen bytes for its three nodes. */
#define DSHH_RESULT_MAX_NODES(len) (DSH_JSON_ENVELOPE_MAX_NODES + (len) / 4)
/* Prints a result for a person; returns the exit status it implies. With live (the printer that
 * already printed the output as it arrived) only the value and the error are printed. */
int dshh__print_result(const char *result_json, size_t len, struct dshh_output_printer *live, FILE *out,
                       FILE *err);

/* ---- serve_events.c: --serve output lines ---------------------------------------------------------- */
/* Compact JSON text of o (owned by o). */
const char *dshh__jstr(struct json_object *o);
/* {"type": type, "id": <id_text parsed>} (id omitted when id_text is NULL); caller puts it. */
struct json_object *dshh__event(const char *type, const char *id_text);
/* Writes ev as one line; with raw_key, appends "raw_key": raw (JSON text spliced verbatim, so the
 * provider's number text survives). */
void dshh__emit_event(struct json_object *ev, const char *raw_key, const char *raw, size_t raw_len);
/* The same with raw handed over: it waits in the stdout queue without a copy and is given back
 * with release(release_arg, raw) once written or dropped. */
void dshh__emit_event_owned(struct json_object *ev, const char *raw_key, char *raw, size_t raw_len,
                            dshh_release_fn release, void *release_arg);
/* JSON text as one line: json itself when it holds no raw newline, else a copy (*ret_copy, free
 * it) with raw newlines (whitespace between tokens) blanked; NULL when out of memory. */
const char *dshh__one_line(const char *json, size_t len, char **ret_copy);
/* From now on event lines go through q (drained on host->loop); the first line q refuses drops
 * the client: every later line is discarded and on_full(arg) runs from the loop. */
void dshh__events_queue(struct dshh_out_queue *q, dshh_timer_fn on_full, void *arg);
/* Whether the client was dropped for not reading. */
bool dshh__events_dropped(void);
/* {"type":"error","id"?:..,"message":..} */
void dshh__emit_error(const char *id_text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- program_cmd.c / serve.c ---------------------------------------------------------------------- */
int dshh__cmd_program(struct dshh_host *host, const struct dshh_options *opts);
int dshh__cmd_serve(struct dshh_host *host, const struct dshh_options *opts);

/* ---- paths.c: installed or build-tree locations ---------------------------------------------------- */
enum dshh_path { DSHH_PATH_PROVIDER, DSHH_PATH_WORKFLOW, DSHH_PATH_PROFILE, DSHH_PATH_LAUNCHER,
                 DSHH_PATH_PYTHON_PROVIDER, DSHH_PATH_COUNT };
/* The default location of a file dsh uses; NULL for the launcher of an installed dsh (the
 * services library finds its own). */
const char *dshh__path(enum dshh_path which);

/* ---- doctor.c: `dsh doctor` ------------------------------------------------------------------------ */
int dshh__cmd_doctor(const struct dshh_options *opts);

/* ---- main.c: options shared by the commands --------------------------------------------------------- */
/* Prints one line "dsh COMMAND: PROBLEM (see 'dsh COMMAND --help')" (command NULL: the global
 * usage) and returns DSHH_EXIT_USAGE. */
int dshh__usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct dshh_options {
    const char *profile;
    const char *catalog;
    const char **patches;
    size_t npatches;
    bool dump_config;
    bool serve;
    bool mcp; /* dsh mcp */
    bool json;
    bool verbose;
    const char *program_file;
    const char *program_code;
    const char *cwd;
    const char *state_owner;
    const char *session_id;
    long long timeout_ms; /* -1 = unset, -2 = null (no deadline) */
    bool discard_completion;
    const char **initializers; /* --initializer FILE, in order */
    size_t ninitializers;
    const char *format;  /* config persistent-patch --format */
    const char **images; /* --image ID=PATH, in order */
    size_t nimages;
    const char *sandbox;   /* --sandbox MODE: the policy row's mode */
    const char *workspace; /* --workspace DIR: the policy row's workspaceRoot */
};

#endif /* DSHH_H */
