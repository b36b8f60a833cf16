/* What the programs of `dsh mcp` can call: the host's `tools` namespace (registerImage, the
 * discovery functions describeTool and searchTools, and the demonstration functions when the
 * demo-tools row asks with `mcp: true`), the dsh-native-bindings rows and the mounted MCP servers;
 * their TypeScript declarations; and the run_code description's part that lists them, whole, or,
 * beyond the declaration budget, as names with one-line summaries that programs ask about at run
 * time (examples/host/README.md, "What the model is told"). */
#include "dshh_mcp_tools.h"

#include "dshh_mcp_typescript.h"
#include "dshh_names.h"
#include "dshh_native_bindings.h"

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_text_buffer.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The functions of the host's tools namespace in `dsh mcp`. */
struct host_fn {
    const char *name;
    bool demo;    /* only with the demo-tools row's mcp: true */
    bool summary; /* the description's list shows a summary (not for what it explains itself) */
    const char *doc;
    const char *signature;
};

static const struct host_fn host_fns[] = {
    {"registerImage", false, true,
     "Registers a PNG or JPEG file (relative to the run's cwd) for Image.get(); resolves to its "
     "attachmentId.",
     "registerImage(input: { path: string; attachmentId?: string }): Promise<string>;"},
    {DSHH_MCP_DESCRIBE_TOOL, false, false,
     "The TypeScript declaration of the function named \"namespace.function\", as text.",
     DSHH_MCP_DESCRIBE_TOOL "(name: string): Promise<string>;"},
    {DSHH_MCP_SEARCH_TOOLS, false, false,
     "The functions whose name or description contains every word of text (any case; \"\" lists "
     "all), as {name, summary}.",
     DSHH_MCP_SEARCH_TOOLS "(text: string): Promise<Array<{ name: string; summary: string }>>;"},
    {"echo", true, false, "Resolves to its argument.", "echo<T>(value: T): Promise<T>;"},
    {"add", true, false, "Resolves to a + b.",
     "add(input: { a: number; b: number }): Promise<number>;"},
    {"sleep", true, false, "Resolves to null after ms milliseconds.",
     "sleep(input: { ms: number }): Promise<null>;"},
    {"fail", true, false, "Rejects with message.",
     "fail(input: { message: string }): Promise<never>;"},
};
#define N_HOST_FNS (sizeof host_fns / sizeof host_fns[0])

#define HOST_HEADER                                                                                \
    "/** The host's own functions. A failed call throws ToolCallError (its member property names " \
    "the function). */\ndeclare const " DSHH_DEMO_GLOBAL ": {\n"

enum entry_kind { ENTRY_HOST, ENTRY_NATIVE, ENTRY_SERVER };

struct dshh_mcp_entry {
    enum entry_kind kind;
    char *qualified;         /* "namespace.function" */
    const char *description; /* borrowed; may be NULL */
    const void *ns;          /* struct dshh_native_ns or dshh_mcp_server */
    const void *fn;          /* struct host_fn, dshh_native_fn or dshh_mcp_tool */
};

static int add_entry(struct dshh_mcp_tools *t, enum entry_kind kind, const char *global,
                     const char *name, const char *description, const void *ns, const void *fn)
{
    struct dshh_mcp_entry *grown = realloc(t->entries, (t->nentries + 1) * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    t->entries = grown;
    struct dshh_mcp_entry *e = &grown[t->nentries];
    *e = (struct dshh_mcp_entry){.kind = kind, .description = description, .ns = ns, .fn = fn};
    if (asprintf(&e->qualified, "%s.%s", global, name) < 0)
        return -ENOMEM;
    t->nentries++;
    return 0;
}

int dshh__mcp_tools_open(struct dshh_mcp_tools *t, struct dshh_host *host,
                         const struct dshh_mcp_downstream *ds, bool demo)
{
    *t = (struct dshh_mcp_tools){.host = host, .ds = ds, .demo = demo};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < N_HOST_FNS; i++)
        if (demo || !host_fns[i].demo)
            rc = add_entry(t, ENTRY_HOST, DSHH_DEMO_GLOBAL, host_fns[i].name, host_fns[i].doc, NULL,
                           &host_fns[i]);
    for (size_t i = 0; rc == 0 && host->native && i < host->native->n; i++) {
        const struct dshh_native_ns *ns = &host->native->ns[i];
        for (size_t k = 0; rc == 0 && k < ns->nfns; k++)
            rc = add_entry(t, ENTRY_NATIVE, ns->global, ns->fns[k].name, NULL, ns, &ns->fns[k]);
    }
    for (size_t i = 0; rc == 0 && i < ds->n; i++) {
        const struct dshh_mcp_server *s = &ds->servers[i];
        for (size_t k = 0; rc == 0 && k < s->ntools; k++)
            rc = add_entry(t, ENTRY_SERVER, s->ident, s->tools[k].ident, s->tools[k].description, s,
                           &s->tools[k]);
    }
    if (rc < 0)
        dshh__mcp_tools_close(t);
    return rc;
}

