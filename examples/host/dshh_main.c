/* dsh: the reference host. Composes a profile with patch layers, validates rows against the
 * catalog, mounts the reference Linux services, dlopens the provider and runs programs.
 * See examples/host/README.md. */
#include "dshh_doctor.h"
#include "dshh_dump.h"
#include "dshh_host.h"
#include "dshh_listen.h"
#include "dshh_mcp_http.h"
#include "dshh_mcp_server.h"
#include "dshh_paths.h"
#include "dshh_program_cmd.h"
#include "dshh_serve.h"
#include "dshh_usage.h"
#include "dshh_validate.h"
#include "dshh_workflow_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <unistd.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef DSH_VERSION
#error "meson passes DSH_VERSION (the project version)"
#endif

/* The options of the command line; the commands get only their parts, as typed parameters. */
struct options {
    const char *profile;
    const char **patches;
    size_t npatches;
    bool dump_config;
    bool serve;
    bool mcp; /* dsh mcp */
    bool verbose;
    const char **initializers; /* --initializer FILE, in order */
    size_t ninitializers;
    const char *format;    /* config persistent-patch --format */
    const char **images;   /* --image ID=PATH, in order (program.images points here) */
    const char *sandbox;   /* --sandbox MODE: the policy row's mode */
    const char *workspace; /* --workspace DIR: the policy row's workspaceRoot */
    struct dshh_program_options program; /* --program / -e and its run options */
    struct dshh_mcp_listen_options listen; /* dsh mcp --listen and its options */
};

static void help_global(void)
{
    printf("usage: dsh COMMAND [OPTIONS]\n"
           "Runs TypeScript programs in confined Node.js processes (dsh-ptc-runtime-node).\n"
           "\n"
           "Commands:\n"
           "  headless                 run one program (-e, --program) or serve JSON lines (--serve)\n"
           "  workflow run             run a workflow script (dsh-workflow-ptc)\n"
           "  workflow ralph           run an opt-in Ralph loop (dsh-workflow-ptc, ralph.enabled)\n"
           "  mcp                      an MCP server on stdio with the tool run_code\n"
           "  config validate          check a profile or patch against the catalog\n"
           "  config persistent-patch  print the patch that retains execution state\n"
           "  doctor                   report what this machine gives the sandbox\n"
           "\n"
           "  dsh [--profile FILE] [--patch FILE]... --dump-config   print the composition\n"
           "  dsh --version | --help\n"
           "\n"
           "'dsh COMMAND --help' lists a command's options; the manual is dsh(1).\n"
           "Exit status: 0 ok, 1 program failure, 2 usage or configuration error.\n"
           "Default profile: %s\n",
           dshh__path(DSHH_PATH_PROFILE));
}

static const char composition_help[] =
    "  --profile FILE        the base composition (default: %s)\n"
    "  --patch FILE          a patch layer applied in order (repeatable)\n"
    "  -v, --verbose         log the services and the provider to stderr\n";

/* Shorthands for the dsh-sandbox-policy row (headless and mcp). */
static const char policy_help[] =
    "  --sandbox MODE        the policy row's mode: read-only, workspace-write or\n"
    "                        danger-full-access\n"
    "  --workspace DIR       the policy row's workspaceRoot (default: the current directory)\n";

