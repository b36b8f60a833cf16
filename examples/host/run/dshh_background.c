/* The list of background runs dsh mcp's sessions and --serve's clients keep (dshh_background.h). */
#include "dshh_background.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t dshh__bg_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool dshh__bg_link(struct dshh_bg_list *list, struct dshh_bg_entry *e, const char *id)
{
    if (!(e->id = strdup(id)))
        return false;
    e->started_ms = dshh__bg_now_ms();
    struct dshh_bg_entry **tail = &list->head;
    while (*tail)
        tail = &(*tail)->next;
    *tail = e;
    return true;
}

size_t dshh__bg_running(const struct dshh_bg_list *list)
{
    size_t n = 0;
    for (const struct dshh_bg_entry *e = list->head; e; e = e->next)
        n += !e->result;
    return n;
}

struct dshh_bg_entry *dshh__bg_find(const struct dshh_bg_list *list, const char *id)
{
    for (struct dshh_bg_entry *e = list->head; e; e = e->next)
        if (!strcmp(e->id, id))
            return e;
    return NULL;
}

void dshh__bg_ended(struct dshh_bg_entry *e, const char *result_json, size_t len)
{
    static const char oom[] = "{\"ok\":false,\"error\":{\"kind\":\"protocol\",\"message\":"
                              "\"dsh: out of memory\"},\"output\":[]}";
    if ((e->result = malloc(len + 1))) {
        memcpy(e->result, result_json, len);
        e->result[len] = '\0';
        e->result_len = len;
    } else if ((e->result = strdup(oom))) {
        e->result_len = sizeof oom - 1;
    }
    e->ended_ms = dshh__bg_now_ms();
}

void dshh__bg_collect(struct dshh_bg_list *list, struct dshh_bg_entry *e)
{
    for (struct dshh_bg_entry **link = &list->head; *link; link = &(*link)->next)
        if (*link == e) {
            *link = e->next;
            break;
        }
    list->free_entry(e);
}

void dshh__bg_expire(struct dshh_bg_list *list, int64_t keep_ms)
{
    int64_t now = dshh__bg_now_ms();
    for (struct dshh_bg_entry **link = &list->head; *link;) {
        struct dshh_bg_entry *e = *link;
        if (e->result && now - e->ended_ms > keep_ms) {
            *link = e->next;
            list->free_entry(e);
        } else {
            link = &e->next;
        }
    }
}

void dshh__bg_free_all(struct dshh_bg_list *list)
{
    while (list->head) {
        struct dshh_bg_entry *e = list->head;
        list->head = e->next;
        list->free_entry(e);
    }
}

void dshh__bg_entry_release(struct dshh_bg_entry *e)
{
    free(e->id);
    free(e->result);
}