void dshh__mcp_tools_close(struct dshh_mcp_tools *t)
{
    for (size_t i = 0; i < t->nentries; i++)
        free(t->entries[i].qualified);
    free(t->entries);
    t->entries = NULL;
    t->nentries = 0;
}

void dshh__mcp_tools_bindings(const struct dshh_mcp_tools *t, json_object *bindings)
{
    json_object *ns = json_object_new_object(), *fns = json_object_new_array();
    for (size_t i = 0; i < N_HOST_FNS; i++)
        if (t->demo || !host_fns[i].demo)
            json_object_array_add(fns, json_object_new_string(host_fns[i].name));
    json_object_object_add(ns, "global", json_object_new_string(DSHH_DEMO_GLOBAL));
    json_object_object_add(ns, "functions", fns);
    json_object_array_add(bindings, ns);
    dshh__native_declare(t->host->native, bindings);
    dshh__mcp_downstream_bindings(t->ds, bindings);
}

/* ---- declarations ------------------------------------------------------------------------------ */

static const char *native_ts(enum dshh_native_type type, bool result)
{
    switch (type) {
    case DSHH_NATIVE_VOID: return "void";
    case DSHH_NATIVE_BOOL: return "boolean";
    case DSHH_NATIVE_INT64:
    case DSHH_NATIVE_UINT64:
        return "number | string"; /* beyond 2^53 - 1: the exact digits as a string */
    case DSHH_NATIVE_STRING: return result ? "string | null" : "string";
    case DSHH_NATIVE_JSON: return "unknown";
    default: return "number";
    }
}

static void native_header(const struct dshh_native_ns *ns, FILE *out)
{
    fprintf(out,
            "/** Native functions (dsh-native-bindings row '%s'). A rejected call throws %s (its "
            "member property names the function). */\ndeclare const %s: {\n",
            ns->row_id, ns->error_class ? ns->error_class : "ToolCallError", ns->global);
}

static void native_fn(const struct dshh_native_fn *fn, FILE *out)
{
    fprintf(out, "  /** C function %s. */\n  %s(input%s: {", fn->symbol, fn->name,
            fn->nargs ? "" : "?");
    for (size_t a = 0; a < fn->nargs; a++)
        fprintf(out, " %s: %s;", fn->args[a].name, native_ts(fn->args[a].type, false));
    fprintf(out, "%s}): Promise<%s>;\n", fn->nargs ? " " : "", native_ts(fn->returns, true));
}

static void host_fn_decl(const struct host_fn *fn, FILE *out)
{
    dshh__mcp_doc_comment(fn->doc, out, 2);
    fprintf(out, "  %s\n", fn->signature);
}

/* Every declaration, as the description shows them under the budget. */
static void declare_all(const struct dshh_mcp_tools *t, FILE *out)
{
    fputs(HOST_HEADER, out);
    for (size_t i = 0; i < N_HOST_FNS; i++)
        if (t->demo || !host_fns[i].demo)
            host_fn_decl(&host_fns[i], out);
    fputs("};\n", out);
    for (size_t i = 0; t->host->native && i < t->host->native->n; i++) {
        const struct dshh_native_ns *ns = &t->host->native->ns[i];
        native_header(ns, out);
        for (size_t k = 0; k < ns->nfns; k++)
            native_fn(&ns->fns[k], out);
        fputs("};\n", out);
    }
    dshh__mcp_downstream_declare(t->ds, out);
}

/* The self-contained declaration of one function (tools.describeTool). */
static int declare_entry(const struct dshh_mcp_tools *t, const struct dshh_mcp_entry *e, FILE *out)
{
    switch (e->kind) {
    case ENTRY_HOST:
        fputs(HOST_HEADER, out);
        host_fn_decl(e->fn, out);
        fputs("};\n", out);
        return 0;
    case ENTRY_NATIVE:
        native_header(e->ns, out);
        native_fn(e->fn, out);
        fputs("};\n", out);
        return 0;
    case ENTRY_SERVER: return dshh__mcp_downstream_declare_tool(t->ds, e->qualified, out);
    }
    return -1;
}