static void help_headless(void)
{
    printf("usage: dsh headless [OPTIONS] (-e CODE | --program FILE.ts)\n"
           "       dsh headless [OPTIONS] --serve [--listen unix:PATH]\n"
           "       dsh headless [OPTIONS]      load the provider, print describe(), unload\n"
           "\n");
    printf(composition_help, dshh__path(DSHH_PATH_PROFILE));
    printf("%s", policy_help);
    printf("  --initializer FILE    environment initializer (persistent-in-memory; repeatable)\n"
           "Program:\n"
           "  -e, --eval CODE       the program text\n"
           "  --program FILE.ts     the program file ('-' reads stdin)\n"
           "  --json                print the result JSON instead of a summary\n"
           "  --cwd DIR             working directory (absolute; default: the workspace root)\n"
           "  --timeout-ms N|null   elapsed deadline in ms (null: none)\n"
           "  --state-owner OWNER   keep the environment for OWNER (retaining modes)\n"
           "  --session ID          the sandbox-policy session\n"
           "  --discard-completion  do not return the program's value\n"
           "  --image ID=PATH       register a PNG or JPEG before the program starts (repeatable)\n"
           "--serve: one JSON request per line on stdin, one event per line on stdout\n"
           "  (host-abi/schemas/serve.json).\n"
           "  Requests: run {id, program, stream?, stateOwner?, timeoutMs?, cwd?,\n"
           "              discardCompletion?, sessionId?, mode?, bindings?: [{global, functions}],\n"
           "              images?}\n"
           "            reply {run, call, ok, value? | message}   cancel {id, reason?}\n"
           "            release {id, stateOwner}   set-mode {mode, session?, id?}   describe {id?}\n"
           "  Events:   hello {version, abi, provider, describe} (first)   result {id, result}\n"
           "            call {run, call, global, name, args}   output {run, entry} (stream)\n"
           "            abandoned {run, call}   released {id}   mode-set {session, mode, id?}\n"
           "            error {id?, message}\n"
           "  Runs are concurrent; at end of input dsh waits for them, then exits 0.\n"
           "  --listen unix:PATH    serve each client of a Unix socket (mode 0600, at most 64 at\n"
           "                        once) as its own session until SIGTERM/SIGINT; its runs' sessionId\n"
           "                        is the connection's and its stateOwners are its own\n"
           "  The full contract and a captured session: examples/host/README.md.\n"
           "Exit status: 0 ok, 1 program failure, 2 usage or configuration error.\n");
}

static void help_config(const char *sub)
{
    bool validate = sub && !strcmp(sub, "validate"), patch = sub && !strcmp(sub, "persistent-patch");
    if (validate || !patch)
        printf("usage: dsh config validate [OPTIONS] [FILE]\n"
               "  Checks FILE (a profile or a patch: a YAML list of rows) against the catalog, or\n"
               "  without FILE the composition of --profile and --patch. Every error names the\n"
               "  field and its FILE:line:column. A valid composition (FILE as a patch, or as a\n"
               "  profile when it has a provider row) then gets the checks dsh makes at startup:\n"
               "  one provider row, the roots (the workspace defaults to the current directory),\n"
               "  the services and the provider's load. Exit 0 valid, 1 invalid, 2 usage.\n");
    if (patch || !validate)
        printf("usage: dsh config persistent-patch [OPTIONS] [--format F]\n"
               "  Prints the patch that retains execution state for program format F\n"
               "  (async-function, vm-script, scoped-repl, repl; default: the ptc-runtime row's).\n");
    printf("\n");
    printf(composition_help, dshh__path(DSHH_PATH_PROFILE));
}

static void help_mcp(void)
{
    printf("usage: dsh mcp [OPTIONS]\n"
           "  An MCP server on stdin/stdout (JSON-RPC 2.0, protocol revision 2025-11-25) with the\n"
           "  tool run_code {program, description, timeoutMs?, yieldAfterMs?}: output streams as\n"
           "  progress, the result is text and image content, cancellation aborts the run. With\n"
           "  yieldAfterMs a run not ended by then goes on in the background: wait_run {runId,\n"
           "  yieldAfterMs?}, terminate_run {runId}, list_runs. A retaining profile\n"
           "  keeps one stateOwner per session, released at its end. A dsh-mcp-bindings row mounts\n"
           "  downstream MCP servers as namespaces. Exits 0 at the end of input.\n"
           "\n"
           "  --listen ADDR          serve MCP over Streamable HTTP at ADDR/mcp instead of stdio:\n"
           "                         127.0.0.1:PORT, [::1]:PORT or unix:PATH (one session per\n"
           "                         client, /healthz and /readyz; SIGTERM drains and exits 0)\n"
           "  --allow-remote         allow an ADDR that is not loopback\n"
           "  --token-file FILE      the bearer token clients must send (needed unless unix:)\n"
           "  --allow-origin ORIGIN  a browser Origin that may connect (repeatable; others: 403)\n"
           "  --session-idle-ms N    end a session after N ms without requests or runs (%d)\n"
           "  --drain-ms N           after SIGTERM, how long running calls may finish (%d)\n"
           "  --log-format F         the per-run log lines on stderr: text or json (text)\n"
           "  --max-sessions N       sessions open at once (%d)\n"
           "  --max-connections N    HTTP connections at once (%d)\n"
           "  --max-body-bytes N     the largest POST body (%lld)\n"
           "\n",
           DSHH_MCP_HTTP_SESSION_IDLE_MS, DSHH_MCP_HTTP_DRAIN_MS, DSHH_MCP_HTTP_MAX_SESSIONS,
           DSHH_MCP_HTTP_MAX_CONNECTIONS, (long long)DSHH_MCP_HTTP_MAX_BODY_BYTES);
    printf(composition_help, dshh__path(DSHH_PATH_PROFILE));
    printf("%s", policy_help);
    printf("  --initializer FILE    environment initializer (persistent-in-memory; repeatable)\n");
}

