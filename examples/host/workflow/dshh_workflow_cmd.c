/* `dsh workflow run SCRIPT.js [--args JSON] [--json] ...` and `dsh workflow ralph --prompt FILE
 * [--max-iterations N] [--completion-promise TEXT] ...` (an opt-in Ralph loop, the row's
 * `ralph.enabled`): mounts the composition, lends the
 * loaded runtime to the workflow engine (dsh-workflow-ptc.so) with the "nested" subagent
 * provider (and "command" when the row has a commandTemplate), runs one workflow and prints progress as it happens. SIGINT/SIGTERM cancel it.
 * Exit 0 completed, 1 error or cancelled, 2 usage, configuration or a rejected start. */
#include "dshh_workflow_cmd.h"

#include "dshh_names.h"
#include "dshh_paths.h"
#include "dshh_stop_signals.h"
#include "dshh_subagent.h"
#include "dshh_text_file.h"
#include "dshh_usage.h"
#include "dshh_validate.h"
#include "dshh_yaml.h"

#include "dsh_config.h"
#include "dsh_json_strict.h"

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct wf_cmd {
    struct dshh_host *host;
    const struct dsh_workflow_engine *engine;
    struct dsh_workflow *wf;
    dsh_workflow_run run;
    bool json;
    bool events_seen;
    bool done;
    int status;
    int dispatch_error; /* the last one reported */
};

static void on_stop_signal(void *arg, int sig)
{
    (void)sig;
    struct wf_cmd *c = arg;
    if (!c->done)
        c->engine->cancel(c->wf, c->run, "interrupted by a signal");
}

static void on_engine_fd(void *arg, uint32_t events)
{
    (void)events;
    struct wf_cmd *c = arg;
    int rc = c->engine->dispatch(c->wf);
    /* Reported once: a broken instance would otherwise flood stderr at every wakeup. */
    if (rc < 0 && rc != c->dispatch_error)
        fprintf(stderr, "dsh: workflow dispatch failed: %s\n", dsh_strerror(rc));
    c->dispatch_error = rc < 0 ? rc : 0;
}

static const char *str(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : "";
}

static void print_event(const char *json, size_t len)
{
    json_object *ev = dsh_json_parse_strict_value(json, len), *v;
    const char *type = str(ev, "type");
    long long id = json_object_object_get_ex(ev, "agentId", &v) ? (long long)json_object_get_int64(v) : 0;
    if (!strcmp(type, "start"))
        printf("workflow: start%s%s\n", *str(json_object_object_get(ev, "meta"), "name") ? " " : "",
               str(json_object_object_get(ev, "meta"), "name"));
    else if (!strcmp(type, "phase"))
        printf("== %s\n", str(ev, "title"));
    else if (!strcmp(type, "log"))
        printf("%s\n", str(ev, "message"));
    else if (!strcmp(type, "agent-start"))
        printf("-> agent #%lld %s\n", id, str(ev, "label"));
    else if (!strcmp(type, "agent-end"))
        printf("<- agent #%lld %s %s\n", id, str(ev, "label"),
               json_object_get_boolean(json_object_object_get(ev, "ok")) ? "ok" : "failed");
    else if (!strcmp(type, "end"))
        printf("workflow: %s (%lld agents)\n", str(ev, "stopReason"),
               (long long)json_object_get_int64(json_object_object_get(ev, "agentsStarted")));
    else
        printf("%.*s\n", (int)len, json);
    fflush(stdout);
    json_object_put(ev);
}

static void on_event(void *userdata, dsh_workflow_run run, const char *json, size_t len)
{
    (void)run;
    struct wf_cmd *c = userdata;
    c->events_seen = true;
    if (c->json) { /* machine-readable progress: one event per line on stderr */
        fprintf(stderr, "%.*s\n", (int)len, json);
        fflush(stderr);
    } else {
        print_event(json, len);
    }
}

