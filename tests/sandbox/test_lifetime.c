/* The managed process range: daemons that double-fork and setsid, fork bombs, a killed host, exit
 * status, stdio and the control channel. */
#include "harness.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The services' default bound (dsh_linux_services_options.max_processes = 0). */
#define DSHX_TEST_MAX_PROCESSES 512

static struct fx f;

static void setup(void)
{
    fx_setup(&f, NULL);
}

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(lifetime, .init = setup, .fini = teardown, .timeout = 120);

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void mark_env(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "DSH_T_MARK=%s-%s", what, strrchr(f.root, '/') + 1);
}

static void wait_for_growth(struct live *l, const char *log)
{
    long long end = now_ms() + 10000;
    while (now_ms() < end && file_size(log) < 20)
        live_pump(l, 50);
    cr_assert(file_size(log) >= 20, "the daemon is writing");
}

/* After terminate the range must be quiescent and the daemon's file must stop growing. */
static void assert_stopped(const char *log, const char *mark)
{
    long long a = file_size(log);
    usleep(400 * 1000);
    cr_assert_eq(file_size(log), a, "the file stopped growing");
    cr_assert_eq(count_marked(mark), 0, "no process of the range is left");
}

Test(lifetime, daemon_double_fork_setsid_dies_with_terminate)
{
    char mark[128], log[256];
    mark_env(mark, sizeof(mark), "daemon");
    snprintf(log, sizeof(log), "%s/daemon.log", f.ws);
    const char *env[] = {mark, NULL};
    struct live l;
    cr_assert_eq(live_start(&f, WW,
                            "cp.spawn('/bin/sh',['-c','(while :; do echo tick >> \"$0\"; "
                            "sleep 0.05; done) &',WS+'/daemon.log'],{detached:true,stdio:'ignore'})"
                            ".unref();console.log('D:OK')",
                            env, &l),
                 0);
    wait_for_growth(&l, log);
    /* The program itself has exited and its stdout reached EOF: that is not quiescence. */
    cr_assert(!live_pump(&l, 500), "a live daemon keeps the range from being quiescent");
    cr_assert(l.eof[0], "stdout reached EOF");
    struct pollfd p = {.fd = l.proc->quiescence_fd, .events = POLLIN};
    cr_assert_eq(poll(&p, 1, 0), 0, "quiescence_fd is not readable yet");
    cr_assert(count_marked(mark + strlen("DSH_T_MARK=")) >= 1);

    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 500), 0);
    cr_assert(live_pump(&l, 10000), "quiescent after terminate");
    cr_assert(l.st.exited == 1 && l.st.code == 0, "the program's own exit is reported");
    assert_stopped(log, mark + strlen("DSH_T_MARK="));
    struct run r;
    live_end(&l, &r);
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
}

Test(lifetime, daemon_ignoring_sigterm_in_own_process_group)
{
    char mark[128], log[256];
    mark_env(mark, sizeof(mark), "stubborn");
    snprintf(log, sizeof(log), "%s/stubborn.log", f.ws);
    const char *env[] = {mark, NULL};
    struct live l;
    cr_assert_eq(live_start(&f, WW, "RP('D','daemon',WS+'/stubborn.log')", env, &l), 0);
    wait_for_growth(&l, log);
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    long long t0 = now_ms();
    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 300), 0);
    cr_assert(live_pump(&l, 10000), "quiescent after the grace");
    cr_assert_geq(now_ms() - t0, 250, "SIGKILL came only after the grace");
    assert_stopped(log, mark + strlen("DSH_T_MARK="));
    struct run r;
    live_end(&l, &r);
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
}

static long long host_spawn_latency_ms(void)
{
    long long t0 = now_ms();
    pid_t pid;
    char *argv[] = {"/bin/true", NULL};
    cr_assert(posix_spawn(&pid, "/bin/true", NULL, NULL, argv, NULL) == 0);
    waitpid(pid, NULL, 0);
    return now_ms() - t0;
}

