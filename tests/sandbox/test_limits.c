/* Limits of a whole range, on this machine's real cgroups through the real services: memory (the
 * kernel kills the range; usage() counts the OOM kill from memory.events or memory.oom_control),
 * processes (pids.max: forks beyond it fail), cpu (the quota throttles a busy loop: cpu.stat
 * counts the throttled periods, and the range's CPU time stays within the quota of the periods
 * that elapsed), and oom_score_adj of the program. Each hostile case has a control with the
 * limit raised or absent that shows the case would catch a missing limit. */
#include "harness.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct fx f;

static void setup(void)
{
    fx_setup(&f, NULL);
}

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(limits, .init = setup, .fini = teardown, .timeout = 180);

#define MIB (1024ull * 1024)

/* Allocates n Buffers of 64 MiB whose pages are really used, then prints N:<MiB>. */
static const char *allocate(int chunks)
{
    static char js[256];
    snprintf(js, sizeof(js),
             "const kept=[];for(let i=0;i<%d;i++)kept.push(Buffer.alloc(64<<20,1));"
             "console.log('N:'+kept.length*64)",
             chunks);
    return js;
}

static long self_rss_kib(void)
{
    char *status = fx_read("/proc/self/status"), *line = status ? strstr(status, "VmRSS:") : NULL;
    long kib = line ? strtol(line + 6, NULL, 10) : -1;
    free(status);
    return kib;
}

Test(limits, four_gib_of_buffers_are_killed_at_256_mib_and_counted_as_oom)
{
    struct run r;
    long before = self_rss_kib();
    fx_run_limited(&f, RO, allocate(64), &(struct range_limits){.memory_bytes = 256 * MIB}, &r);
    cr_assert_not(r.timed_out, "the kernel ended it, not the test's deadline");
    cr_assert_eq(r.st.signal, SIGKILL, "exited %d code %d signal %d", r.st.exited, r.st.code, r.st.signal);
    cr_assert_eq(r.usage_status, 0);
    cr_log_info("256 MiB: %u OOM kill(s), peak %llu bytes, host RSS %ld -> %ld KiB", r.usage.oom_kills,
                (unsigned long long)r.usage.memory_peak_bytes, before, self_rss_kib());
    cr_assert_geq(r.usage.oom_kills, 1, "memory.events / memory.oom_control counted the kill");
    cr_assert_leq(r.usage.memory_peak_bytes, 256 * MIB, "peak %llu", (unsigned long long)r.usage.memory_peak_bytes);
    cr_assert_lt(self_rss_kib() - before, 32 * 1024, "the host did not take the allocation");
    run_free(&r);
}

Test(limits, the_memory_limit_is_what_stops_384_mib)
{
    struct run r;
    /* Control: a raised limit lets the same program pass 256 MiB, with no OOM kill. */
    fx_run_limited(&f, RO, allocate(6), &(struct range_limits){.memory_bytes = 1024 * MIB}, &r);
    cr_assert_str_eq(tag_value(&r, "N"), "384");
    cr_assert_eq(r.usage.oom_kills, 0);
    cr_assert_gt(r.usage.memory_peak_bytes, 384 * MIB);
    run_free(&r);
    fx_run_limited(&f, RO, allocate(6), &(struct range_limits){.memory_bytes = 256 * MIB}, &r);
    cr_assert_null(tag_value(&r, "N"));
    cr_assert_eq(r.st.signal, SIGKILL);
    cr_assert_geq(r.usage.oom_kills, 1);
    run_free(&r);
}

/* Starts 100 `sleep` children, counts those that started and the spawn errors, then ends them. */
static const char SPAWN_100[] =
    "let ok=0,err=0,codes=new Set(),kids=[];"
    "const done=()=>{if(ok+err<100)return;console.log('S:'+ok+':'+err+':'+[...codes].join(','));"
    "kids.forEach(k=>k.kill('SIGKILL'))};"
    "for(let i=0;i<100;i++){const k=cp.spawn('/bin/sleep',['30'],{stdio:'ignore'});kids.push(k);"
    "k.on('spawn',()=>{ok++;done()});k.on('error',e=>{err++;codes.add(e.code);done()})}";