static void on_done(void *userdata, dsh_workflow_run run, const char *json, size_t len)
{
    (void)run;
    struct wf_cmd *c = userdata;
    json_object *r = dsh_json_parse_strict_value(json, len), *err = json_object_object_get(r, "error");
    bool completed = !strcmp(str(r, "stopReason"), "completed");
    c->status = completed ? DSHH_EXIT_OK : DSHH_EXIT_FAILURE;
    if (!c->events_seen && !strcmp(str(err, "code"), "script-invalid")) {
        /* The script never started (it does not compile): reported like a rejected start. */
        fprintf(stderr, "dsh: the workflow was rejected (script-invalid): %s\n", str(err, "message"));
        c->status = DSHH_EXIT_USAGE;
    } else if (c->json) {
        fflush(stdout);
        dshh__write_all(STDOUT_FILENO, json, len);
        dshh__write_all(STDOUT_FILENO, "\n", 1);
    } else {
        json_object *value = json_object_object_get(r, "value");
        if (completed)
            printf("%s\n", json_object_to_json_string_ext(value, DSH_JSON_PRINT_FLAGS));
        fflush(stdout);
        if (err)
            fprintf(stderr, "error (%s): %s\n", str(err, "code"), str(err, "message"));
    }
    json_object_put(r);
    c->done = true;
    dshh__loop_quit(c->host->loop);
}

/* The composition and output options of the command line. */
struct wf_host_opts {
    const char *profile;
    const char **patches;
    size_t npatches;
    bool json, verbose;
};

struct wf_opts {
    const char *args, *meta, *cwd, *session, *agent, *provider;
    long long max_total; /* -1 = unset */
    bool ralph;          /* `workflow ralph`: the file is the prompt */
    long long max_iterations; /* -1 = unset */
    const char *completion_promise;
};

static char *build_request(const struct wf_opts *o, const char *script)
{
    json_object *req = json_object_new_object();
    if (o->ralph) {
        json_object *ralph = json_object_new_object();
        json_object_object_add(ralph, "prompt", json_object_new_string(script));
        if (o->max_iterations != -1)
            json_object_object_add(ralph, "maxIterations", json_object_new_int64(o->max_iterations));
        if (o->completion_promise)
            json_object_object_add(ralph, "completionPromise", json_object_new_string(o->completion_promise));
        json_object_object_add(req, "ralph", ralph);
    } else {
        json_object_object_add(req, "script", json_object_new_string(script));
    }
    json_object *args = o->args ? dsh_json_parse_strict(o->args, strlen(o->args)) : NULL;
    json_object *meta = o->meta ? dsh_json_parse_strict(o->meta, strlen(o->meta)) : NULL;
    if ((o->args && !args && strcmp(o->args, "null")) || (o->meta && !meta)) {
        fprintf(stderr, "dsh: --args and --meta take JSON\n");
        json_object_put(req);
        return NULL;
    }
    if (args || !o->ralph)
        json_object_object_add(req, "args", args);
    if (meta)
        json_object_object_add(req, "meta", meta);
    if (o->cwd)
        json_object_object_add(req, "cwd", json_object_new_string(o->cwd));
    if (o->provider)
        json_object_object_add(req, "provider", json_object_new_string(o->provider));
    if (o->max_total != -1)
        json_object_object_add(req, "maxTotalAgents", json_object_new_int64(o->max_total));
    json_object *agent = json_object_new_object();
    json_object_object_add(agent, "id", json_object_new_string(o->agent ? o->agent : "dsh-cli"));
    if (o->session)
        json_object_object_add(agent, "sessionId", json_object_new_string(o->session));
    json_object_object_add(req, "agent", agent);
    char *text = strdup(json_object_to_json_string_ext(req, DSH_JSON_PRINT_FLAGS));
    json_object_put(req);
    return text;
}

/* commandTemplate of the row (validated as a list of strings by the catalog), or NULL when
 * empty. The pointers are the profile's; the array is the caller's to free. */
static const char **command_template(yaml_document_t *doc, yaml_node_t *config)
{
    yaml_node_t *seq = config ? dsh_mapping_get_cstr(doc, config, "commandTemplate") : NULL;
    if (!seq || seq->type != YAML_SEQUENCE_NODE || seq->data.sequence.items.top == seq->data.sequence.items.start)
        return NULL;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    const char **argv = calloc(n + 1, sizeof *argv);
    for (size_t i = 0; argv && i < n; i++) {
        const char *text = dshh__yaml_scalar(yaml_document_get_node(doc, seq->data.sequence.items.start[i]));
        argv[i] = text ? text : "";
    }
    return argv;
}

