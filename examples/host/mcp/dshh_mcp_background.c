/* The background runs of dsh mcp's session: what each streamed and nobody read yet, its result
 * until wait_run collects it, and the answers of wait_run, terminate_run and list_runs.
 * examples/host/README.md, "Background runs". */
#include "dshh_mcp_background.h"

#include "dshh_mcp_content.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_run(struct dshh_bg_entry *e)
{
    struct dshh_mcp_bg_run *r = (struct dshh_mcp_bg_run *)e;
    dshh__bg_entry_release(e);
    free(r->description);
    free(r->pending.data);
    free(r);
}

void dshh__mcp_bg_init(struct dshh_mcp_background *bg, uint64_t max_output_bytes, bool show_value)
{
    *bg = (struct dshh_mcp_background){.list = {.free_entry = free_run},
                                       .next_id = 1,
                                       .max_output_bytes = max_output_bytes,
                                       .show_value = show_value};
}

struct dshh_mcp_bg_run *dshh__mcp_bg_add(struct dshh_mcp_background *bg, const char *description)
{
    char id[32];
    snprintf(id, sizeof id, "run-%" PRIu64, bg->next_id);
    struct dshh_mcp_bg_run *r = calloc(1, sizeof(*r));
    if (!r || !(r->description = strdup(description)) || !dshh__bg_link(&bg->list, &r->base, id)) {
        if (r)
            free(r->description);
        free(r);
        return NULL;
    }
    bg->next_id++;
    return r;
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

static json_object *text_item(const char *text, size_t len)
{
    json_object *item = json_object_new_object();
    json_object_object_add(item, "type", json_object_new_string("text"));
    json_object_object_add(item, "text", json_object_new_string_len(text, (int)len));
    return item;
}

json_object *dshh__mcp_bg_answer(struct dshh_mcp_background *bg, struct dshh_mcp_bg_run *r)
{
    bool ended = r->base.result != NULL;
    json_object *answer;
    if (ended && !r->returned) { /* nothing was returned: the whole result, as run_code's */
        answer = dshh__mcp_tool_result(r->base.result, r->base.result_len, bg->max_output_bytes,
                                       bg->show_value);
        dshh__bg_collect(&bg->list, &r->base);
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
        answer = dshh__mcp_tool_result_rest(r->base.result, r->base.result_len,
                                            bg->max_output_bytes, bg->show_value, r->seen, chunk, n);
        dshh__bg_collect(&bg->list, &r->base);
        return answer;
    }
    size_t more = avail - n;
    char note[256];
    if (more)
        snprintf(
            note, sizeof note,
            "[%zu more bytes of output are pending: call wait_run with runId \"%s\" for them%s]",
            more, r->base.id, ended ? " and the result" : "");
    else
        snprintf(note, sizeof note,
                 "[%s is still running: call wait_run with runId \"%s\" for its new output and "
                 "result, terminate_run to stop it]",
                 r->base.id, r->base.id);
    r->returned = true;
    json_object *content = json_object_new_array(), *structured = json_object_new_object();
    /* The output, then the note as an item of its own: the output text stays exactly the program's. */
    json_object_array_add(content, n ? text_item(chunk, n) : text_item("(no new output)", 15));
    json_object_array_add(content, text_item(note, strlen(note)));
    r->taken += n;
    if (r->taken == r->pending.len)
        r->taken = r->pending.len = 0;
    json_object_object_add(structured, "running", json_object_new_boolean(!ended));
    json_object_object_add(structured, "runId", json_object_new_string(r->base.id));
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
    int64_t now = dshh__bg_now_ms();
    for (struct dshh_bg_entry *e = bg->list.head; e; e = e->next) {
        struct dshh_mcp_bg_run *r = (struct dshh_mcp_bg_run *)e;
        int64_t age = now - e->started_ms;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "runId", json_object_new_string(e->id));
        json_object_object_add(o, "description", json_object_new_string(r->description));
        json_object_object_add(o, "running", json_object_new_boolean(!e->result));
        json_object_object_add(o, "ageMs", json_object_new_int64(age));
        json_object_array_add(runs, o);
        char *line = NULL;
        int len = asprintf(&line, "%s %s %" PRId64 " s: %s\n", e->id,
                           e->result ? "ended (wait_run returns its result)" : "running",
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