/* S:<started>:<errors>:<codes> */
static void spawned(const struct run *r, int *ret_ok, int *ret_err, char *codes, size_t size)
{
    const char *v = tag_value(r, "S");
    cr_assert_not_null(v, "no S: line; stdout %s stderr %s", r->out, r->err);
    char *end;
    *ret_ok = (int)strtol(v, &end, 10);
    *ret_err = (int)strtol(end + 1, &end, 10);
    snprintf(codes, size, "%s", end + 1);
}

Test(limits, forks_beyond_max_processes_fail_with_eagain)
{
    struct run r;
    int ok = 0, err = 0;
    char codes[64] = "";
    fx_run_limited(&f, RO, SPAWN_100, &(struct range_limits){.processes = 64}, &r);
    spawned(&r, &ok, &err, codes, sizeof(codes));
    cr_assert_lt(ok, 64, "at most 64 tasks, Node's own threads included: %d started", ok);
    cr_assert_gt(err, 0);
    cr_assert_str_eq(codes, "EAGAIN");
    cr_assert_gt(r.usage.process_limit_hits, 0, "pids.events counted the refused forks");
    run_free(&r);
    /* Control: a raised bound starts all 100. */
    fx_run_limited(&f, RO, SPAWN_100, &(struct range_limits){.processes = 512}, &r);
    spawned(&r, &ok, &err, codes, sizeof(codes));
    cr_assert_eq(ok, 100);
    cr_assert_eq(err, 0);
    cr_assert_eq(r.usage.process_limit_hits, 0);
    run_free(&r);
}

/* The files the kernel enforces, in the range's own cgroups (the supervisor is in all of them):
 * controller NULL = the cgroup2 group. False where pid has no such group. */
static bool range_path(pid_t pid, const char *controller, const char *file, char *path, size_t size)
{
    char key[32], *line;
    snprintf(path, size, "/proc/%d/cgroup", (int)pid);
    char *cgroups = fx_read(path);
    cr_assert_not_null(cgroups);
    snprintf(key, sizeof(key), ":%s:", controller ? controller : "");
    bool found = (line = strstr(cgroups, key)) != NULL;
    if (found) {
        line[strcspn(line, "\n")] = '\0';
        const char *own = strcmp(line + strlen(key), "/") ? line + strlen(key) : "";
        if (controller)
            snprintf(path, size, "/sys/fs/cgroup/%s%s/%s", controller, own, file);
        else
            snprintf(path, size, "/sys/fs/cgroup%s%s/%s",
                     access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? "" : "/unified", own, file);
    }
    free(cgroups);
    return found;
}

/* spawn does not wait for the range's start (examples/providers/README.md, "Starting a range"):
 * its supervisor joins the range's cgroups before it execs, so once pid runs the supervisor it is
 * in all of them. */
static void await_supervisor(pid_t pid)
{
    char path[64], exe[PATH_MAX];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    for (;;) {
        ssize_t n = readlink(path, exe, sizeof(exe) - 1);
        cr_assert_gt(n, 0, "the supervisor %d is gone", (int)pid);
        exe[n] = '\0';
        const char *base = strrchr(exe, '/');
        if (!strcmp(base ? base + 1 : exe, "dsh-range-supervisor"))
            return;
        usleep(1000);
    }
}

/* A file of the range's cgroups while it runs, or NULL. */
static char *range_file(pid_t pid, const char *controller, const char *file)
{
    char path[PATH_MAX];
    return range_path(pid, controller, file, path, sizeof(path)) ? fx_read(path) : NULL;
}

/* Waits for the test's go (a file in the workspace), then spins until it has used 200 ms of CPU
 * itself. Without a limit that is quick; at 10 % of one CPU the kernel must throttle it, provided
 * the loop can get more than 10 % of a CPU at all: on a loaded machine (the range weighs as much as
 * one of the host's busy tasks) it might not. So before the go the test gives the range the
 * highest scheduler weight (cpu.shares / cpu.weight, which neither limits nor is limited by the
 * quota): the loop then wants a whole CPU whatever else runs, and only the quota can hold it. Every
 * figure is CPU time the kernel accounted to the range's cgroup (cpu.stat, cpuacct), never the
 * clock. */
static const char BUSY[] =
    "console.log('R:ready');const t=setInterval(()=>{if(!fs.existsSync(WS+'/go'))return;clearInterval(t);"
    "let x=0;while(process.cpuUsage().user+process.cpuUsage().system<200000)x++;console.log('B:OK')},5)";

static unsigned long long cpus_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned long long)n : 1;
}

