/* `dsh headless --program FILE.ts | -e CODE [--json]`: one run, printed for a person or as one
 * line of result JSON. Exit 0 ok, 1 program failure, 2 usage or configuration error. */
#include "dsh_json_strict.h"
#include "dsh_json_get.h"
#include "dshh_program_cmd.h"

#include "dshh_demo_tools.h"
#include "dshh_native_bindings.h"
#include "dshh_request.h"
#include "dshh_result_print.h"
#include "dshh_serve_events.h"
#include "dshh_stop_signals.h"
#include "dshh_text_file.h"
#include "dshh_usage.h"

#include <errno.h>
#include <fcntl.h>

#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct program_run {
    struct dshh_host *host;
    struct dshh_output_printer printer; /* output printed as it arrives */
    bool demo;
    bool json;   /* --json: the result is printed as it arrives */
    bool done;
    int status;  /* with json: the exit status the result gives */
    char *result; /* without json: kept for printing after the loop */
    size_t result_len;
    struct dshh_demo_pending *pending;
    dsh_run_id run;
    int stop_signal; /* SIGTERM or SIGINT cancelled the run: dsh exits 128 + it */
};

/* The run is cancelled, its result still printed; unload waits for the range and its temp dir. */
static void on_stop_signal(void *arg, int sig)
{
    struct program_run *pr = arg;
    if (pr->stop_signal || pr->done)
        return;
    pr->stop_signal = sig;
    pr->host->provider->cancel(pr->host->instance, pr->run, sig == SIGINT ? "dsh received SIGINT"
                                                                           : "dsh received SIGTERM");
}

static void on_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    struct program_run *pr = userdata;
    if (dshh__host_native_call(pr->host, run, call, global, name, args_json, args_len))
        return;
    if (pr->demo && !strcmp(global, DSHH_DEMO_GLOBAL)) {
        dshh__demo_call(pr->host, run, call, name, args_json, args_len, &pr->pending);
        return;
    }
    /* Unreachable with a conforming provider: it only forwards declared namespaces. */
    const char *msg = "dsh --program: no binding with this name";
    pr->host->provider->reply(pr->host->instance, run, call, false, msg, strlen(msg));
}

/* A person sees output as the program writes it (a long program shows its progress). */
static void on_output(void *userdata, dsh_run_id run, const char *entry_json, size_t entry_len)
{
    (void)run;
    struct program_run *pr = userdata;
    json_object *entry = dsh_json_parse_strict(entry_json, entry_len);
    dshh__print_entry(&pr->printer, entry, stdout);
    fflush(stdout);
    json_object_put(entry);
}

/* One line on stdout, whatever whitespace the provider used, written from the provider's own
 * buffer (a result can be as large as maxOutputBytes). */
static void print_json_line(const char *json, size_t len)
{
    char *blanked;
    if (!(json = dshh__one_line(json, len, &blanked)))
        return;
    fflush(stdout);
    dshh__write_all(STDOUT_FILENO, json, len);
    dshh__write_all(STDOUT_FILENO, "\n", 1);
    free(blanked);
}

static void on_done(void *userdata, dsh_run_id run, const char *result_json, size_t result_len)
{
    (void)run;
    struct program_run *pr = userdata;
    dshh__demo_cancel(pr->host, &pr->pending);
    pr->done = true;
    dshh__loop_quit(pr->host->loop);
    if (pr->json) {
        print_json_line(result_json, result_len);
        static const char *const raw[] = {"value", NULL};
        struct dsh_json_slice value;
        json_object *r = dsh_json_parse_envelope(result_json, result_len, raw, &value,
                                                 DSHH_RESULT_MAX_NODES(result_len));
        bool ok = false;
        pr->status = dsh_json_get_bool(r, "ok", &ok) && ok ? DSHH_EXIT_OK : DSHH_EXIT_FAILURE;
        json_object_put(r);
        return;
    }
    pr->result = malloc(result_len + 1);
    if (pr->result) {
        memcpy(pr->result, result_json, result_len);
        pr->result[result_len] = '\0';
        pr->result_len = result_len;
    }
}