/* ---- summaries and discovery ------------------------------------------------------------------- */

#define SUMMARY_MAX 36
/* Bytes of searchTools' text: each word is looked for in every name and description, so the
 * text a program sends bounds the host's work per call. */
#define SEARCH_TEXT_MAX 256

/* The first sentence or line of text, at most SUMMARY_MAX bytes cut at a space (transfer full). */
static char *summary_of(const char *text)
{
    if (!text)
        return strdup("");
    size_t n = 0;
    while (text[n] && text[n] != '\n' && text[n] != '\r' &&
           !(text[n] == '.' && (!text[n + 1] || text[n + 1] == ' ')))
        n++;
    if (n <= SUMMARY_MAX)
        return strndup(text, n);
    size_t cut = SUMMARY_MAX;
    while (cut > SUMMARY_MAX / 2 && text[cut] != ' ')
        cut--;
    if (text[cut] != ' ') /* no space: a cut inside a UTF-8 sequence goes back to its start */
        for (cut = SUMMARY_MAX; cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80; cut--)
            ;
    char *s = malloc(cut + 4);
    if (s)
        snprintf(s, cut + 4, "%.*s...", (int)cut, text);
    return s;
}

static bool contains_nocase(const char *hay, const char *word, size_t n)
{
    for (; hay && *hay; hay++)
        if (strncasecmp(hay, word, n) == 0)
            return true;
    return false;
}

/* Whether every word of text (split at spaces) is in e's name or description, in any case. */
static bool matches(const struct dshh_mcp_entry *e, const char *text)
{
    for (const char *w = text; *w;) {
        size_t n = strcspn(w, " \t\n");
        if (n && !contains_nocase(e->qualified, w, n) && !contains_nocase(e->description, w, n))
            return false;
        w += n;
        w += strspn(w, " \t\n");
    }
    return true;
}

static void reply_json(const struct dshh_mcp_tools *t, dsh_run_id run, uint64_t call,
                       json_object *v)
{
    const char *text = json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS);
    t->host->provider->reply(t->host->instance, run, call, true, text, strlen(text));
}

static void reject(const struct dshh_mcp_tools *t, dsh_run_id run, uint64_t call,
                   const char *message)
{
    t->host->provider->reply(t->host->instance, run, call, false, message, strlen(message));
}

/* The one string argument of a discovery call, or NULL (args is strict JSON from the provider). */
static json_object *string_argument(const char *args_json, size_t args_len, const char **ret)
{
    struct dsh_json_extent extent;
    if (!dsh_json_is_value(args_json, args_len, DSH_JSON_VALUE_MAX_DEPTH + 1, &extent) ||
        extent.depth > 1)
        return NULL;
    json_object *args = dsh_json_parse_strict_value(args_json, args_len);
    *ret = json_object_is_type(args, json_type_array) && json_object_array_length(args) == 1
               ? dsh_json_as_text(json_object_array_get_idx(args, 0))
               : NULL;
    if (!*ret) {
        json_object_put(args);
        return NULL;
    }
    return args;
}

static void describe_tool(const struct dshh_mcp_tools *t, dsh_run_id run, uint64_t call,
                          const char *name)
{
    for (size_t i = 0; i < t->nentries; i++) {
        if (strcmp(t->entries[i].qualified, name) != 0)
            continue;
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        int rc = out ? declare_entry(t, &t->entries[i], out) : -1;
        if (out && fclose(out) != 0)
            rc = -1;
        json_object *v = rc == 0 ? json_object_new_string_len(text, (int)len) : NULL;
        if (v)
            reply_json(t, run, call, v);
        else
            reject(t, run, call, "tools." DSHH_MCP_DESCRIBE_TOOL ": out of memory");
        json_object_put(v);
        free(text);
        return;
    }
    char message[512];
    snprintf(message, sizeof message,
             "tools." DSHH_MCP_DESCRIBE_TOOL
             ": there is no function \"%.*s\"; tools." DSHH_MCP_SEARCH_TOOLS
             "(\"\") lists them all",
             (int)dsh_utf8_cut(name, strlen(name), 200), name);
    reject(t, run, call, message);
}