/* The enabled dsh-workflow-ptc row's config as YAML text ("" = defaults), its path and its
 * commandTemplate (see command_template). */
static int workflow_row(const struct dshh_profile *p, char **ret_yaml, const char **ret_path,
                        const char ***ret_command)
{
    *ret_yaml = NULL;
    *ret_path = dshh__path(DSHH_PATH_WORKFLOW);
    *ret_command = NULL;
    for (size_t i = 0; i < p->nrows; i++) {
        const struct dshh_row *row = &p->rows[i];
        if (row->disabled || strcmp(row->name, DSHH_NAME_WORKFLOW))
            continue;
        if (row->path)
            *ret_path = row->path;
        size_t len;
        yaml_document_t *doc = (yaml_document_t *)&(row->config_layer ? row->config_layer : row->layer)->doc;
        if (row->config && dsh_yaml_node_emit(doc, row->config, ret_yaml, &len) < 0)
            return -1;
        free(*ret_command);
        *ret_command = command_template(doc, row->config);
    }
    return 0;
}

static int run_workflow(struct wf_cmd *c, struct dshh_host *host, const struct dshh_profile *profile,
                        const char *request)
{
    char *yaml = NULL;
    const char *path;
    const char **command = NULL;
    struct dshh_subagents *subs = NULL, *cmd_subs = NULL;
    void *dl = NULL;
    int status = DSHH_EXIT_USAGE;
    FILE *trace = c->json ? stderr : NULL;
    if (workflow_row(profile, &yaml, &path, &command) < 0 || dshh__subagents_new(host, trace, &subs) < 0 ||
        (command && dshh__subagents_new_command(host, trace, command, &cmd_subs) < 0))
        goto out;
    dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    dsh_workflow_entry_fn entry = dl ? (dsh_workflow_entry_fn)dlsym(dl, "dsh_workflow_entry") : NULL;
    if (!entry || !(c->engine = entry(DSH_ABI_MAJOR))) {
        fprintf(stderr, "dsh: cannot load the workflow engine %s: %s\n", path, dl ? "no dsh_workflow_entry" : dlerror());
        goto out;
    }
    /* The runtime is lent, not duplicated: the engine runs scripts through this instance. */
    struct dsh_runtime_service rt = {.struct_size = sizeof rt, .abi_major = DSH_ABI_MAJOR,
                                     .abi_minor = DSH_ABI_MINOR, .provider = host->provider,
                                     .instance = host->instance};
    struct dsh_services services = host->services;
    services.struct_size = sizeof services;
    services.runtime = &rt;
    /* A configured commandTemplate makes "command" the default; "nested" stays selectable. */
    const struct dsh_subagent_provider *subagents[3] = {NULL};
    size_t k = 0;
    if (cmd_subs)
        subagents[k++] = dshh__subagents_vtable(cmd_subs);
    subagents[k] = dshh__subagents_vtable(subs);
    struct dsh_error err = {0};
    int rc = c->engine->load(yaml ? yaml : "", yaml ? strlen(yaml) : 0, &services, subagents, &c->wf, &err);
    if (rc < 0) {
        fprintf(stderr, "dsh: %s cannot load (%s): %s\n", DSHH_NAME_WORKFLOW,
                dsh_error_name(rc) ? dsh_error_name(rc) : "error", err.message);
        c->wf = NULL;
        goto out;
    }
    /* One fd for the engine and the runtime it was lent: the engine's dispatch() dispatches the
     * runtime too, so the host stops watching the runtime's own fd. */
    dshh__loop_remove_fd(host->loop, host->provider->get_fd(host->instance));
    if (dshh__loop_add_fd(host->loop, c->engine->get_fd(c->wf), EPOLLIN, on_engine_fd, c) < 0 ||
        dshh__stop_signals_watch(host->loop, on_stop_signal, c) < 0)
        goto out;
    struct dsh_workflow_callbacks cb = {.struct_size = sizeof cb, .on_event = on_event,
                                        .on_done = on_done, .userdata = c};
    rc = c->engine->start(c->wf, request, strlen(request), &cb, &c->run, &err);
    if (rc < 0) {
        fprintf(stderr, "dsh: the workflow was rejected (%s): %s\n",
                dsh_error_name(rc) ? dsh_error_name(rc) : "error", err.message);
        goto out;
    }
    rc = dshh__loop_run(host->loop);
    status = c->done ? c->status : DSHH_EXIT_FAILURE;
    if (rc < 0 && !c->done)
        fprintf(stderr, "dsh: the event loop failed: %s\n", strerror(-rc));
out:
    if (c->wf) {
        dshh__loop_remove_fd(host->loop, c->engine->get_fd(c->wf));
        c->engine->unload(c->wf);
    }
    dshh__stop_signals_unwatch(host->loop);
    dshh__subagents_free(subs);
    dshh__subagents_free(cmd_subs);
    free(command);
    if (dl)
        dlclose(dl);
    free(yaml);
    return status;
}

