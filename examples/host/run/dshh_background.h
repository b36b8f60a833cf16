/* What dsh mcp's and --serve's background runs share (dshh_background.c): a list of runs in start
 * order, each with its id, its times and, once ended, the provider's result until collected
 * (examples/host/README.md, "Background runs"). Each transport's run embeds a struct
 * dshh_bg_entry as its first member and keeps its own pending output beside it. */
#ifndef DSHH_BACKGROUND_H
#define DSHH_BACKGROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dshh_bg_entry {
    struct dshh_bg_entry *next;
    char *id;                     /* the runId (JSON text in --serve) */
    int64_t started_ms, ended_ms; /* CLOCK_MONOTONIC; ended_ms 0 while running */
    char *result;                 /* the provider's result once ended */
    size_t result_len;
};

struct dshh_bg_list {
    struct dshh_bg_entry *head;
    void (*free_entry)(struct dshh_bg_entry *entry); /* frees the transport's run around entry */
};

/* Gives e (zeroed by its caller) a copy of id and appends it, started now; false when out of
 * memory (nothing linked). */
bool dshh__bg_link(struct dshh_bg_list *list, struct dshh_bg_entry *e, const char *id);
/* Entries whose run has not ended. */
size_t dshh__bg_running(const struct dshh_bg_list *list);
struct dshh_bg_entry *dshh__bg_find(const struct dshh_bg_list *list, const char *id);
/* The run's result (copied; out of memory: a protocol failure saying so). */
void dshh__bg_ended(struct dshh_bg_entry *e, const char *result_json, size_t len);
/* Unlinks e and frees it with list->free_entry. */
void dshh__bg_collect(struct dshh_bg_list *list, struct dshh_bg_entry *e);
/* Collects the runs that ended more than keep_ms ago. */
void dshh__bg_expire(struct dshh_bg_list *list, int64_t keep_ms);
void dshh__bg_free_all(struct dshh_bg_list *list);
/* Frees what dshh__bg_link and dshh__bg_ended allocated in e (for free_entry). */
void dshh__bg_entry_release(struct dshh_bg_entry *e);
int64_t dshh__bg_now_ms(void);

#endif