static void help_doctor(void)
{
    printf("usage: dsh doctor [OPTIONS]\n"
           "  Prints, one line each, what this machine gives the sandbox: the kernel, Landlock,\n"
           "  seccomp, user and PID namespaces, the Node.js the provider launches (by running a\n"
           "  program) and its bootstrap, and the enforcement of each policy mode under the\n"
           "  composition's sandbox row, then for each capability below full one line saying why.\n"
           "  Exit 0 when workspace-write is fully enforced and the\n"
           "  program ran, 1 otherwise, 2 usage or configuration error.\n"
           "\n");
    printf(composition_help, dshh__path(DSHH_PATH_PROFILE));
}

enum {
    OPT_PROFILE = 256,
    OPT_PATCH,
    OPT_DUMP,
    OPT_SERVE,
    OPT_JSON,
    OPT_PROGRAM,
    OPT_CWD,
    OPT_TIMEOUT,
    OPT_OWNER,
    OPT_SESSION,
    OPT_DISCARD,
    OPT_VERSION,
    OPT_INITIALIZER,
    OPT_IMAGE,
    OPT_FORMAT,
    OPT_SANDBOX,
    OPT_WORKSPACE,
    OPT_LISTEN,
    OPT_ALLOW_REMOTE,
    OPT_TOKEN_FILE,
    OPT_ALLOW_ORIGIN,
    OPT_SESSION_IDLE_MS,
    OPT_DRAIN_MS,
    OPT_LOG_FORMAT,
    OPT_MAX_SESSIONS,
    OPT_MAX_CONNECTIONS,
    OPT_MAX_BODY_BYTES,
};

/* Options of `dsh mcp --listen` only. */
static bool listen_only(int opt)
{
    return opt >= OPT_ALLOW_REMOTE && opt <= OPT_MAX_BODY_BYTES;
}

/* Options that only `dsh headless` takes (their presence elsewhere is a usage error; `dsh mcp`
 * checks its own: it takes --initializer). */
static bool headless_only(int opt)
{
    switch (opt) {
    case OPT_SERVE: case OPT_JSON: case OPT_PROGRAM: case 'e': case OPT_CWD: case OPT_TIMEOUT:
    case OPT_OWNER: case OPT_SESSION: case OPT_DISCARD: case OPT_INITIALIZER: case OPT_IMAGE: case OPT_LISTEN:
        return true;
    default:
        return false;
    }
}

struct parsed {
    bool help;
    bool version;
    const char *headless_option; /* the first headless-only option given ("--cwd", "-e") */
    const char *policy_option;   /* --sandbox or --workspace (headless, mcp, --dump-config) */
    const char *listen_option;   /* the first option of dsh mcp --listen only given */
    bool format_given;
};

/* The entry of longopts whose value is opt. */
static size_t index_of(const struct option *longopts, int opt)
{
    size_t i = 0;
    while (longopts[i].val != opt)
        i++;
    return i;
}