static void usage(void)
{
    printf("usage: dsh workflow run SCRIPT.js [OPTIONS]\n"
           "       dsh workflow ralph --prompt FILE [--max-iterations N] [--completion-promise TEXT]\n"
           "         [OPTIONS]\n"
           "  Runs a workflow script through the dsh-workflow-ptc engine, which runs it through\n"
           "  the composition's ptc-runtime row; subagents run as nested confined programs.\n"
           "  A Ralph loop (opt-in: the dsh-workflow-ptc row's ralph.enabled) starts a fresh child\n"
           "  agent with the prompt per iteration until its output contains the completion promise,\n"
           "  the iteration cap or cancellation; the result's value.endedBy says which.\n"
           "\n"
           "  --prompt FILE            ralph: the prompt every iteration's agent gets\n"
           "  --max-iterations N       ralph: lower the row's ralph.maxIterations\n"
           "  --completion-promise T   ralph: the text that ends the loop (default: the row's)\n"
           "  --args JSON              the script's args\n"
           "  --meta JSON              {name?, description?, phases?}\n"
           "  --json                   events as JSON lines on stderr, the result JSON on stdout\n"
           "  --cwd DIR                working directory of the run and its subagents\n"
           "  --session ID             the calling agent's sandbox-policy session\n"
           "  --agent ID               the calling agent's id\n"
           "  --provider NAME          the subagent provider (nested, or command)\n"
           "  --max-total-agents N     lower the row's maxTotalAgents for this run\n"
           "  --profile FILE           the base composition (default: %s)\n"
           "  --patch FILE             a patch layer applied in order (repeatable)\n"
           "  -v, --verbose            log the services and the provider to stderr\n"
           "Progress is printed as it happens. SIGINT/SIGTERM cancel the workflow.\n"
           "Exit status: 0 completed, 1 error or cancelled, 2 usage or a rejected start.\n",
           dshh__path(DSHH_PATH_PROFILE));
}

