/* The sandboxPolicy service: the standing policy of each session (the composition's default
 * mode and workspace root, plus per-session overrides) and mode-change events. The default mode
 * is read-only unless the composition says otherwise: the fail-safe. */
#include "services.h"
#include "net_allow.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

struct override {
    char *session;
    char *mode;
};

struct subscriber {
    uint64_t id;
    dsh_mode_change_fn fn;
    void *userdata;
    bool active;
};

struct dshx__policy {
    const struct dshx__config *cfg;
    struct override *ov;
    size_t nov;
    struct subscriber *subs;
    size_t nsubs;
    uint64_t next_sub;
    int notifying; /* > 0 while callbacks run: unsubscribe only marks */
};

static const char *session_name(const char *session_id)
{
    return session_id ? session_id : DSHX_DEFAULT_SESSION;
}

static struct override *find(struct dshx__policy *p, const char *session)
{
    for (size_t i = 0; i < p->nov; i++)
        if (strcmp(p->ov[i].session, session) == 0)
            return &p->ov[i];
    return NULL;
}

static const char *mode_of(struct dshx__policy *p, const char *session)
{
    struct override *o = find(p, session);
    return o ? o->mode : p->cfg->default_mode;
}

static int resolve(void *ctx, const char *session_id, char *buf, size_t buflen)
{
    struct dshx__policy *p = ctx;
    if (!buf && buflen)
        return DSH_E_REQUEST_INVALID;
    const char *session = session_name(session_id);
    json_object *o = json_object_new_object();
    if (!o)
        return -ENOMEM;
    json_object_object_add(o, "mode", json_object_new_string(mode_of(p, session)));
    json_object_object_add(o, "workspaceRoot", json_object_new_string(p->cfg->workspace_root));
    json_object_object_add(o, "sessionId", json_object_new_string(session));
    json_object *network = dshx__net_allow_policy_json(p->cfg); /* absent: mode none */
    if (network)
        json_object_object_add(o, "network", network);
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    size_t n = text ? strlen(text) : 0;
    if (text && buflen) {
        size_t k = n < buflen - 1 ? n : buflen - 1;
        memcpy(buf, text, k);
        buf[k] = '\0';
    }
    json_object_put(o);
    return text ? (int)n : -ENOMEM;
}

static int subscribe(void *ctx, dsh_mode_change_fn on_change, void *userdata,
                     uint64_t *ret_subscription)
{
    struct dshx__policy *p = ctx;
    if (!on_change || !ret_subscription)
        return DSH_E_REQUEST_INVALID;
    struct subscriber *s = realloc(p->subs, (p->nsubs + 1) * sizeof(*s));
    if (!s)
        return -ENOMEM;
    p->subs = s;
    p->subs[p->nsubs++] = (struct subscriber){
        .id = ++p->next_sub, .fn = on_change, .userdata = userdata, .active = true};
    *ret_subscription = p->next_sub;
    return 0;
}

static void compact(struct dshx__policy *p)
{
    size_t k = 0;
    for (size_t i = 0; i < p->nsubs; i++)
        if (p->subs[i].active)
            p->subs[k++] = p->subs[i];
    p->nsubs = k;
}

static int unsubscribe(void *ctx, uint64_t subscription)
{
    struct dshx__policy *p = ctx;
    for (size_t i = 0; i < p->nsubs; i++) {
        if (p->subs[i].id == subscription && p->subs[i].active) {
            p->subs[i].active = false;
            if (!p->notifying)
                compact(p);
            return 0;
        }
    }
    return DSH_E_NOT_FOUND;
}

int dshx__policy_set_mode(struct dshx__policy *p, const char *session_id, const char *mode,
                          struct dsh_error *ret_error)
{
    if (!mode || !dshx__mode_valid(mode))
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "unknown sandbox mode");
    const char *session = session_name(session_id);
    if (strcmp(mode_of(p, session), mode) == 0)
        return 0; /* no change, no event */
    struct override *o = find(p, session);
    char *m = strdup(mode);
    if (!m)
        return dshx__fail(ret_error, -ENOMEM, "out of memory");
    if (o) {
        free(o->mode);
        o->mode = m;
    } else {
        struct override *ov = realloc(p->ov, (p->nov + 1) * sizeof(*ov));
        char *s = strdup(session);
        if (!ov || !s) {
            if (ov)
                p->ov = ov;
            free(s);
            free(m);
            return dshx__fail(ret_error, -ENOMEM, "out of memory");
        }
        p->ov = ov;
        p->ov[p->nov++] = (struct override){.session = s, .mode = m};
    }
    /* Committed: resolve() already answers the new mode. Subscribers added by a callback are
     * not called for this change. */
    p->notifying++;
    size_t n = p->nsubs;
    for (size_t i = 0; i < n; i++)
        if (p->subs[i].active)
            p->subs[i].fn(p->subs[i].userdata, session, mode);
    if (--p->notifying == 0)
        compact(p);
    return 0;
}

int dshx__policy_create(const struct dshx__config *cfg, struct dsh_sandbox_policy_service *vt,
                        struct dshx__policy **ret_policy)
{
    struct dshx__policy *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->cfg = cfg;
    *vt = (struct dsh_sandbox_policy_service){
        .struct_size = sizeof(*vt),
        .abi_major = DSH_ABI_MAJOR,
        .abi_minor = DSH_ABI_MINOR,
        .ctx = p,
        .resolve = resolve,
        .subscribe = subscribe,
        .unsubscribe = unsubscribe,
    };
    *ret_policy = p;
    return 0;
}

void dshx__policy_destroy(struct dshx__policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nov; i++) {
        free(p->ov[i].session);
        free(p->ov[i].mode);
    }
    free(p->ov);
    free(p->subs);
    free(p);
}