static void search_tools(const struct dshh_mcp_tools *t, dsh_run_id run, uint64_t call,
                         const char *text)
{
    json_object *found = json_object_new_array();
    for (size_t i = 0; i < t->nentries; i++) {
        const struct dshh_mcp_entry *e = &t->entries[i];
        if (!matches(e, text))
            continue;
        json_object *item = json_object_new_object();
        char *summary = summary_of(e->description);
        json_object_object_add(item, "name", json_object_new_string(e->qualified));
        json_object_object_add(item, "summary", json_object_new_string(summary ? summary : ""));
        free(summary);
        json_object_array_add(found, item);
    }
    reply_json(t, run, call, found);
    json_object_put(found);
}

bool dshh__mcp_tools_call(const struct dshh_mcp_tools *t, dsh_run_id run, uint64_t call,
                          const char *global, const char *name, const char *args_json,
                          size_t args_len, struct dshh_demo_pending **pending)
{
    if (strcmp(global, DSHH_DEMO_GLOBAL) != 0)
        return dshh__host_native_call(t->host, run, call, global, name, args_json, args_len);
    bool discovery = !strcmp(name, DSHH_MCP_DESCRIBE_TOOL) || !strcmp(name, DSHH_MCP_SEARCH_TOOLS);
    if (!discovery) {
        if (t->demo || !strcmp(name, "registerImage"))
            dshh__demo_call(t->host, run, call, name, args_json, args_len, pending);
        else
            reject(t, run, call, "no such function in the tools namespace");
        return true;
    }
    const char *text;
    json_object *args = string_argument(args_json, args_len, &text);
    if (!args) {
        char message[128];
        snprintf(message, sizeof message, "tools.%s expects one string argument", name);
        reject(t, run, call, message);
    } else if (!strcmp(name, DSHH_MCP_DESCRIBE_TOOL)) {
        describe_tool(t, run, call, text);
    } else if (strlen(text) > SEARCH_TEXT_MAX) {
        char message[128];
        snprintf(message, sizeof message, "tools." DSHH_MCP_SEARCH_TOOLS " takes at most %d bytes of text",
                 SEARCH_TEXT_MAX);
        reject(t, run, call, message);
    } else {
        search_tools(t, run, call, text);
    }
    json_object_put(args);
    return true;
}

/* ---- the description ---------------------------------------------------------------------------- */

/* One namespace's line of the listing: "ns: a (summary); b; ..." */
static void list_namespace(const struct dshh_mcp_tools *t, size_t *i, FILE *out)
{
    const struct dshh_mcp_entry *first = &t->entries[*i];
    const char *dot = strchr(first->qualified, '.');
    int glen = (int)(dot - first->qualified);
    fprintf(out, "- %.*s", glen, first->qualified);
    const struct dshh_mcp_server *server = first->kind == ENTRY_SERVER ? first->ns : NULL;
    if (server && strcmp(server->name, server->ident) != 0)
        fprintf(out, " (MCP server \"%s\")", server->name);
    fputs(":", out);
    for (bool more = false; *i < t->nentries; (*i)++, more = true) {
        const struct dshh_mcp_entry *e = &t->entries[*i];
        if (e->ns != first->ns || strncmp(e->qualified, first->qualified, (size_t)glen + 1) != 0)
            break;
        const struct host_fn *host = e->kind == ENTRY_HOST ? e->fn : NULL;
        char *summary = host && !host->summary ? NULL : summary_of(e->description);
        fprintf(out, "%s %s", more ? ";" : "", e->qualified + glen + 1);
        if (summary && *summary)
            fprintf(out, " (%s)", summary);
        free(summary);
    }
    fputs("\n", out);
}

size_t dshh__mcp_tools_describe(const struct dshh_mcp_tools *t, size_t budget, FILE *out)
{
    char *all = NULL;
    size_t len = 0;
    FILE *decl = open_memstream(&all, &len);
    if (decl) {
        declare_all(t, decl);
        if (fclose(decl) != 0)
            len = SIZE_MAX;
    }
    if (all && len <= budget) {
        fprintf(out, "\nThe program can call these functions (await every call):\n\n```ts\n%s```\n",
                all);
    } else {
        fputs("\nThe program can call these functions (await every call). Their TypeScript "
              "declarations are not shown: `await tools." DSHH_MCP_DESCRIBE_TOOL
              "(\"namespace.function\")` returns one as text, `await tools." DSHH_MCP_SEARCH_TOOLS
              "(\"words\")` the functions whose name or description has them all, as [{name, "
              "summary}]. A call works the same whether or not its declaration was read.\n",
              out);
        for (size_t i = 0; i < t->nentries;)
            list_namespace(t, &i, out);
    }
    free(all);
    return len;
}