static char *build_request(const struct dshh_program_options *opts, const char *program, bool demo,
                           const struct dshh_native_set *native, bool *ret_demo)
{
    json_object *req = json_object_new_object();
    json_object_object_add(req, "program", json_object_new_string(program));
    if (opts->cwd)
        json_object_object_add(req, "cwd", json_object_new_string(opts->cwd));
    if (opts->timeout == DSHH_TIMEOUT_NONE)
        json_object_object_add(req, "timeoutMs", NULL);
    else if (opts->timeout == DSHH_TIMEOUT_MS)
        json_object_object_add(req, "timeoutMs", json_object_new_int64(opts->timeout_ms));
    if (opts->state_owner)
        json_object_object_add(req, "stateOwner", json_object_new_string(opts->state_owner));
    if (opts->session_id)
        json_object_object_add(req, "sessionId", json_object_new_string(opts->session_id));
    if (opts->discard_completion)
        json_object_object_add(req, "discardCompletion", json_object_new_boolean(1));
    if (opts->nimages) {
        /* --image ID=PATH: a relative PATH is taken from dsh's own directory. */
        json_object *images = json_object_new_array();
        for (size_t i = 0; i < opts->nimages; i++) {
            const char *eq = strchr(opts->images[i], '=');
            char full[2 * PATH_MAX + 2], here[PATH_MAX];
            if (eq[1] != '/' && getcwd(here, sizeof here))
                snprintf(full, sizeof full, "%s/%s", here, eq + 1);
            else
                snprintf(full, sizeof full, "%s", eq + 1);
            json_object *e = json_object_new_object();
            json_object_object_add(e, "attachmentId",
                                   json_object_new_string_len(opts->images[i], (int)(eq - opts->images[i])));
            json_object_object_add(e, "path", json_object_new_string(full));
            json_object_array_add(images, e);
        }
        json_object_object_add(req, "images", images);
    }
    json_object *bindings = json_object_new_array();
    *ret_demo = demo && dshh__add_demo_bindings(bindings);
    dshh__native_declare(native, bindings);
    json_object_object_add(req, "bindings", bindings);
    char *text = strdup(json_object_to_json_string_ext(
        req, DSH_JSON_PRINT_FLAGS));
    json_object_put(req);
    return text;
}

int dshh__cmd_program(struct dshh_host *host, const struct dshh_program_options *opts)
{
    size_t len = 0;
    char *program = opts->program_code ? strdup(opts->program_code)
                                       : dshh__read_text_file(opts->program_file, &len);
    if (!program) {
        fprintf(stderr, "dsh: %s: %s\n", opts->program_file ? opts->program_file : "-e",
                strerror(errno));
        return DSHH_EXIT_USAGE;
    }
    if (strlen(program) != (opts->program_code ? strlen(opts->program_code) : len)) {
        fprintf(stderr, "dsh: %s: the program contains a NUL byte\n", opts->program_file);
        free(program);
        return DSHH_EXIT_USAGE;
    }
    if (!dshh__is_utf8(program, strlen(program))) {
        fprintf(stderr, "dsh: %s: the program is not UTF-8 text\n",
                opts->program_file ? opts->program_file : "-e");
        free(program);
        return DSHH_EXIT_USAGE;
    }
    for (size_t i = 0; i < opts->nimages; i++) {
        /* Said here: the provider would only find that the path maps to nothing it can see. */
        const char *eq = strchr(opts->images[i], '=');
        if (access(eq + 1, F_OK) < 0) {
            int id_len = (int)(eq - opts->images[i]);
            if (errno == ENOENT)
                fprintf(stderr, "dsh: --image %.*s: %s does not exist\n", id_len, opts->images[i], eq + 1);
            else
                fprintf(stderr, "dsh: --image %.*s: %s: %s\n", id_len, opts->images[i], eq + 1,
                        strerror(errno));
            free(program);
            return DSHH_EXIT_USAGE;
        }
    }
    struct program_run pr = {.host = host, .printer = {.at_line_start = true}, .json = opts->json};
    char *request = build_request(opts, program, host->demo_tools, host->native, &pr.demo);
    free(program);
    if (!request)
        return DSHH_EXIT_USAGE;
    struct dsh_run_callbacks cb = {.struct_size = sizeof(cb),
                                   .on_call = on_call,
                                   .on_done = on_done,
                                   .userdata = &pr,
                                   /* --json prints exactly one line: the result. */
                                   .on_output = opts->json ? NULL : on_output};
    dsh_run_id run;
    struct dsh_error err;
    int rc = dshh__start_run(host, request, strlen(request), &cb, &run, &err);
    free(request);
    if (rc < 0) {
        fprintf(stderr, "dsh: the run was rejected (%s): %s\n",
                dsh_error_name(rc) ? dsh_error_name(rc) : "error",
                *err.message ? err.message : dsh_strerror(rc));
        return DSHH_EXIT_USAGE;
    }
    pr.run = run;
    if (!pr.done && (rc = dshh__stop_signals_watch(host->loop, on_stop_signal, &pr)) < 0)
        fprintf(stderr, "dsh: cannot watch SIGTERM/SIGINT: %s\n", strerror(-rc));
    rc = pr.done ? 0 : dshh__loop_run(host->loop);
    dshh__stop_signals_unwatch(host->loop);
    if (!pr.done) {
        fprintf(stderr, "dsh: the event loop failed: %s\n", strerror(-rc));
        /* unload() in dshh__host_close still delivers on_done; pr must outlive it. */
        dshh__host_unload(host);
    }
    if (opts->json && pr.done)
        return pr.status;
    if (!pr.result) {
        fprintf(stderr, "dsh: no result\n");
        return DSHH_EXIT_FAILURE;
    }
    int status = dshh__print_result(pr.result, pr.result_len, &pr.printer, stdout, stderr);
    free(pr.result);
    return pr.stop_signal ? DSHH_EXIT_SIGNAL(pr.stop_signal) : status;
}