Test(lifetime, fork_bomb_is_bounded_and_quiesces)
{
    char mark[128];
    mark_env(mark, sizeof(mark), "bomb");
    const char *id = mark + strlen("DSH_T_MARK=");
    const char *env[] = {mark, NULL};
    struct live l;
    int peak = 0, samples = 0;
    long long worst = 0;
    /* The bomb's own start is the precondition, not the property under test: a bomb whose first
     * shells found no free slot on a busy machine is started once more in a fresh range. */
    for (int attempt = 0; attempt < 2 && peak < 50; attempt++) {
        if (attempt > 0) {
            struct run discarded;
            live_end(&l, &discarded);
            run_free(&discarded);
            cr_log_info("fork bomb: peak %d on the first start, starting it once more", peak);
            peak = 0;
        }
        cr_assert_eq(live_start(&f, WW,
                                "cp.spawn('/bin/sh',['-c','b(){ while :; do b & b & wait; done; }; b'],"
                                "{stdio:'ignore',detached:true});setInterval(()=>{},1000)",
                                env, &l),
                     0);
        long long start = now_ms();
        /* At least 2 s of bombing, longer (up to 15 s) on a loaded machine until it is saturated. */
        while (now_ms() - start < 2000 || (peak < 100 && now_ms() - start < 15000)) {
            live_pump(&l, 100);
            int n = count_marked(id);
            peak = n > peak ? n : peak;
            long long lat = host_spawn_latency_ms();
            worst = lat > worst ? lat : worst;
            samples++;
        }
    }
    cr_log_info("fork bomb: peak %d processes in %d samples, worst host spawn latency %lld ms",
                peak, samples, worst);
    cr_assert_geq(peak, 50, "the bomb really forked (peak %d)", peak);
    cr_assert_leq(peak, (int)DSHX_TEST_MAX_PROCESSES + 8, "the range stayed bounded (peak %d)",
                  peak);
    /* The host stayed responsive: it started a process in every sample (asserted in
     * host_spawn_latency_ms); the latency is a figure, not a bound that a loaded machine could
     * break. */
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    long long t0 = now_ms();
    sp->terminate(sp->ctx, l.proc, 0);
    cr_assert(live_pump(&l, 30000), "the range quiesced");
    cr_log_info("fork bomb quiesced in %lld ms", now_ms() - t0);
    cr_assert_eq(count_marked(id), 0);
    struct run r;
    live_end(&l, &r);
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
}

