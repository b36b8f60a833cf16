/* The network allow-list, library side (README, "Network allow-list"): the policy's `network`
 * object, the egress proxy of one confinement (dsh-egress-proxy: started, waited for, stopped)
 * and the connections it accounted, as JSON for the run's result. */
#ifndef DSHX_NET_ALLOW_H
#define DSHX_NET_ALLOW_H

#include "services_config.h"

#include <json-c/json.h>
#include <stdbool.h>

struct dsh_strv;

/* A policy's network section; mode "none" when absent. The strings point into the policy's
 * JSON tree (valid while it lives). */
struct dshx__net_allow {
    bool allow_list;
    bool allow_private;
    const char *allow[64 + 1], *deny[64 + 1], *override[64 + 1]; /* NULL-terminated */
};

/* Parses the policy's "network" member (NULL = absent: mode none) strictly: an unknown key, a
 * wrong type or a bad pattern is request-invalid, its message naming the field. */
int dshx__net_allow_parse(json_object *network, struct dshx__net_allow *ret, struct dsh_error *ret_error);

/* Checks the options' lists as create does: 0 or DSH_E_CONFIG_INVALID naming the field. */
int dshx__net_allow_check_options(const char *mode, const char *const *allow, const char *const *deny,
                                  const char *const *override, struct dsh_error *ret_error);

/* The policy text's "network" object for the options (mode none: NULL). */
json_object *dshx__net_allow_policy_json(const struct dshx__config *cfg);

struct dshx__egress;

/* Starts the proxy of one confinement and waits for it to report ready (its start-up only: it
 * resolves nothing before the program asks). Pushes the launcher's options (--netns, --net-port)
 * onto launcher_args and the program's HTTPS_PROXY/https_proxy (the CONNECT port) onto env.
 * 0, DSH_E_SANDBOX_UNAVAILABLE (logged) or -errno. */
int dshx__egress_start(const struct dshx__config *cfg, const struct dshx__net_allow *policy,
                       struct dsh_strv *launcher_args, struct dsh_strv *env, struct dshx__egress **ret);
/* Ends the proxy and frees the handle (NULL ok). */
void dshx__egress_stop(struct dshx__egress *egress);
/* A run begins in the confinement: later reports hold only what it does (the decisions from now
 * on, and the connections still open now with the bytes they carry from now on). */
void dshx__egress_begin_run(struct dshx__egress *egress);

/* The current run's connections so far (all of them before any begin_run), read from the proxy's
 * ledger without waiting for it:
 * {"mode":"allow-list","connections":[{host,port,verdict,reason,bytesSent,bytesReceived,open}],
 *  "refused":N,"omitted":N[,"diagnostic":"..."]}. NULL on out of memory. */
json_object *dshx__egress_report(struct dshx__egress *egress);

#endif /* DSHX_NET_ALLOW_H */