/* The runtime the kernel hands a CPU at a time from a range's quota (5 ms unless tuned). */
static unsigned long long bandwidth_slice_usec(void)
{
    char *text = fx_read("/proc/sys/kernel/sched_cfs_bandwidth_slice_us");
    unsigned long long us = text ? strtoull(text, NULL, 10) : 0;
    free(text);
    return us ? us : 5000;
}

/* Runs BUSY under limits at the highest weight; the usage is in *ret. */
static void busy_run(const struct range_limits *limits, struct run *ret)
{
    struct live l;
    cr_assert_eq(live_start_limited(&f, RO, BUSY, limits, &l), 0);
    while (!strstr(l.out ? l.out : "", "R:ready") && !live_pump(&l, 100)) {
    }
    char path[PATH_MAX], go[PATH_MAX];
    bool v1 = range_path(l.proc->pid, "cpu", "cpu.shares", path, sizeof(path)) && access(path, W_OK) == 0;
    if (!v1)
        cr_assert(range_path(l.proc->pid, NULL, "cpu.weight", path, sizeof(path)), "the range has no cpu group");
    fx_write(path, v1 ? "262144" : "10000"); /* the maximum of each */
    char *weight = fx_read(path);
    cr_assert(weight && atol(weight) == (v1 ? 262144 : 10000), "%s holds %s", path, weight ? weight : "nothing");
    free(weight);
    snprintf(go, sizeof(go), "%s/go", f.ws);
    fx_write(go, "");
    while (!live_pump(&l, 1000)) {
    }
    live_end(&l, ret);
    unlink(go);
}

Test(limits, a_busy_loop_is_held_to_max_cpu_percent)
{
    struct run r;
    busy_run(&(struct range_limits){.cpu_percent = 10}, &r);
    cr_assert(tag_ok(&r, "B"));
    const struct dsh_range_usage *u = &r.usage;
    cr_log_info("10%%: %llu us of CPU in %llu periods, %llu throttled", (unsigned long long)u->cpu_usage_usec,
                (unsigned long long)u->cpu_periods, (unsigned long long)u->cpu_throttled_periods);
    cr_assert_gt(u->cpu_throttled_periods, 0, "the quota stopped the range");
    cr_assert_geq(u->cpu_usage_usec, 200000, "the loop's own CPU time is in the range's");
    /* 10 ms per 100 ms period counted in cpu.stat, plus what the kernel's bandwidth accounting
     * lets through uncounted: the quota already in the pool when the first period starts, the
     * period running at the exit (not counted until its timer fires), and per CPU one slice of
     * runtime handed out ahead (sched_cfs_bandwidth_slice_us). A missing or doubled quota gets the
     * same 200 ms in a few periods and fails this by far. */
    unsigned long long bound = (u->cpu_periods + 2) * 10000 + cpus_online() * bandwidth_slice_usec();
    cr_log_info("bound: %llu us", bound);
    cr_assert_leq(u->cpu_usage_usec, bound, "%llu us of CPU in %llu periods", (unsigned long long)u->cpu_usage_usec,
                  (unsigned long long)u->cpu_periods);
    run_free(&r);
    /* Control: without a limit the same loop is never throttled. */
    busy_run(&(struct range_limits){0}, &r);
    cr_assert(tag_ok(&r, "B"));
    cr_log_info("no limit: %llu us of CPU, %llu throttled", (unsigned long long)r.usage.cpu_usage_usec,
                (unsigned long long)r.usage.cpu_throttled_periods);
    cr_assert_eq(r.usage.cpu_throttled_periods, 0);
    cr_assert_geq(r.usage.cpu_usage_usec, 200000);
    run_free(&r);
}

/* The program (and what it starts) is the kernel's first OOM victim; the supervisor keeps the
 * host's score so it can report the kill. */
Test(limits, the_program_has_oom_score_adj_1000)
{
    struct live l;
    cr_assert_eq(live_start(&f, RO,
                            "console.log('A:'+fs.readFileSync('/proc/self/oom_score_adj','utf8').trim()+':'+"
                            "cp.execFileSync('/bin/cat',['/proc/self/oom_score_adj'],{encoding:'utf8'}).trim());"
                            "setTimeout(()=>{},60000)",
                            NULL, &l),
                 0);
    while (!strstr(l.out ? l.out : "", "\n") && !live_pump(&l, 100)) {
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)l.proc->pid);
    char *supervisor = fx_read(path), *host = fx_read("/proc/self/oom_score_adj");
    struct run r;
    live_end(&l, &r);
    cr_assert_str_eq(tag_value(&r, "A"), "1000:1000", "the program and its child");
    cr_assert_not_null(supervisor);
    cr_assert_str_eq(supervisor, host, "the supervisor keeps the host's score");
    cr_assert_str_neq(host, "1000\n", "control: the host itself is not raised");
    free(supervisor);
    free(host);
    run_free(&r);
}