/* A child process plays the host: it spawns three ranges with daemons, then is SIGKILLed. */
Test(lifetime, host_sigkill_leaves_no_process_of_any_range)
{
    char mark[128];
    mark_env(mark, sizeof(mark), "hostkill");
    const char *id = mark + strlen("DSH_T_MARK=");
    int ready[2];
    cr_assert(pipe(ready) == 0);
    pid_t host = fork();
    cr_assert(host >= 0);
    if (host == 0) {
        close(ready[0]);
        for (int i = 0; i < 3; i++) {
            char js[512];
            snprintf(js, sizeof(js),
                     "cp.spawn('/bin/sh',['-c','(while :; do echo t >> \"$0\"; sleep 0.05; "
                     "done) &',WS+'/range%d.log'],{detached:true,stdio:'ignore'}).unref();"
                     "setInterval(()=>{},1000)",
                     i);
            const char *env[] = {mark, NULL};
            struct live l;
            if (live_start(&f, i == 2 ? DANGER : WW, js, env, &l) != 0)
                _exit(1);
        }
        (void)!write(ready[1], "r", 1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c;
    cr_assert_eq(read(ready[0], &c, 1), 1, "the host started its ranges");
    close(ready[0]);
    char logs[3][256];
    long long end = now_ms() + 10000;
    for (int i = 0; i < 3; i++) {
        snprintf(logs[i], sizeof(logs[i]), "%s/range%d.log", f.ws, i);
        while (now_ms() < end && file_size(logs[i]) < 10)
            usleep(20 * 1000);
        cr_assert_geq(file_size(logs[i]), 10, "range %d is running", i);
    }
    cr_assert_geq(count_marked(id), 6, "nodes and daemons of three ranges are alive");
    kill(host, SIGKILL);
    waitpid(host, NULL, 0);
    end = now_ms() + 5000;
    while (now_ms() < end && count_marked(id) > 0)
        usleep(20 * 1000);
    cr_assert_eq(count_marked(id), 0, "every range died with its host");
    for (int i = 0; i < 3; i++) {
        long long a = file_size(logs[i]);
        usleep(i == 0 ? 300 * 1000 : 0);
        cr_assert_eq(file_size(logs[i]), a, "range %d stopped writing", i);
    }
}

Test(lifetime, exit_status_is_the_programs_own)
{
    const char *modes[] = {WW, DANGER};
    for (int i = 0; i < 2; i++) {
        struct run r;
        fx_run(&f, modes[i], "process.exit(7)", NULL, &r);
        cr_assert(r.quiescent == 1 && r.st.exited == 1 && r.st.code == 7, "%s exit 7", modes[i]);
        run_free(&r);
        fx_run(&f, modes[i], "process.kill(process.pid,'SIGTERM')", NULL, &r);
        cr_assert(r.quiescent == 1 && r.st.exited == 0 && r.st.signal == SIGTERM, "%s SIGTERM",
                  modes[i]);
        run_free(&r);
    }
}

Test(lifetime, stdin_is_dev_null_and_fd3_is_the_control_channel)
{
    struct live l;
    cr_assert_eq(live_start(&f, WW,
                            "R('IN',()=>fs.readFileSync(0).length);fs.writeSync(3,'ping\\n');"
                            "const s=new net.Socket({fd:3,readable:true,writable:true});"
                            "s.once('data',d=>{console.log('CTL:OK:'+d.toString().trim());"
                            "process.exit(0)})",
                            NULL, &l),
                 0);
    long long end = now_ms() + 10000;
    while (now_ms() < end && !(l.ctl && strstr(l.ctl, "ping")))
        live_pump(&l, 50);
    cr_assert(l.ctl && strstr(l.ctl, "ping"), "the program wrote to fd 3");
    cr_assert_eq(write(l.proc->control_fd, "pong\n", 5), 5);
    cr_assert(live_pump(&l, 10000));
    struct run r;
    live_end(&l, &r);
    cr_assert_str_eq(tag_value(&r, "IN"), "OK:0", "stdin is empty (/dev/null)");
    cr_assert_str_eq(tag_value(&r, "CTL"), "OK:pong", "the host's reply arrived on fd 3");
    run_free(&r);
}

Test(lifetime, host_fds_never_leak_into_the_range)
{
    char victim[256];
    snprintf(victim, sizeof(victim), "%s/victim.txt", f.shared);
    int leaky = open(victim, O_RDONLY); /* deliberately without O_CLOEXEC */
    cr_assert(leaky >= 0);
    const char *js = "R('FD',()=>fs.readdirSync('/proc/self/fd').map(n=>{try{return "
                     "fs.readlinkSync('/proc/self/fd/'+n)}catch{return '?'}}).join(' '))";
    const char *modes[] = {WW, DANGER};
    for (int i = 0; i < 2; i++) {
        struct run r;
        fx_run(&f, modes[i], js, NULL, &r);
        cr_assert(tag_ok(&r, "FD"), "%s", modes[i]);
        cr_assert(!strstr(r.out, "victim.txt"), "%s: a host fd leaked: %s", modes[i], r.out);
        run_free(&r);
    }
    close(leaky);
}

Test(lifetime, spawn_failures_are_reported)
{
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    const char *missing[] = {"/nonexistent/dsh-program", NULL};
    const char *relative[] = {"node", NULL};
    struct dsh_spawn_request req = {.struct_size = sizeof(req), .argv = missing, .cwd = f.ws};
    struct dsh_process *p = NULL;
    struct dsh_error err = {0};
    cr_assert_eq(sp->spawn(sp->ctx, &req, &p, &err), DSH_E_SPAWN_FAILED);
    cr_assert(strstr(err.message, "No such file"), "%s", err.message);
    req.argv = relative;
    cr_assert_eq(sp->spawn(sp->ctx, &req, &p, &err), DSH_E_REQUEST_INVALID);
    req.argv = missing;
    req.cwd = "relative";
    cr_assert_eq(sp->spawn(sp->ctx, &req, &p, &err), DSH_E_REQUEST_INVALID);
    cr_assert_null(p);
}

/* The host does not wait for the exec (examples/providers/README.md, "Starting a range"): a
 * program only the exec can refuse (here: no executable format) ends its range as 127 with the
 * reason on the range's stderr. Control: the same file as a shell script runs. */
Test(lifetime, an_exec_failure_ends_the_range_with_its_reason)
{
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    char path[PATH_MAX];
    for (int script = 0; script < 2; script++) {
        snprintf(path, sizeof path, "%s/exec-%d", f.ws, script);
        fx_write(path, script ? "#!/bin/sh\nexit 7\n" : "\177ELF but no program\n");
        cr_assert_eq(chmod(path, 0755), 0);
        const char *argv[] = {path, NULL};
        struct dsh_spawn_request req = {.struct_size = sizeof(req), .argv = argv, .cwd = f.ws};
        struct dsh_process *p = NULL;
        struct dsh_error err = {0};
        cr_assert_eq(sp->spawn(sp->ctx, &req, &p, &err), 0, "%s", err.message);
        char errbuf[512] = "";
        size_t nerr = 0;
        struct dsh_exit_status st;
        int q;
        while ((q = sp->poll_quiescent(sp->ctx, p, &st)) == 0) {
            struct pollfd pf[2] = {{.fd = p->quiescence_fd, .events = POLLIN}, {.fd = p->stderr_fd, .events = POLLIN}};
            cr_assert_geq(poll(pf, 2, -1), 0);
            ssize_t n;
            while (nerr < sizeof errbuf - 1 && (n = read(p->stderr_fd, errbuf + nerr, sizeof errbuf - 1 - nerr)) > 0)
                nerr += (size_t)n;
        }
        cr_assert_eq(q, 1);
        ssize_t n;
        while (nerr < sizeof errbuf - 1 && (n = read(p->stderr_fd, errbuf + nerr, sizeof errbuf - 1 - nerr)) > 0)
            nerr += (size_t)n;
        errbuf[nerr] = '\0';
        cr_assert_eq(st.exited, 1);
        if (script) {
            cr_assert_eq(st.code, 7, "the control runs");
        } else {
            char want[PATH_MAX + 128];
            snprintf(want, sizeof want, "dsh-range-supervisor: cannot start %s: Exec format error\n", path);
            cr_assert_eq(st.code, 127);
            cr_assert_str_eq(errbuf, want);
        }
        close(p->control_fd);
        close(p->stdout_fd);
        close(p->stderr_fd);
        sp->release(sp->ctx, p);
    }
}

Test(lifetime, release_kills_a_running_range)
{
    char mark[128];
    mark_env(mark, sizeof(mark), "release");
    const char *env[] = {mark, NULL};
    struct live l;
    cr_assert_eq(live_start(&f, WW,
                            "cp.spawn('/bin/sleep',['100'],{detached:true});"
                            "setInterval(()=>{},1000);console.log('UP:OK')",
                            env, &l),
                 0);
    long long end = now_ms() + 10000;
    while (now_ms() < end && count_marked(mark + strlen("DSH_T_MARK=")) < 2)
        live_pump(&l, 50);
    cr_assert_geq(count_marked(mark + strlen("DSH_T_MARK=")), 2);
    struct run r;
    live_end(&l, &r); /* terminate(0) + release */
    cr_assert_eq(count_marked(mark + strlen("DSH_T_MARK=")), 0);
    run_free(&r);
}

Test(lifetime, terminate_is_idempotent_and_may_shorten_the_grace)
{
    struct live l;
    cr_assert_eq(live_start(&f, WW,
                            "process.on('SIGTERM',()=>console.log('TERM:OK'));"
                            "setInterval(()=>{},1000);console.log('UP:OK')",
                            NULL, &l),
                 0);
    long long end = now_ms() + 10000;
    while (now_ms() < end && !(l.out && strstr(l.out, "UP:OK")))
        live_pump(&l, 50);
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    /* A grace far beyond the suite's timeout: the range can only end before it if the shorter
     * grace took over, so no clock bound is needed to tell the two apart. */
    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 3600000), 0);
    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 3600000), 0);
    while (!(l.out && strstr(l.out, "TERM:OK")))
        cr_assert(!live_pump(&l, 100), "SIGTERM is handled: still alive within the grace");
    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 0), 0);
    while (!live_pump(&l, 1000)) { /* a shorter grace takes over, or the suite times out */
    }
    cr_assert_eq(l.st.signal, SIGKILL);
    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 0), 0, "terminate after quiescence is a no-op");
    struct run r;
    live_end(&l, &r);
    cr_assert(strstr(r.out, "TERM:OK"), "the program saw SIGTERM first");
    run_free(&r);
}

