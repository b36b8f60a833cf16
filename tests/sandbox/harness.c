/* Test harness for the hostile sandbox suite (see harness.h). */
#include "harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUN_TIMEOUT_MS 20000
#define OUTPUT_CAP (1 << 20)

static const char prelude[] =
    "const fs=require('fs'),cp=require('child_process'),path=require('path'),os=require('os'),"
    "net=require('net');"
    "const E=process.env,WS=E.DSH_T_WS,OUT=E.DSH_T_OUT,SH=E.DSH_T_SHARED,SEC=E.DSH_T_SECRET;"
    "const show=(t,v)=>console.log(t+':OK'+(v===undefined?'':':'+String(v).replace(/\\n/g,' ')));"
    "const fail=(t,e)=>console.log(t+':'+((e&&e.code)||(e&&e.message)||String(e)));"
    "const R=(t,f)=>{try{show(t,f())}catch(e){fail(t,e)}};"
    "const RA=async(t,f)=>{try{show(t,await f())}catch(e){fail(t,e)}};"
    "const P=(...a)=>{const r=cp.spawnSync(E.DSH_T_PROBE,a,{encoding:'utf8',timeout:10000});"
    "if(r.error)return 'SPAWN-'+(r.error.code||r.error.message);"
    "return (r.stdout||'').trim()||('SIG-'+r.signal)};"
    "const RP=(t,...a)=>console.log(t+':'+P(...a));\n";

static void mkdir_p(const char *path)
{
    cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
}

void fx_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    cr_assert(f, "fopen %s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

char *fx_read(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    fclose(m);
    return buf;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    cr_assert(in >= 0 && out >= 0, "copy %s -> %s: %s", from, to, strerror(errno));
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0)
        cr_assert(write(out, buf, (size_t)n) == n);
    close(in);
    close(out);
}

/* ---- snapshot of everything outside the workspace ---- */

static unsigned long long hash_file(const char *path)
{
    unsigned long long h = 1469598103934665603ULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    unsigned char buf[8192];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 1099511628211ULL;
    close(fd);
    return h;
}

static void snap_dir(FILE *m, const char *dir, const struct fx *f)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0)
        return;
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (strcmp(name, ".") && strcmp(name, "..") && strcmp(path, f->ws)) {
            struct stat st;
            if (lstat(path, &st) == 0) {
                /* The temp root and the instance's directory in it: their times move with
                 * every private dir (whose names are still listed) */
                if (strcmp(path, f->tmproot) != 0 && strcmp(dir, f->tmproot) != 0)
                    fprintf(m, "%s|%o|%lld|%llu|%lu|%lld.%09ld|%lld.%09ld", path, st.st_mode,
                            (long long)st.st_size, (unsigned long long)st.st_ino,
                            (unsigned long)st.st_nlink, (long long)st.st_mtim.tv_sec,
                            st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
                if (S_ISREG(st.st_mode)) {
                    fprintf(m, "|%llx", hash_file(path));
                } else if (S_ISLNK(st.st_mode)) {
                    char t[4096] = "";
                    ssize_t k = readlink(path, t, sizeof(t) - 1);
                    fprintf(m, "|->%.*s", (int)(k > 0 ? k : 0), t);
                }
                fputc('\n', m);
                if (S_ISDIR(st.st_mode))
                    snap_dir(m, path, f);
            }
        }
        free(ents[i]);
    }
    free(ents);
}

static char *snapshot(const struct fx *f)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    snap_dir(m, f->root, f);
    fclose(m);
    return buf;
}

void fx_snapshot(struct fx *f)
{
    free(f->snapshot);
    f->snapshot = snapshot(f);
}

bool fx_outside_unchanged(struct fx *f)
{
    char *now = snapshot(f);
    bool same = strcmp(now, f->snapshot) == 0;
    if (!same)
        cr_log_error("outside the workspace changed:\n--- before\n%s--- after\n%s", f->snapshot,
                     now);
    free(now);
    return same;
}

/* ---- fixture ---- */