static int parse(int argc, char **argv, struct wf_host_opts *o, struct wf_opts *w, const char **script)
{
    enum { O_ARGS = 256, O_META, O_JSON, O_PROFILE, O_PATCH, O_CWD, O_SESSION, O_AGENT, O_PROVIDER, O_MAX,
           O_PROMPT, O_ITERATIONS, O_PROMISE };
    static const struct option longopts[] = {
        {"args", required_argument, NULL, O_ARGS},         {"meta", required_argument, NULL, O_META},
        {"json", no_argument, NULL, O_JSON},               {"profile", required_argument, NULL, O_PROFILE},
        {"patch", required_argument, NULL, O_PATCH},       {"cwd", required_argument, NULL, O_CWD},
        {"session", required_argument, NULL, O_SESSION},   {"agent", required_argument, NULL, O_AGENT},
        {"provider", required_argument, NULL, O_PROVIDER}, {"max-total-agents", required_argument, NULL, O_MAX},
        {"prompt", required_argument, NULL, O_PROMPT},     {"max-iterations", required_argument, NULL, O_ITERATIONS},
        {"completion-promise", required_argument, NULL, O_PROMISE},
        {"verbose", no_argument, NULL, 'v'},               {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    bool help = false;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
        switch (ch) {
        case O_ARGS: w->args = optarg; break;
        case O_META: w->meta = optarg; break;
        case O_JSON: o->json = true; break;
        case O_PROFILE: o->profile = optarg; break;
        case O_PATCH: o->patches[o->npatches++] = optarg; break;
        case O_CWD: w->cwd = optarg; break;
        case O_SESSION: w->session = optarg; break;
        case O_AGENT: w->agent = optarg; break;
        case O_PROVIDER: w->provider = optarg; break;
        case O_MAX:
        case O_ITERATIONS: {
            char *end;
            long long n = strtoll(optarg, &end, 10);
            if (end == optarg || *end) {
                dshh__usage_error(ch == O_MAX ? "workflow run" : "workflow ralph", "%s takes an integer",
                                  ch == O_MAX ? "--max-total-agents" : "--max-iterations");
                return -1;
            }
            *(ch == O_MAX ? &w->max_total : &w->max_iterations) = n;
            break;
        }
        case O_PROMPT: *script = optarg; break;
        case O_PROMISE: w->completion_promise = optarg; break;
        case 'v': o->verbose = true; break;
        case 'h': help = true; break;
        case ':':
            dshh__usage_error("workflow run", "option %s needs an argument", argv[optind - 1]);
            return -1;
        default:
            dshh__usage_error("workflow run", "unknown option %s", argv[optind - 1]);
            return -1;
        }
    }
    if (help) {
        usage();
        return 1;
    }
    if (argc - optind >= 1 && !strcmp(argv[optind], "ralph")) {
        w->ralph = true;
        if (argc - optind > 1) {
            dshh__usage_error("workflow ralph", "unexpected argument '%s'", argv[optind + 1]);
            return -1;
        }
        if (!*script) {
            dshh__usage_error("workflow ralph", "missing --prompt FILE");
            return -1;
        }
        return 0;
    }
    if (argc - optind < 1 || strcmp(argv[optind], "run")) {
        dshh__usage_error("workflow run", "expected `dsh workflow run SCRIPT.js` or `dsh workflow ralph --prompt FILE`");
        return -1;
    }
    if (*script || w->max_iterations != -1 || w->completion_promise) {
        dshh__usage_error("workflow run", "--prompt, --max-iterations and --completion-promise are for `workflow ralph`");
        return -1;
    }
    if (argc - optind < 2) {
        dshh__usage_error("workflow run", "missing SCRIPT.js");
        return -1;
    }
    if (argc - optind > 2) {
        dshh__usage_error("workflow run", "unexpected argument '%s'", argv[optind + 2]);
        return -1;
    }
    *script = argv[optind + 1];
    return 0;
}

int dshh__cmd_workflow(int argc, char **argv)
{
    struct wf_host_opts opts = {.profile = dshh__path(DSHH_PATH_PROFILE)};
    struct wf_opts w = {.max_total = -1, .max_iterations = -1};
    const char *script_path = NULL;
    opts.patches = calloc((size_t)argc + 1, sizeof *opts.patches);
    int p = opts.patches ? parse(argc, argv, &opts, &w, &script_path) : -1;
    if (p) {
        free(opts.patches);
        return p < 0 ? DSHH_EXIT_USAGE : DSHH_EXIT_OK;
    }
    int status = DSHH_EXIT_USAGE;
    size_t script_len = 0;
    char *script = dshh__read_text_file(script_path, &script_len), *request = NULL;
    struct dshh_profile profile;
    bool composed = false;
    if (!script) {
        fprintf(stderr, "dsh: %s: %s\n", script_path, strerror(errno));
        goto out;
    }
    if (strlen(script) != script_len) {
        fprintf(stderr, "dsh: %s: the script contains a NUL byte\n", script_path);
        goto out;
    }
    if (!(request = build_request(&w, script)))
        goto out;
    composed = true;
    if (dshh__profile_compose(&profile, opts.profile, (const char *const *)opts.patches, opts.npatches,
                              stderr) || dshh__validate_profile(&profile, true, stderr) != 0)
        goto out;
    struct wf_cmd c = {.json = opts.json};
    struct dshh_host host;
    if (dshh__host_open(&host, &profile, opts.verbose, NULL, 0) == 0) {
        c.host = &host;
        status = run_workflow(&c, &host, &profile, request);
    }
    dshh__host_close(&host);
out:
    if (composed)
        dshh__profile_free(&profile);
    free(script);
    free(request);
    free(opts.patches);
    return status;
}