static void ignore_signal(int sig)
{
    (void)sig;
}

/* The bits of one "SigXxx:" line of /proc/PID/status. */
static unsigned long long status_mask(pid_t pid, const char *field)
{
    char path[64], *status;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    cr_assert_not_null(status = fx_read(path));
    const char *line = strstr(status, field);
    cr_assert_not_null(line, "%s in %s", field, path);
    unsigned long long bits = strtoull(line + strlen(field), NULL, 16);
    free(status);
    return bits;
}

/* The supervisor starts with the spawning thread's signal mask and none of the host's handlers,
 * also where the child ran on the host's memory until its exec with every signal blocked
 * (examples/providers/lib/range_spawn.c). */
Test(lifetime, supervisor_starts_with_the_spawning_threads_mask_and_no_host_handler)
{
    struct sigaction caught = {.sa_handler = ignore_signal}, host_usr1;
    sigset_t usr2, host_mask;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    cr_assert_eq(sigaction(SIGUSR1, &caught, &host_usr1), 0);
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, &usr2, &host_mask), 0);
    struct live l;
    int rc = live_start(&f, WW, "console.log('UP'); setTimeout(() => {}, 30000)", NULL, &l);
    (void)pthread_sigmask(SIG_SETMASK, &host_mask, NULL);
    (void)sigaction(SIGUSR1, &host_usr1, NULL);
    cr_assert_eq(rc, 0);
    /* The program runs: its supervisor has long been exec'd. */
    for (int i = 0; i < 200 && !(l.out && strstr(l.out, "UP")); i++)
        (void)live_pump(&l, 50);
    cr_assert(l.out && strstr(l.out, "UP"), "the program started");
    unsigned long long blocked = status_mask(l.proc->pid, "SigBlk:"), caught_bits = status_mask(l.proc->pid, "SigCgt:");
    const unsigned long long bit = 1;
    cr_assert(blocked & bit << (SIGUSR2 - 1), "the spawning thread's mask: %llx", blocked);
    cr_assert(!(blocked & bit << (SIGTERM - 1)) && !(blocked & bit << (SIGUSR1 - 1)),
              "not every signal blocked: %llx", blocked);
    cr_assert(!(caught_bits & bit << (SIGUSR1 - 1)), "no host handler: %llx", caught_bits);
    struct run r;
    live_end(&l, &r);
    run_free(&r);
}
