/* The background runs of dsh mcp's session: what each streamed and nobody read yet, its result
 * until wait_run collects it, and the answers of wait_run, terminate_run and list_runs.
 * examples/host/README.md, "Background runs". */
#include "dshh_mcp_background.h"

#include "dshh_mcp_content.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void dshh__mcp_bg_init(struct dshh_mcp_background *bg, uint64_t max_output_bytes, bool show_value)
{
    *bg = (struct dshh_mcp_background){
        .next_id = 1, .max_output_bytes = max_output_bytes, .show_value = show_value};
}

struct dshh_mcp_bg_run *dshh__mcp_bg_add(struct dshh_mcp_background *bg, const char *description)
{
    struct dshh_mcp_bg_run *r = calloc(1, sizeof(*r));
    if (!r || !(r->description = strdup(description))) {
        free(r);
        return NULL;
    }
    snprintf(r->id, sizeof r->id, "run-%" PRIu64, bg->next_id++);
    r->started_ms = now_ms();
    struct dshh_mcp_bg_run **tail = &bg->runs;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    return r;
}

size_t dshh__mcp_bg_running(const struct dshh_mcp_background *bg)
{
    size_t n = 0;
    for (const struct dshh_mcp_bg_run *r = bg->runs; r; r = r->next)
        n += !r->result;
    return n;
}

struct dshh_mcp_bg_run *dshh__mcp_bg_find(struct dshh_mcp_background *bg, const char *id)
{
    for (struct dshh_mcp_bg_run *r = bg->runs; r; r = r->next)
        if (!strcmp(r->id, id))
            return r;
    return NULL;
}

void dshh__mcp_bg_output(struct dshh_mcp_bg_run *r, const char *entry_json, size_t len)
{
    /* The provider holds the run's output within maxOutputBytes, so this text is bounded too. */
    char *message = dshh__mcp_progress_message(entry_json, len);
    r->seen++;
    if (!message)
        return;
    size_t n = strlen(message);
    dsh_text_buffer_write(&r->pending, (unsigned char *)message, n);
    if (!strncmp(message, "[image ", 7))
        dsh_text_buffer_write(&r->pending, (unsigned char *)"\n", 1);
    free(message);
}

void dshh__mcp_bg_ended(struct dshh_mcp_bg_run *r, const char *result_json, size_t len)
{
    r->result = malloc(len + 1);
    if (r->result) {
        memcpy(r->result, result_json, len);
        r->result[len] = '\0';
        r->result_len = len;
    } else {
        static const char oom[] = "{\"ok\":false,\"error\":{\"kind\":\"protocol\",\"message\":"
                                  "\"dsh: out of memory\"},\"output\":[]}";
        r->result = strdup(oom);
        r->result_len = r->result ? sizeof oom - 1 : 0;
    }
    r->ended_ms = now_ms();
}

static void free_run(struct dshh_mcp_bg_run *r)
{
    free(r->description);
    free(r->pending.data);
    free(r->result);
    free(r);
}

static void collect(struct dshh_mcp_background *bg, struct dshh_mcp_bg_run *r)
{
    for (struct dshh_mcp_bg_run **link = &bg->runs; *link; link = &(*link)->next)
        if (*link == r) {
            *link = r->next;
            break;
        }
    free_run(r);
}

static json_object *text_item(const char *text, size_t len)
{
    json_object *item = json_object_new_object();
    json_object_object_add(item, "type", json_object_new_string("text"));
    json_object_object_add(item, "text", json_object_new_string_len(text, (int)len));
    return item;
}