void fx_setup(struct fx *f, const struct fx_options *o)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->root, sizeof(f->root), "/tmp/dsh-sbx-XXXXXX");
    cr_assert(mkdtemp(f->root), "mkdtemp: %s", strerror(errno));
    chmod(f->root, 0755);
    snprintf(f->ws, sizeof(f->ws), "%s/ws", f->root);
    snprintf(f->outside, sizeof(f->outside), "%s/outside", f->root);
    snprintf(f->shared, sizeof(f->shared), "%s/shared", f->root);
    snprintf(f->secret, sizeof(f->secret), "%s/secret", f->root);
    snprintf(f->tmproot, sizeof(f->tmproot), "%s/tmp", f->root);
    snprintf(f->extra, sizeof(f->extra), "%s/extra", f->root);
    char p[512];
    mkdir_p(f->ws);
    mkdir_p(f->outside);
    mkdir_p(f->shared);
    mkdir_p(f->secret);
    mkdir_p(f->tmproot);
    mkdir_p(f->extra);
    snprintf(p, sizeof(p), "%s/dir", f->outside);
    mkdir_p(p);
    snprintf(p, sizeof(p), "%s/victim.txt", f->outside);
    fx_write(p, "outside-original\n");
    snprintf(p, sizeof(p), "%s/victim.txt", f->shared);
    fx_write(p, "shared-original\n");
    snprintf(p, sizeof(p), "%s/empty", f->shared);
    mkdir_p(p);
    snprintf(p, sizeof(p), "%s/.ssh", f->secret);
    mkdir_p(p);
    snprintf(p, sizeof(p), "%s/.ssh/id_rsa", f->secret);
    fx_write(p, "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n");
    snprintf(p, sizeof(p), "%s/probe", f->ws);
    copy_file(DSH_TEST_PROBE, p, 0755);

    const char *readable[] = {f->shared, NULL};
    const char *writable[] = {f->extra, NULL};
    struct dsh_linux_services_options opt = {
        .struct_size = sizeof(opt),
        .launcher_path = DSH_TEST_LAUNCHER,
        .supervisor_path = DSH_TEST_SUPERVISOR,
        .extra_writable_roots = writable,
        .max_landlock_abi = o ? o->max_landlock_abi : 0,
        .default_mode = RO,
        .workspace_root = f->ws,
        .extra_readable_roots = readable,
        .temp_root = f->tmproot,
        .max_processes = o ? o->max_processes : 0,
        .disable_namespaces = o ? o->no_namespaces : false,
        .cgroup_root = o ? o->cgroup_root : NULL,
    };
    struct dsh_error err = {0};
    int rc = dsh_linux_services_create(&opt, &f->svc, &err);
    cr_assert(rc == 0, "services: %s", err.message);
    fx_snapshot(f);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void fx_teardown(struct fx *f)
{
    if (f->decoy > 0) {
        kill(f->decoy, SIGKILL);
        waitpid(f->decoy, NULL, 0);
    }
    dsh_linux_services_destroy(f->svc);
    if (f->root[0])
        nftw(f->root, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
    free(f->snapshot);
}

/* ---- runs ---- */

struct confined {
    bool called;
    int status;
    struct dsh_confinement *conf;
};

static void on_confined(void *userdata, int status, struct dsh_confinement *conf)
{
    struct confined *c = userdata;
    c->called = true;
    c->status = status;
    c->conf = conf;
}

static char **env_with_fixture(struct fx *f, const char *const *conf_env, const char *const *extra)
{
    size_t n = 9;
    for (size_t i = 0; conf_env && conf_env[i]; i++)
        n++;
    for (size_t i = 0; extra && extra[i]; i++)
        n++;
    char **env = calloc(n + 1, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; conf_env && conf_env[i]; i++)
        env[k++] = strdup(conf_env[i]);
    const struct {
        const char *name, *value;
    } fixed[] = {{"DSH_T_WS", f->ws},
                 {"DSH_T_OUT", f->outside},
                 {"DSH_T_SHARED", f->shared},
                 {"DSH_T_SECRET", f->secret},
                 {"DSH_T_ROOT", f->root},     {"DSH_T_EXTRA", f->extra}};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        cr_assert(asprintf(&env[k++], "%s=%s", fixed[i].name, fixed[i].value) > 0);
    cr_assert(asprintf(&env[k++], "DSH_T_PROBE=%s/probe", f->ws) > 0);
    cr_assert(asprintf(&env[k++], "DSH_T_DECOY=%d", (int)f->decoy) > 0);
    for (size_t i = 0; extra && extra[i]; i++)
        env[k++] = strdup(extra[i]);
    return env;
}

static int live_start_argv(struct fx *f, const char *mode, const char *const *argv,
                           const char *const *env, const struct range_limits *limits, struct live *l)
{
    memset(l, 0, sizeof(*l));
    l->f = f;
    const struct range_limits none = {0}, *lim = limits ? limits : &none;
    const struct dsh_sandbox_service *sb = dsh_linux_sandbox(f->svc);
    char policy[1024];
    snprintf(policy, sizeof(policy),
             "{\"mode\":\"%s\",\"workspaceRoot\":\"%s\",\"sessionId\":\"t\"}", mode, f->ws);
    struct confined c = {0};
    uint64_t op = 0;
    int rc = sb->confine(sb->ctx, argv, policy, strlen(policy), on_confined, &c, &op);
    if (rc < 0)
        return rc;
    cr_assert(c.called, "confine completes synchronously without a delay");
    if (c.status < 0)
        return c.status;
    l->conf = c.conf;
    char **full_env = env_with_fixture(f, c.conf->env, env);
    struct dsh_spawn_request req = {
        .struct_size = sizeof(req),
        .argv = c.conf->argv,
        .env = (const char *const *)full_env,
        .cwd = f->ws,
        .max_memory_bytes = lim->memory_bytes,
        .max_processes = lim->processes,
        .max_cpu_percent = lim->cpu_percent,
    };
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f->svc);
    struct dsh_error err = {0};
    rc = sp->spawn(sp->ctx, &req, &l->proc, &err);
    for (char **e = full_env; *e; e++)
        free(*e);
    free(full_env);
    cr_assert(rc == 0, "spawn: %s", err.message);
    return 0;
}