static int parse_options(int argc, char **argv, const char *command, struct options *o,
                         struct parsed *ret, int *ret_first)
{
    static const struct option longopts[] = {
        {"profile", required_argument, NULL, OPT_PROFILE},
        {"patch", required_argument, NULL, OPT_PATCH},
        {"dump-config", no_argument, NULL, OPT_DUMP},
        {"serve", no_argument, NULL, OPT_SERVE},
        {"json", no_argument, NULL, OPT_JSON},
        {"program", required_argument, NULL, OPT_PROGRAM},
        {"eval", required_argument, NULL, 'e'},
        {"cwd", required_argument, NULL, OPT_CWD},
        {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
        {"state-owner", required_argument, NULL, OPT_OWNER},
        {"session", required_argument, NULL, OPT_SESSION},
        {"discard-completion", no_argument, NULL, OPT_DISCARD},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"initializer", required_argument, NULL, OPT_INITIALIZER},
        {"image", required_argument, NULL, OPT_IMAGE},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"sandbox", required_argument, NULL, OPT_SANDBOX},
        {"workspace", required_argument, NULL, OPT_WORKSPACE},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE},
        {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
        {"allow-origin", required_argument, NULL, OPT_ALLOW_ORIGIN},
        {"session-idle-ms", required_argument, NULL, OPT_SESSION_IDLE_MS},
        {"drain-ms", required_argument, NULL, OPT_DRAIN_MS},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
        {"max-sessions", required_argument, NULL, OPT_MAX_SESSIONS},
        {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
        {"max-body-bytes", required_argument, NULL, OPT_MAX_BODY_BYTES},
        {NULL, 0, NULL, 0},
    };
    int c, index = -1;
    static char listen_name[32];
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":e:vh", longopts, &index)) != -1) {
        static char option_name[32];
        if (headless_only(c) && !ret->headless_option) {
            if (index >= 0)
                snprintf(option_name, sizeof option_name, "--%s", longopts[index].name);
            else
                snprintf(option_name, sizeof option_name, "-%c", c);
            ret->headless_option = option_name;
        }
        if (listen_only(c) && !ret->listen_option) {
            snprintf(listen_name, sizeof listen_name, "--%s", longopts[index].name);
            ret->listen_option = listen_name;
        }
        index = -1;
        switch (c) {
        case OPT_LISTEN:
            o->listen.listen = optarg;
            break;
        case OPT_ALLOW_REMOTE:
            o->listen.allow_remote = true;
            break;
        case OPT_TOKEN_FILE:
            o->listen.token_file = optarg;
            break;
        case OPT_ALLOW_ORIGIN:
            o->listen.origins[o->listen.norigins++] = optarg;
            break;
        case OPT_LOG_FORMAT:
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
                return dshh__usage_error(command, "--log-format takes text or json");
            o->listen.log_json = !strcmp(optarg, "json");
            break;
        case OPT_SESSION_IDLE_MS: case OPT_DRAIN_MS: case OPT_MAX_SESSIONS: case OPT_MAX_CONNECTIONS:
        case OPT_MAX_BODY_BYTES: {
            static const struct {
                int opt;
                size_t offset;
                long long max;
            } limits[] = {
                {OPT_SESSION_IDLE_MS, offsetof(struct dshh_mcp_listen_options, session_idle_ms), 86400000},
                {OPT_DRAIN_MS, offsetof(struct dshh_mcp_listen_options, drain_ms), 3600000},
                {OPT_MAX_SESSIONS, offsetof(struct dshh_mcp_listen_options, max_sessions), 4096},
                {OPT_MAX_CONNECTIONS, offsetof(struct dshh_mcp_listen_options, max_connections), 4096},
                {OPT_MAX_BODY_BYTES, offsetof(struct dshh_mcp_listen_options, max_body_bytes), 1LL << 30},
            };
            size_t i = 0;
            while (limits[i].opt != c)
                i++;
            char *end;
            errno = 0;
            long long v = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || v < (c == OPT_DRAIN_MS ? 0 : 1) || v > limits[i].max)
                return dshh__usage_error(command, "--%s takes an integer from %d to %lld",
                                         longopts[index_of(longopts, c)].name, c == OPT_DRAIN_MS ? 0 : 1,
                                         limits[i].max);
            *(int64_t *)((char *)&o->listen + limits[i].offset) = v;
            break;
        }
        case OPT_PROFILE:
            o->profile = optarg;
            break;
        case OPT_PATCH:
            o->patches[o->npatches++] = optarg;
            break;
        case OPT_INITIALIZER:
            o->initializers[o->ninitializers++] = optarg;
            break;
        case OPT_FORMAT:
            o->format = optarg;
            ret->format_given = true;
            break;
        case OPT_IMAGE:
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return dshh__usage_error(command, "--image takes ID=PATH");
            o->images[o->program.nimages++] = optarg;
            break;
        case OPT_SANDBOX:
            o->sandbox = optarg;
            ret->policy_option = "--sandbox";
            break;
        case OPT_WORKSPACE:
            o->workspace = optarg;
            ret->policy_option = "--workspace";
            break;
        case OPT_DUMP:
            o->dump_config = true;
            break;
        case OPT_SERVE:
            o->serve = true;
            break;
        case OPT_JSON:
            o->program.json = true;
            break;
        case OPT_PROGRAM:
            o->program.program_file = optarg;
            break;
        case 'e':
            o->program.program_code = optarg;
            break;
        case OPT_CWD:
            o->program.cwd = optarg;
            break;
        case OPT_TIMEOUT: {
            char *end;
            errno = 0;
            if (!strcmp(optarg, "null") || !strcmp(optarg, "none")) {
                o->program.timeout = DSHH_TIMEOUT_NONE;
                break;
            }
            o->program.timeout = DSHH_TIMEOUT_MS;
            o->program.timeout_ms = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || o->program.timeout_ms <= 0)
                return dshh__usage_error(command, "--timeout-ms takes a positive integer or null");
            break;
        }
        case OPT_OWNER:
            o->program.state_owner = optarg;
            break;
        case OPT_SESSION:
            o->program.session_id = optarg;
            break;
        case OPT_DISCARD:
            o->program.discard_completion = true;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'h':
            ret->help = true;
            break;
        case OPT_VERSION:
            ret->version = true;
            break;
        case ':':
            return dshh__usage_error(command, "option %s needs an argument", argv[optind - 1]);
        default:
            return dshh__usage_error(command, "unknown option %s", argv[optind - 1]);
        }
    }
    *ret_first = optind;
    return 0;
}

