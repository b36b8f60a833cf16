/* dsh: the reference host. Composes a profile with patch layers, validates rows against the
 * catalog, mounts the reference Linux services, dlopens the provider and runs programs.
 * See examples/host/README.md. */
#include "dshh.h"
#include "workflow.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#ifndef DSH_DEFAULT_PROFILE
#error "meson passes DSH_DEFAULT_PROFILE (examples/profiles/default.yaml)"
#endif

static void usage(FILE *out)
{
    fputs("usage:\n"
          "  dsh [--profile FILE] [--patch FILE]... --dump-config\n"
          "  dsh [--profile FILE] [--patch FILE]... config validate [FILE]\n"
          "  dsh [--profile FILE] [--patch FILE]... config persistent-patch [--format F]\n"
          "  dsh headless [--profile FILE] [--patch FILE]... [-v]\n"
          "      (--program FILE.ts | -e CODE) [--json] [--cwd DIR] [--timeout-ms N|null]\n"
          "      [--state-owner OWNER] [--session ID] [--discard-completion] [--image ID=PATH]...\n"
          "  dsh headless [--profile FILE] [--patch FILE]... [-v] --serve\n"
          "  dsh workflow run SCRIPT.js [--args JSON] [--json] ...  (dsh workflow --help)\n"
          "      (headless also takes [--initializer FILE]...: environment initializers,\n"
          "       persistent-in-memory only, registered right after the provider loads)\n"
          "  dsh headless [--profile FILE] [--patch FILE]...  (load, print describe(), unload)\n"
          "Exit status: 0 ok, 1 program failure (or invalid rows for config validate),\n"
          "2 usage or configuration error.\n"
          "Default profile: " DSH_DEFAULT_PROFILE "\n",
          out);
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
};

static int parse_options(int argc, char **argv, struct dshh_options *o, int *ret_first)
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
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "e:vh", longopts, NULL)) != -1) {
        switch (c) {
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
            break;
        case OPT_IMAGE:
            if (!strchr(optarg, '=') || optarg[0] == '=') {
                fprintf(stderr, "dsh: --image takes ID=PATH\n");
                return -1;
            }
            o->images[o->nimages++] = optarg;
            break;
        case OPT_DUMP:
            o->dump_config = true;
            break;
        case OPT_SERVE:
            o->serve = true;
            break;
        case OPT_JSON:
            o->json = true;
            break;
        case OPT_PROGRAM:
            o->program_file = optarg;
            break;
        case 'e':
            o->program_code = optarg;
            break;
        case OPT_CWD:
            o->cwd = optarg;
            break;
        case OPT_TIMEOUT: {
            char *end;
            errno = 0;
            if (!strcmp(optarg, "null") || !strcmp(optarg, "none")) {
                o->timeout_ms = -2;
                break;
            }
            o->timeout_ms = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || o->timeout_ms <= 0) {
                fprintf(stderr, "dsh: --timeout-ms takes a positive integer or null\n");
                return -1;
            }
            break;
        }
        case OPT_OWNER:
            o->state_owner = optarg;
            break;
        case OPT_SESSION:
            o->session_id = optarg;
            break;
        case OPT_DISCARD:
            o->discard_completion = true;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'h':
            usage(stdout);
            exit(DSHH_EXIT_OK);
        case OPT_VERSION:
            printf("dsh (host ABI %d.%d)\n", DSH_ABI_MAJOR, DSH_ABI_MINOR);
            exit(DSHH_EXIT_OK);
        default:
            if (optopt)
                fprintf(stderr, "dsh: option -%c needs an argument or is unknown\n", optopt);
            else
                fprintf(stderr, "dsh: unknown option %s\n", argv[optind - 1]);
            return -1;
        }
    }
    *ret_first = optind;
    return 0;
}

/* Program options only make sense with a program; --serve and a program exclude each other. */
static int check_headless(const struct dshh_options *o)
{
    bool program = o->program_file || o->program_code;
    bool run_opts = o->json || o->cwd || o->timeout_ms != -1 || o->state_owner || o->session_id ||
                    o->discard_completion || o->nimages;
    if (o->program_file && o->program_code) {
        fprintf(stderr, "dsh: --program and -e exclude each other\n");
        return -1;
    }
    if (o->serve && (program || run_opts)) {
        fprintf(stderr, "dsh: --serve takes no program options (requests carry them)\n");
        return -1;
    }
    if (!program && run_opts) {
        fprintf(stderr, "dsh: --json, --cwd, --timeout-ms, --state-owner, --session, --image and "
                        "--discard-completion need --program or -e\n");
        return -1;
    }
    if (o->cwd && o->cwd[0] != '/') {
        fprintf(stderr, "dsh: --cwd must be an absolute path\n");
        return -1;
    }
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

static int headless(const struct dshh_options *opts)
{
    struct dshh_profile profile;
    int status = DSHH_EXIT_USAGE;
    if (dshh__profile_compose(&profile, opts->profile, (const char *const *)opts->patches,
                              opts->npatches, stderr))
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
    if (dshh__host_open(&host, opts, &profile) == 0) {
        if (opts->serve)
            status = dshh__cmd_serve(&host, opts);
        else if (opts->program_file || opts->program_code)
            status = dshh__cmd_program(&host, opts);
        else
            status = describe(&host);
    }
    dshh__host_close(&host);
out:
    dshh__profile_free(&profile);
    return status;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "workflow")) /* own options: workflow_cmd.c */
        return dshh__cmd_workflow(argc - 1, argv + 1);
    struct dshh_options opts = {.profile = DSH_DEFAULT_PROFILE, .timeout_ms = -1};
    opts.patches = calloc((size_t)argc, sizeof(*opts.patches));
    opts.initializers = calloc((size_t)argc, sizeof(*opts.initializers));
    opts.images = calloc((size_t)argc, sizeof(*opts.images));
    int first;
    if (!opts.patches || !opts.initializers || !opts.images || parse_options(argc, argv, &opts, &first)) {
        usage(stderr);
        free(opts.patches);
        free(opts.initializers);
        free(opts.images);
        return DSHH_EXIT_USAGE;
    }
    int nwords = argc - first;
    char **words = argv + first;
    int status;
    if (nwords >= 1 && !strcmp(words[0], "config")) {
        status = dshh__cmd_config(&opts, nwords - 1, words + 1);
    } else if ((nwords == 1 && !strcmp(words[0], "headless")) || (nwords == 0 && opts.dump_config)) {
        status = check_headless(&opts) ? DSHH_EXIT_USAGE : headless(&opts);
    } else {
        if (nwords)
            fprintf(stderr, "dsh: unknown command '%s'\n", words[0]);
        usage(stderr);
        status = DSHH_EXIT_USAGE;
    }
    free(opts.patches);
    free(opts.initializers);
    free(opts.images);
    return status;
}