static bool v2_delegates_limits(void)
{
    char *text = range_file(getpid(), NULL, "cgroup.subtree_control");
    bool all = text && strstr(text, "memory") && strstr(text, "pids") && strstr(text, "cpu");
    free(text);
    return all;
}

static const struct range_limits ODD = {.memory_bytes = 300 * MIB, .processes = 77, .cpu_percent = 150};

static void expect_file(pid_t pid, const char *controller, const char *file, const char *want)
{
    char *text = range_file(pid, controller, file);
    cr_assert_not_null(text, "%s %s", controller ? controller : "cgroup2", file);
    cr_assert_str_eq(text, want, "%s %s", controller ? controller : "cgroup2", file);
    free(text);
}

Test(limits, v1_files_of_the_range_hold_its_limits)
{
    if (v2_delegates_limits())
        cr_skip_test("cgroup2 delegates memory, pids and cpu here: the cgroup2 case runs instead");
    struct live l;
    cr_assert_eq(live_start_limited(&f, RO, "setTimeout(()=>{},60000)", &ODD, &l), 0);
    pid_t sup = l.proc->pid;
    await_supervisor(sup);
    expect_file(sup, "memory", "memory.limit_in_bytes", "314572800\n");
    char *memsw = range_file(sup, "memory", "memory.memsw.limit_in_bytes");
    if (memsw) /* swap accounting: no swap beyond the limit */
        cr_assert_str_eq(memsw, "314572800\n");
    free(memsw);
    expect_file(sup, "pids", "pids.max", "77\n");
    expect_file(sup, "cpu", "cpu.cfs_period_us", "100000\n");
    expect_file(sup, "cpu", "cpu.cfs_quota_us", "150000\n");
    struct run r;
    live_end(&l, &r);
    run_free(&r);
}

Test(limits, cgroup2_files_of_the_range_hold_its_limits)
{
    if (!v2_delegates_limits())
        cr_skip_test("cgroup2 here does not delegate memory, pids and cpu to this host's children "
                     "(cgroup.subtree_control): the limits run on v1 (v1_files_of_the_range_hold_its_limits); "
                     "test_range_cgroup covers the cgroup2 files on a fake tree");
    struct live l;
    cr_assert_eq(live_start_limited(&f, RO, "setTimeout(()=>{},60000)", &ODD, &l), 0);
    pid_t sup = l.proc->pid;
    await_supervisor(sup);
    expect_file(sup, NULL, "memory.max", "314572800\n");
    char *swap = range_file(sup, NULL, "memory.swap.max");
    if (swap)
        cr_assert_str_eq(swap, "0\n");
    free(swap);
    expect_file(sup, NULL, "pids.max", "77\n");
    expect_file(sup, NULL, "cpu.max", "150000 100000\n");
    struct run r;
    live_end(&l, &r);
    run_free(&r);
}

/* Where no cgroup can be delegated (an empty fake cgroup filesystem), the report says partial,
 * and it is honest: the same 384 MiB then pass a 256 MiB request. */
Test(limits, without_cgroups_the_report_is_partial_and_the_limit_absent)
{
    char root[] = "/tmp/dsh-no-cgroups-XXXXXX";
    cr_assert(mkdtemp(root));
    fx_teardown(&f); /* the suite's fixture, replaced by one whose services see no cgroup */
    fx_setup(&f, &(struct fx_options){.cgroup_root = root});
    struct run r;
    fx_run_limited(&f, RO, allocate(6), &(struct range_limits){.memory_bytes = 256 * MIB}, &r);
    cr_assert_str_eq(tag_value(&r, "N"), "384");
    cr_assert_eq(r.usage_status, DSH_E_UNSUPPORTED, "no cgroup: no accounting");
    cr_assert(strstr(r.report, "\"resources\":\"partial\""), "%s", r.report);
    run_free(&r);
    rmdir(root);
}