/* Program options only make sense with a program; --serve and a program exclude each other. */
static int check_headless(const struct options *o)
{
    const struct dshh_program_options *p = &o->program;
    bool program = p->program_file || p->program_code;
    bool run_opts = p->json || p->cwd || p->timeout != DSHH_TIMEOUT_DEFAULT || p->state_owner || p->session_id ||
                    p->discard_completion || p->nimages;
    if (p->program_file && p->program_code)
        return dshh__usage_error("headless", "--program and -e exclude each other");
    if (o->serve && (program || run_opts))
        return dshh__usage_error("headless", "--serve takes no program options (requests carry them)");
    if (!program && run_opts)
        return dshh__usage_error("headless", "--json, --cwd, --timeout-ms, --state-owner, --session, "
                                             "--image and --discard-completion need --program or -e");
    if (p->cwd && p->cwd[0] != '/')
        return dshh__usage_error("headless", "--cwd must be an absolute path");
    if (o->listen.listen && !o->serve)
        return dshh__usage_error("headless", "--listen needs --serve");
    struct dshh_listen_addr addr;
    char why[256];
    if (o->listen.listen && dshh__listen_parse(o->listen.listen, &addr, why, sizeof why) < 0)
        return dshh__usage_error("headless", "--listen: %s", why);
    if (o->listen.listen && !addr.unix_socket) /* TCP would reach other users and hosts */
        return dshh__usage_error("headless", "--serve --listen accepts only unix:PATH, not \"%s\"", o->listen.listen);
    return 0;
}

static int describe(struct dshh_host *host)
{
    char *json = NULL;
    size_t len = 0;
    struct dsh_error err = {0};
    int rc = host->provider->describe(host->instance, &json, &len, &err);
    if (rc < 0) {
        fprintf(stderr, "dsh: describe failed: %s\n", *err.message ? err.message : dsh_strerror(rc));
        return DSHH_EXIT_USAGE;
    }
    fprintf(stderr, "dsh: loaded %s %s from %s\n", host->provider->name, host->provider->version,
            host->provider_path);
    printf("%.*s\n", (int)len, json);
    host->provider->free_text(json);
    return DSHH_EXIT_OK;
}

/* --workspace DIR: relative to where dsh was started, resolved when it exists (the root checks
 * judge it either way). */
