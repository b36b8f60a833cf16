/* The downstream MCP server of fuzz_mcp_server.c: `fuzz-mcp-peer SCRIPT STATE_DIR`, started by dsh
 * as a dsh-mcp-bindings server. Each line dsh sends is appended to STATE_DIR/received (the target
 * checks them after). Its first life plays SCRIPT, the fuzz input: segments separated by lines of
 * one "~"; the first is written at start, the next after each line dsh sends. When dsh sends a
 * request whose segment has no answer to it (a strict JSON object with its id and no method), or
 * one with no segment left, the server exits, so dsh never waits for an answer that cannot come
 * (it restarts the server instead). Later lives (STATE_DIR/lives counts them) answer well:
 * initialize, tools/list with the tools "t" and "u", and every tools/call with a text. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_text_file.h"

static void write_all(const char *text, size_t len)
{
    while (len) {
        ssize_t n = write(STDOUT_FILENO, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            exit(0); /* dsh closed our stdout */
        text += n;
        len -= (size_t)n;
    }
}


static int next_life(const char *state)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lives", state);
    int lives = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%d", &lives) != 1)
            lives = 0;
        fclose(f);
    }
    f = fopen(path, "w");
    if (!f)
        exit(1);
    fprintf(f, "%d\n", ++lives);
    fclose(f);
    return lives;
}

/* Does some line of segment answer the request id? */
static bool answers(const char *segment, size_t len, json_object *id)
{
    for (const char *line = segment, *end = segment + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        json_object *msg = dsh_json_parse_strict(line, n), *answer_id;
        bool found = json_object_is_type(msg, json_type_object) && !json_object_object_get_ex(msg, "method", NULL) &&
                     json_object_object_get_ex(msg, "id", &answer_id) && json_object_equal(answer_id, id);
        json_object_put(msg);
        if (found)
            return true;
        line += n + 1;
    }
    return false;
}

static void answer_well(json_object *request)
{
    const char *method = dsh_json_get_text(request, "method");
    json_object *id;
    if (!method || !json_object_object_get_ex(request, "id", &id))
        return;
    json_object *reply = json_object_new_object();
    json_object_object_add(reply, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(reply, "id", json_object_get(id));
    const char *result = NULL;
    if (!strcmp(method, "initialize"))
        result = "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
                 "\"serverInfo\":{\"name\":\"peer\",\"version\":\"1\"}}";
    else if (!strcmp(method, "tools/list"))
        result = "{\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}},"
                 "{\"name\":\"u\",\"inputSchema\":{\"type\":\"object\"}}]}";
    else if (!strcmp(method, "tools/call"))
        result = "{\"content\":[{\"type\":\"text\",\"text\":\"well\"}]}";
    if (result)
        json_object_object_add(reply, "result", dsh_json_parse_strict(result, strlen(result)));
    else
        json_object_object_add(reply, "error", dsh_json_parse_strict("{\"code\":-32601,\"message\":\"no\"}", 31));
    const char *text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
    write_all(text, strlen(text));
    write_all("\n", 1);
    json_object_put(reply);
}

/* SCRIPT's segments: each the lines before a line of one "~" (each line with its newline). */
struct segment {
    const char *text;
    size_t len;
};

static struct segment *split(const char *script, size_t len, size_t *ret_n)
{
    struct segment *segments = calloc(len / 2 + 2, sizeof *segments);
    size_t n = 0;
    segments[0].text = script;
    for (const char *line = script, *end = script + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *next = nl ? nl + 1 : end;
        if (next - line == 2 && line[0] == '~' && nl) {
            segments[++n].text = next;
        } else {
            segments[n].len += (size_t)(next - line);
        }
        line = next;
    }
    *ret_n = n + 1;
    return segments;
}

static void write_segment(const struct segment *s)
{
    write_all(s->text, s->len);
    if (s->len && s->text[s->len - 1] != '\n')
        write_all("\n", 1);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *state = argv[2];
    bool scripted = next_life(state) == 1;
    size_t script_len = 0, nsegments = 0, next = 0;
    char *script = scripted ? dshh__read_text_file(argv[1], &script_len) : NULL;
    if (scripted && !script)
        return 1;
    struct segment *segments = scripted ? split(script, script_len, &nsegments) : NULL;
    if (scripted)
        write_segment(&segments[next++]);
    char path[4096];
    snprintf(path, sizeof path, "%s/received", state);
    int received = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 65536) {
            cap = cap * 2 + 65536;
            buf = realloc(buf, cap);
            if (!buf)
                return 1;
        }
        ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0; /* dsh closed our stdin: the stdio transport's end */
        len += (size_t)n;
        char *nl;
        while ((nl = memchr(buf, '\n', len))) {
            size_t line_len = (size_t)(nl - buf) + 1;
            if (write(received, buf, line_len) != (ssize_t)line_len)
                return 1;
            json_object *msg = dsh_json_parse_strict(buf, line_len - 1), *id = NULL;
            bool request = dsh_json_get_text(msg, "method") && json_object_object_get_ex(msg, "id", &id);
            if (!scripted) {
                answer_well(msg);
            } else {
                bool answered = false;
                if (next < nsegments) {
                    const struct segment *s = &segments[next++];
                    write_segment(s);
                    answered = request && answers(s->text, s->len, id);
                }
                if (request && !answered)
                    return 0;
            }
            json_object_put(msg);
            memmove(buf, nl + 1, len - line_len);
            len -= line_len;
        }
    }
}