static int live_start_js(struct fx *f, const char *mode, const char *js, const char *const *env,
                         const struct range_limits *limits, struct live *l)
{
    char *program = NULL;
    cr_assert(asprintf(&program, "%s%s", prelude, js) > 0);
    const char *argv[] = {DSH_TEST_NODE, "-e", program, NULL};
    int rc = live_start_argv(f, mode, argv, env, limits, l);
    free(program);
    return rc;
}

int live_start(struct fx *f, const char *mode, const char *js, const char *const *env,
               struct live *l)
{
    return live_start_js(f, mode, js, env, NULL, l);
}

int live_start_limited(struct fx *f, const char *mode, const char *js, const struct range_limits *limits,
                       struct live *l)
{
    return live_start_js(f, mode, js, NULL, limits, l);
}

/* Reads what is there; returns false once the writer side is gone (EOF). */
static bool drain(int fd, char **buf, size_t *len)
{
    char chunk[8192];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
        if (*len + (size_t)n > OUTPUT_CAP)
            continue;
        *buf = realloc(*buf, *len + (size_t)n + 1);
        memcpy(*buf + *len, chunk, (size_t)n);
        *len += (size_t)n;
        (*buf)[*len] = '\0';
    }
    return n < 0; /* EAGAIN: still open */
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool live_pump(struct live *l, int ms)
{
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(l->f->svc);
    struct dsh_process *p = l->proc;
    long long deadline = now_ms() + ms;
    do {
        /* Pipes at EOF would make poll return at once: watch only the open ones. */
        struct pollfd fds[4] = {{.fd = l->eof[0] ? -1 : p->stdout_fd, .events = POLLIN},
                                {.fd = l->eof[1] ? -1 : p->stderr_fd, .events = POLLIN},
                                {.fd = l->eof[2] ? -1 : p->control_fd, .events = POLLIN},
                                {.fd = p->quiescence_fd, .events = POLLIN}};
        long long left = deadline - now_ms();
        (void)poll(fds, 4, left > 0 ? (int)left : 0);
        if (!l->eof[0])
            l->eof[0] = !drain(p->stdout_fd, &l->out, &l->nout);
        if (!l->eof[1])
            l->eof[1] = !drain(p->stderr_fd, &l->err, &l->nerr);
        if (!l->eof[2])
            l->eof[2] = !drain(p->control_fd, &l->ctl, &l->nctl);
        if (!l->quiescent)
            l->quiescent = sp->poll_quiescent(sp->ctx, p, &l->st);
        if (l->quiescent) { /* the range is gone: whatever it wrote is in the pipes now */
            drain(p->stdout_fd, &l->out, &l->nout);
            drain(p->stderr_fd, &l->err, &l->nerr);
            return true;
        }
    } while (now_ms() < deadline);
    return false;
}