json_object *dshh__mcp_bg_answer(struct dshh_mcp_background *bg, struct dshh_mcp_bg_run *r)
{
    bool ended = r->result != NULL;
    json_object *answer;
    if (ended && !r->returned) { /* nothing was returned: the whole result, as run_code's */
        answer =
            dshh__mcp_tool_result(r->result, r->result_len, bg->max_output_bytes, bg->show_value);
        collect(bg, r);
        return answer;
    }
    size_t avail = r->pending.len - r->taken, n = avail;
    if (n > DSHH_MCP_WAIT_MAX_BYTES) {
        n = DSHH_MCP_WAIT_MAX_BYTES;
        /* Whole lines where there is one, else whole UTF-8 characters. */
        const char *base = r->pending.data + r->taken;
        size_t cut = n;
        while (cut > 0 && base[cut - 1] != '\n')
            cut--;
        if (cut == 0)
            while (n > 0 && ((unsigned char)base[n] & 0xC0) == 0x80)
                n--;
        else
            n = cut;
    }
    const char *chunk = r->pending.data ? r->pending.data + r->taken : "";
    if (ended && n == avail) {
        answer = dshh__mcp_tool_result_rest(r->result, r->result_len, bg->max_output_bytes,
                                            bg->show_value, r->seen, chunk, n);
        collect(bg, r);
        return answer;
    }
    size_t more = avail - n;
    char note[256];
    if (more)
        snprintf(
            note, sizeof note,
            "[%zu more bytes of output are pending: call wait_run with runId \"%s\" for them%s]",
            more, r->id, ended ? " and the result" : "");
    else
        snprintf(note, sizeof note,
                 "[%s is still running: call wait_run with runId \"%s\" for its new output and "
                 "result, terminate_run to stop it]",
                 r->id, r->id);
    r->returned = true;
    json_object *content = json_object_new_array(), *structured = json_object_new_object();
    /* The output, then the note as an item of its own: the output text stays exactly the program's. */
    json_object_array_add(content, n ? text_item(chunk, n) : text_item("(no new output)", 15));
    json_object_array_add(content, text_item(note, strlen(note)));
    r->taken += n;
    if (r->taken == r->pending.len)
        r->taken = r->pending.len = 0;
    json_object_object_add(structured, "running", json_object_new_boolean(!ended));
    json_object_object_add(structured, "runId", json_object_new_string(r->id));
    json_object_object_add(structured, "pendingBytes", json_object_new_int64((int64_t)more));
    answer = json_object_new_object();
    json_object_object_add(answer, "content", content);
    json_object_object_add(answer, "structuredContent", structured);
    json_object_object_add(answer, "isError", json_object_new_boolean(0));
    return answer;
}

json_object *dshh__mcp_bg_list(struct dshh_mcp_background *bg)
{
    struct dsh_text_buffer text = {0};
    json_object *runs = json_object_new_array();
    int64_t now = now_ms();
    for (struct dshh_mcp_bg_run *r = bg->runs; r; r = r->next) {
        int64_t age = now - r->started_ms;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "runId", json_object_new_string(r->id));
        json_object_object_add(o, "description", json_object_new_string(r->description));
        json_object_object_add(o, "running", json_object_new_boolean(!r->result));
        json_object_object_add(o, "ageMs", json_object_new_int64(age));
        json_object_array_add(runs, o);
        char *line = NULL;
        int len = asprintf(&line, "%s %s %" PRId64 " s: %s\n", r->id,
                           r->result ? "ended (wait_run returns its result)" : "running",
                           age / 1000, r->description);
        if (len > 0)
            dsh_text_buffer_write(&text, (unsigned char *)line, (size_t)len);
        free(line);
    }
    if (!text.len)
        dsh_text_buffer_write(&text, (unsigned char *)"(no background runs)", 20);
    json_object *answer = json_object_new_object(), *content = json_object_new_array(),
                *structured = json_object_new_object();
    json_object_array_add(content, text_item(text.data, text.len));
    free(text.data);
    json_object_object_add(structured, "runs", runs);
    json_object_object_add(answer, "content", content);
    json_object_object_add(answer, "structuredContent", structured);
    json_object_object_add(answer, "isError", json_object_new_boolean(0));
    return answer;
}

void dshh__mcp_bg_expire(struct dshh_mcp_background *bg)
{
    int64_t now = now_ms();
    for (struct dshh_mcp_bg_run **link = &bg->runs; *link;) {
        struct dshh_mcp_bg_run *r = *link;
        if (r->result && now - r->ended_ms > DSHH_MCP_KEEP_MS) {
            *link = r->next;
            free_run(r);
        } else {
            link = &r->next;
        }
    }
}

void dshh__mcp_bg_free(struct dshh_mcp_background *bg)
{
    for (struct dshh_mcp_bg_run *r = bg->runs, *next; r; r = next) {
        next = r->next;
        free_run(r);
    }
    bg->runs = NULL;
}