static int absolute_workspace(const char *dir, char *buf, size_t size)
{
    char here[PATH_MAX], joined[2 * PATH_MAX + 2];
    if (dir[0] == '/')
        snprintf(joined, sizeof joined, "%s", dir);
    else if (getcwd(here, sizeof here))
        snprintf(joined, sizeof joined, "%s/%s", here, dir);
    else
        return -1;
    char resolved[PATH_MAX];
    int n = snprintf(buf, size, "%s", realpath(joined, resolved) ? resolved : joined);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The shorthands are layers after the patches, in this order. */
static int apply_policy_options(struct dshh_profile *profile, const struct options *opts)
{
    if (opts->sandbox && dshh__profile_set_policy(profile, "--sandbox", "mode", opts->sandbox, stderr))
        return -1;
    if (!opts->workspace)
        return 0;
    char dir[PATH_MAX];
    if (absolute_workspace(opts->workspace, dir, sizeof dir)) {
        fprintf(stderr, "dsh: --workspace %s: the path is too long\n", opts->workspace);
        return -1;
    }
    return dshh__profile_set_policy(profile, "--workspace", "workspaceRoot", dir, stderr);
}

static int headless(const struct options *opts)
{
    struct dshh_profile profile;
    int status = DSHH_EXIT_USAGE;
    if (dshh__profile_compose(&profile, opts->profile, opts->patches, opts->npatches, stderr) ||
        apply_policy_options(&profile, opts) ||
        (opts->mcp && opts->listen.listen && dshh__mcp_listen_profile(&profile, &opts->listen) < 0))
        goto out;
    if (opts->dump_config) {
        status = dshh__dump_profile(&profile, stdout) ? DSHH_EXIT_USAGE : DSHH_EXIT_OK;
        goto out;
    }
    /* Row errors surface here with FILE:line:col instead of as a provider load failure. Disabled
     * rows are not mounted, so they need not be valid. */
    int invalid = dshh__validate_profile(&profile, true, stderr);
    if (invalid != 0)
        goto out;
    struct dshh_host host;
    if (dshh__host_open(&host, &profile, opts->verbose, opts->initializers, opts->ninitializers) == 0) {
        if (opts->mcp && opts->listen.listen)
            status = dshh__cmd_mcp_listen(&host, &profile, &opts->listen);
        else if (opts->mcp)
            status = dshh__cmd_mcp(&host, &profile);
        else if (opts->serve)
            status = opts->listen.listen ? dshh__cmd_serve_listen(&host, &profile, opts->listen.listen)
                                          : dshh__cmd_serve(&host, &profile);
        else if (opts->program.program_file || opts->program.program_code)
            status = dshh__cmd_program(&host, &opts->program);
        else
            status = describe(&host);
    }
    dshh__host_close(&host);
out:
    dshh__profile_free(&profile);
    return status;
}

/* The commands main() dispatches ("workflow" parses its own options: workflow/dshh_workflow_cmd.c). */
#define DSHH_COMMAND_TABLE(X)                                                                      \
    X(HEADLESS, "headless")                                                                        \
    X(CONFIG, "config")                                                                            \
    X(DOCTOR, "doctor")                                                                            \
    X(MCP, "mcp")

enum command {
    CMD_NONE = -1,
#define DSHH__COMMAND_ENUM(suffix, name) CMD_##suffix,
    DSHH_COMMAND_TABLE(DSHH__COMMAND_ENUM)
#undef DSHH__COMMAND_ENUM
};

static enum command command_of(const char *word)
{
    static const char *const names[] = {
#define DSHH__COMMAND_NAME(suffix, name) [CMD_##suffix] = name,
        DSHH_COMMAND_TABLE(DSHH__COMMAND_NAME)
#undef DSHH__COMMAND_NAME
    };
    for (size_t i = 0; word && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(word, names[i]))
            return (enum command)i;
    return CMD_NONE;
}

/* The command word, for messages before the options are parsed (NULL: none yet). */
static const char *command_word(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (command_of(argv[i]) != CMD_NONE)
            return argv[i];
    return NULL;
}

/* `config SUB`: SUB's own help and options. */
static int config_command(struct options *opts, const struct parsed *p, int nwords, char **words)
{
    const char *sub = nwords >= 2 ? words[1] : NULL;
    bool known = sub && (!strcmp(sub, "validate") || !strcmp(sub, "persistent-patch"));
    char name[64];
    snprintf(name, sizeof name, "config%s%s", known ? " " : "", known ? sub : "");
    if (p->help) {
        help_config(sub);
        return DSHH_EXIT_OK;
    }
    if (!sub)
        return dshh__usage_error("config", "expected validate or persistent-patch");
    if (!known)
        return dshh__usage_error("config", "unknown subcommand '%s'", sub);
    if (p->headless_option || p->policy_option)
        return dshh__usage_error(name, "unknown option %s",
                                 p->headless_option ? p->headless_option : p->policy_option);
    if (p->format_given && strcmp(sub, "persistent-patch") != 0)
        return dshh__usage_error(name, "unknown option --format");
    int max_words = !strcmp(sub, "validate") ? 3 : 2;
    if (nwords > max_words)
        return dshh__usage_error(name, "unexpected argument '%s'", words[max_words]);
    return dshh__cmd_config(opts->profile, opts->patches, opts->npatches, opts->format, nwords - 1, words + 1);
}

static int run_command(struct options *opts, const struct parsed *p, int nwords, char **words)
{
    const char *word = nwords ? words[0] : NULL;
    enum command command = command_of(word);
    if (p->version) {
        printf("dsh %s (host ABI %d.%d)\n", DSH_VERSION, DSH_ABI_MAJOR, DSH_ABI_MINOR);
        return DSHH_EXIT_OK;
    }
    if (word && command == CMD_NONE)
        return dshh__usage_error(NULL, "unknown command '%s'", word);
    if (command == CMD_CONFIG)
        return config_command(opts, p, nwords, words);
    if (p->help) {
        if (command == CMD_HEADLESS)
            help_headless();
        else if (command == CMD_DOCTOR)
            help_doctor();
        else if (command == CMD_MCP)
            help_mcp();
        else
            help_global();
        return DSHH_EXIT_OK;
    }
    if (!word && !opts->dump_config)
        return dshh__usage_error(NULL, "expected a command");
    if (nwords > 1)
        return dshh__usage_error(word, "unexpected argument '%s'", words[1]);
    if (p->format_given)
        return dshh__usage_error(word, "unknown option --format");
    if (command == CMD_MCP) {
        const struct dshh_program_options *run = &opts->program;
        if (opts->serve || run->json || run->program_file || run->program_code || run->cwd ||
            run->timeout != DSHH_TIMEOUT_DEFAULT || run->state_owner || run->session_id || run->discard_completion ||
            run->nimages)
            return dshh__usage_error(word, "takes no program options (run_code calls carry them)");
        if (opts->dump_config)
            return dshh__usage_error(word, "unknown option --dump-config");
        if (p->listen_option && !opts->listen.listen)
            return dshh__usage_error(word, "%s needs --listen ADDR", p->listen_option);
        opts->mcp = true;
        return headless(opts);
    }
    if (p->listen_option)
        return dshh__usage_error(word, "unknown option %s", p->listen_option);
    if (command == CMD_DOCTOR) {
        if (p->headless_option || p->policy_option)
            return dshh__usage_error(word, "unknown option %s",
                                     p->headless_option ? p->headless_option : p->policy_option);
        if (opts->dump_config)
            return dshh__usage_error(word, "unknown option --dump-config");
        return dshh__cmd_doctor(opts->profile, opts->patches, opts->npatches, opts->verbose);
    }
    if (!word && p->headless_option)
        return dshh__usage_error(NULL, "%s is an option of dsh headless", p->headless_option);
    return check_headless(opts) ? DSHH_EXIT_USAGE : headless(opts);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "workflow")) /* own options: workflow_cmd.c */
        return dshh__cmd_workflow(argc - 1, argv + 1);
    struct options opts = {.profile = dshh__path(DSHH_PATH_PROFILE),
                           .listen = {.session_idle_ms = DSHH_MCP_HTTP_SESSION_IDLE_MS,
                                      .drain_ms = DSHH_MCP_HTTP_DRAIN_MS,
                                      .max_sessions = DSHH_MCP_HTTP_MAX_SESSIONS,
                                      .max_connections = DSHH_MCP_HTTP_MAX_CONNECTIONS,
                                      .max_body_bytes = DSHH_MCP_HTTP_MAX_BODY_BYTES}};
    opts.patches = calloc((size_t)argc, sizeof(*opts.patches));
    opts.initializers = calloc((size_t)argc, sizeof(*opts.initializers));
    opts.images = calloc((size_t)argc, sizeof(*opts.images));
    opts.listen.origins = calloc((size_t)argc, sizeof(*opts.listen.origins));
    opts.program.images = opts.images;
    struct parsed parsed = {0};
    int first = argc, status;
    if (!opts.patches || !opts.initializers || !opts.images || !opts.listen.origins) {
        fprintf(stderr, "dsh: out of memory\n");
        status = DSHH_EXIT_USAGE;
    } else if (parse_options(argc, argv, command_word(argc, argv), &opts, &parsed, &first)) {
        status = DSHH_EXIT_USAGE;
    } else {
        status = run_command(&opts, &parsed, argc - first, argv + first);
    }
    free(opts.patches);
    free(opts.initializers);
    free(opts.images);
    free(opts.listen.origins);
    return status;
}