void live_end(struct live *l, struct run *ret)
{
    memset(ret, 0, sizeof(*ret));
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(l->f->svc);
    const struct dsh_sandbox_service *sb = dsh_linux_sandbox(l->f->svc);
    if (l->proc) {
        if (!l->quiescent) {
            ret->timed_out = true;
            sp->terminate(sp->ctx, l->proc, 0);
            (void)live_pump(l, 10000);
        }
        ret->quiescent = l->quiescent;
        ret->st = l->st;
        ret->usage.struct_size = sizeof(ret->usage);
        ret->usage_status = sp->usage(sp->ctx, l->proc, &ret->usage);
        close(l->proc->stdout_fd);
        close(l->proc->stderr_fd);
        close(l->proc->control_fd);
        sp->release(sp->ctx, l->proc);
    }
    if (l->conf) {
        ret->report = strdup(l->conf->report_json);
        sb->release_confinement(sb->ctx, l->conf);
    }
    ret->out = l->out ? l->out : strdup("");
    ret->err = l->err ? l->err : strdup("");
    ret->ctl = l->ctl ? l->ctl : strdup("");
    if (ret->out[0] || ret->err[0])
        cr_log_info("stdout:\n%s\nstderr:\n%s", ret->out, ret->err);
}

void fx_run_argv(struct fx *f, const char *mode, const char *const *argv, const char *const *env,
                 int timeout_ms, struct run *ret)
{
    struct live l;
    int rc = live_start_argv(f, mode, argv, env, NULL, &l);
    if (rc < 0) {
        memset(ret, 0, sizeof(*ret));
        ret->confine_status = rc;
        ret->out = strdup("");
        ret->err = strdup("");
        ret->ctl = strdup("");
        return;
    }
    (void)live_pump(&l, timeout_ms);
    live_end(&l, ret);
}

void fx_run_limited(struct fx *f, const char *mode, const char *js, const struct range_limits *limits,
                    struct run *ret)
{
    struct live l;
    int rc = live_start_limited(f, mode, js, limits, &l);
    cr_assert_eq(rc, 0, "confine: %d", rc);
    (void)live_pump(&l, RUN_TIMEOUT_MS);
    live_end(&l, ret);
}

void fx_run(struct fx *f, const char *mode, const char *js, const char *const *env, struct run *ret)
{
    char *program = NULL;
    cr_assert(asprintf(&program, "%s%s", prelude, js) > 0);
    const char *argv[] = {DSH_TEST_NODE, "-e", program, NULL};
    fx_run_argv(f, mode, argv, env, RUN_TIMEOUT_MS, ret);
    free(program);
}

void run_free(struct run *r)
{
    free(r->report);
    free(r->out);
    free(r->err);
    free(r->ctl);
    memset(r, 0, sizeof(*r));
}

const char *tag_value(const struct run *r, const char *tag)
{
    static char value[512];
    size_t n = strlen(tag);
    for (const char *line = r->out; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > n && strncmp(line, tag, n) == 0 && line[n] == ':') {
            snprintf(value, sizeof(value), "%.*s", (int)(len - n - 1), line + n + 1);
            return value;
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

bool tag_denied(const struct run *r, const char *tag)
{
    const char *v = tag_value(r, tag);
    return v && (strcmp(v, "EACCES") == 0 || strcmp(v, "EPERM") == 0 || strcmp(v, "EROFS") == 0 ||
                 strcmp(v, "EXDEV") == 0);
}

bool tag_ok(const struct run *r, const char *tag)
{
    const char *v = tag_value(r, tag);
    return v && strncmp(v, "OK", 2) == 0;
}

/* ---- processes ---- */

int count_marked(const char *mark)
{
    char needle[256];
    int nlen = snprintf(needle, sizeof(needle), "DSH_T_MARK=%s", mark) + 1; /* with the NUL */
    int count = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        char buf[16384];
        ssize_t n = read(fd, buf, sizeof(buf));
        close(fd);
        for (ssize_t i = 0; n > 0 && i + nlen <= n; i++) {
            if ((i == 0 || buf[i - 1] == '\0') && memcmp(buf + i, needle, (size_t)nlen) == 0) {
                count++;
                break;
            }
        }
    }
    if (d)
        closedir(d);
    return count;
}

pid_t start_decoy(void)
{
    pid_t p = fork();
    cr_assert(p >= 0);
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl("/bin/sleep", "sleep", "1000", (char *)NULL);
        _exit(127);
    }
    return p;
}

bool decoy_alive_untraced(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    char *s = fx_read(path);
    bool ok = s && strstr(s, "TracerPid:\t0\n") && !strstr(s, "State:\tT") &&
              !strstr(s, "State:\tt") && !strstr(s, "State:\tZ");
    free(s);
    return ok && kill(pid, 0) == 0;
}

/* ---- listeners ---- */

static int bound_inet(int type, int *ret_port)
{
    int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    cr_assert(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    *ret_port = ntohs(a.sin_port);
    return fd;
}

int listen_tcp(int *ret_port)
{
    int fd = bound_inet(SOCK_STREAM, ret_port);
    cr_assert(listen(fd, 16) == 0);
    return fd;
}

int bind_udp(int *ret_port)
{
    return bound_inet(SOCK_DGRAM, ret_port);
}

int listen_unix(const char *path, bool abstract)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    memcpy(a.sun_path + (abstract ? 1 : 0), path, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, len) == 0, "bind %s: %s", path,
              strerror(errno));
    cr_assert(listen(fd, 16) == 0);
    return fd;
}

bool udp_received(int fd)
{
    char buf[2048];
    return recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0;
}

void hostile_case(struct fx *f, const char *mode, const char *tag, const char *js,
                  const char *const *env, const char *control_mode)
{
    struct run r;
    fx_snapshot(f); /* an earlier control may have changed things on purpose */
    fx_run(f, mode, js, env, &r);
    cr_assert_eq(r.confine_status, 0, "confine failed: %d", r.confine_status);
    cr_assert(tag_denied(&r, tag), "%s confined in %s: expected a denial, got %s", tag, mode,
              tag_value(&r, tag) ? tag_value(&r, tag) : "(no result line)");
    cr_assert(fx_outside_unchanged(f), "%s: something outside the workspace changed", tag);
    cr_assert(r.quiescent == 1,
              "the range must be quiescent after the run (%d, timed out %d, exit %d/%d/%d)",
              r.quiescent, r.timed_out, r.st.exited, r.st.code, r.st.signal);
    run_free(&r);
    fx_run(f, control_mode ? control_mode : DANGER, js, env, &r);
    cr_assert(tag_ok(&r, tag), "%s control: expected OK, got %s", tag,
              tag_value(&r, tag) ? tag_value(&r, tag) : "(no result line)");
    run_free(&r);
}
