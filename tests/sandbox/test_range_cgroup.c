/* range_cgroup.c on this machine's real hierarchies (cgroup2 and the v1 freezer): a range cloned
 * into its cgroup, whose descendant appends to a file in a loop, stops growing the file once the
 * group reads frozen -- while a control loop outside the group keeps growing its own file (the
 * barrier that shows time passed) -- and the kill empties the group so it can be removed. */
#include "range_cgroup.h"

#include "file_growth.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const LOOP = "(while :; do echo x >> \"$0\"; done) & wait";

/* Starts `sh -c LOOP file` inside cg (or outside any range when cg is NULL). */
static pid_t start_loop(const struct dshx__range_cgroup *cg, const char *file)
{
    struct clone_args args = {.exit_signal = SIGCHLD};
    if (cg && dshx__range_cgroup_clone_fd(cg) >= 0) {
        args.flags = CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)dshx__range_cgroup_clone_fd(cg);
    }
    pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
    cr_assert(pid >= 0, "clone3: %s", strerror(errno));
    if (pid == 0) {
        if (!cg)
            setpgid(0, 0); /* the control loop and its subshell: one group to kill by id */
        if (cg && dshx__range_cgroup_join_fd(cg) >= 0 && write(dshx__range_cgroup_join_fd(cg), "0", 1) != 1)
            _exit(126);
        execl("/bin/sh", "sh", "-c", LOOP, file, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void freeze_then_kill(enum dshx_cgroup_kind kind)
{
    char parent[4096], dir[] = "/tmp/range-cgroup-XXXXXX", name[64], inside[4200], outside[4200];
    if (dshx__cgroup_own_dir(kind, parent, sizeof(parent)) < 0 || access(parent, W_OK) != 0)
        cr_skip_test("no writable %s hierarchy here", kind == DSHX_CGROUP_V2 ? "cgroup2" : "v1 freezer");
    cr_assert(mkdtemp(dir));
    snprintf(inside, sizeof(inside), "%s/inside", dir);
    snprintf(outside, sizeof(outside), "%s/outside", dir);
    snprintf(name, sizeof(name), "dsh-test-range-%d", (int)getpid());
    struct dshx__range_cgroup *cg;
    int rc = dshx__range_cgroup_create(kind, parent, name, &cg);
    cr_assert_eq(rc, 0, "create under %s: %s", parent, strerror(-rc));
    cr_assert_eq(dshx__range_cgroup_create(kind, parent, name, &(struct dshx__range_cgroup *){NULL}), -EEXIST,
                 "an existing group is never adopted");

    pid_t range = start_loop(cg, inside), control = start_loop(NULL, outside);
    file_wait_growth(inside, 0); /* the range runs: its file grows */
    cr_assert_eq(dshx__range_cgroup_empty(cg), 0);
    cr_assert_eq(dshx__range_cgroup_freeze(cg), 0);
    while ((rc = dshx__range_cgroup_frozen(cg)) == 0)
        usleep(1000);
    cr_assert_eq(rc, 1);
    off_t frozen_size = file_size_of(inside);
    /* Barrier: the control loop appends 500 more lines; the frozen loop would have too. */
    file_wait_growth(outside, file_size_of(outside) + 1000);
    cr_assert_eq(file_size_of(inside), frozen_size, "nothing of the frozen range ran");

    cr_assert_eq(dshx__range_cgroup_kill(cg), 0);
    int status;
    cr_assert_eq(waitpid(range, &status, 0), range);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    while ((rc = dshx__range_cgroup_empty(cg)) == 0)
        usleep(1000); /* the loop's subshell dies with the group, reaped by init */
    cr_assert_eq(rc, 1);
    cr_assert_eq(file_size_of(inside), frozen_size, "the kill let nothing run first");
    cr_assert_eq(dshx__range_cgroup_remove(cg), 0);
    cr_assert(access(parent, F_OK) == 0);

    kill(-control, SIGKILL);
    waitpid(control, &status, 0);
    unlink(inside);
    unlink(outside);
    rmdir(dir);
}

Test(range_cgroup, cgroup2_freeze_stops_every_descendant_then_kill_empties, .timeout = 60)
{
    freeze_then_kill(DSHX_CGROUP_V2);
}

Test(range_cgroup, v1_freezer_freeze_stops_every_descendant_then_kill_empties, .timeout = 60)
{
    freeze_then_kill(DSHX_CGROUP_V1_FREEZER);
}

Test(range_cgroup, names_that_leave_the_parent_are_refused)
{
    struct dshx__range_cgroup *cg = NULL;
    for (const char *bad[] = {"", ".", "..", "a/b"}, **p = bad; p < bad + 4; p++)
        cr_assert_eq(dshx__range_cgroup_create(DSHX_CGROUP_V2, "/tmp", *p, &cg), -EINVAL, "%s", *p);
}

/* Fake cgroupfs: plain files in a temp dir stand for what this machine cannot show (a pure v2
 * mount, nested paths, a v2 kernel without cgroup.kill, the events file while freezing). */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void read_text(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* A fresh fake tree (root, a mkdtemp template) whose root/self-cgroup stands for
 * /proc/self/cgroup with the given membership lines; its path goes to proc. */
static void fake_tree_with_membership(char *root, char proc[4200], const char *lines)
{
    cr_assert(mkdtemp(root));
    snprintf(proc, 4200, "%s/self-cgroup", root);
    write_text(proc, lines);
}

Test(range_cgroup, fake_cgroupfs_own_directory_on_unified_and_hybrid_mounts)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", proc[4200], probe[4200], dir[4200];
    fake_tree_with_membership(root, proc,
                              "12:pids:/a\n6:freezer:/jobs/j1\n1:name=systemd:/x\n0::/user.slice/s-1.scope\n");
    cr_assert_eq(dshx__cgroup_dir_in(DSHX_CGROUP_V2, proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir + strlen(root), "/unified/user.slice/s-1.scope", "hybrid: %s", dir);
    cr_assert_eq(dshx__cgroup_dir_in(DSHX_CGROUP_V1_FREEZER, proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir + strlen(root), "/freezer/jobs/j1");
    snprintf(probe, sizeof(probe), "%s/cgroup.controllers", root);
    write_text(probe, "cpu memory pids\n");
    cr_assert_eq(dshx__cgroup_dir_in(DSHX_CGROUP_V2, proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir + strlen(root), "/user.slice/s-1.scope", "unified: %s", dir);
    write_text(proc, "0::/\n");
    cr_assert_eq(dshx__cgroup_dir_in(DSHX_CGROUP_V2, proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir, root, "the root cgroup adds no path");
    cr_assert_eq(dshx__cgroup_dir_in(DSHX_CGROUP_V1_FREEZER, proc, root, dir, sizeof(dir)), -ENOENT,
                 "no freezer line: no v1 freezer");
    unlink(proc);
    unlink(probe);
    rmdir(root);
}

Test(range_cgroup, fake_cgroupfs_v2_files_freezing_frozen_and_no_cgroup_kill)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", path[4200], buf[64];
    cr_assert(mkdtemp(root));
    struct dshx__range_cgroup *cg;
    cr_assert_eq(dshx__range_cgroup_create(DSHX_CGROUP_V2, root, "r1", &cg), 0);
    cr_assert_eq(dshx__range_cgroup_create(DSHX_CGROUP_V2, root, "r1", &(struct dshx__range_cgroup *){NULL}), -EEXIST);
    const char *files[] = {"cgroup.freeze", "cgroup.events"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/r1/%s", root, files[i]);
        write_text(path, "");
    }
    cr_assert_eq(dshx__range_cgroup_freeze(cg), 0);
    snprintf(path, sizeof(path), "%s/r1/cgroup.freeze", root);
    read_text(path, buf, sizeof(buf));
    cr_assert_str_eq(buf, "1");
    snprintf(path, sizeof(path), "%s/r1/cgroup.events", root);
    write_text(path, "populated 1\nfrozen 0\n");
    cr_assert_eq(dshx__range_cgroup_frozen(cg), 0, "still freezing");
    cr_assert_eq(dshx__range_cgroup_empty(cg), 0);
    write_text(path, "populated 1\nfrozen 1\n");
    cr_assert_eq(dshx__range_cgroup_frozen(cg), 1);
    /* A kernel before cgroup.kill (5.14): the kill reports it, so the caller signals instead. */
    cr_assert_eq(dshx__range_cgroup_kill(cg), -ENOENT);
    write_text(path, "populated 0\nfrozen 1\n");
    cr_assert_eq(dshx__range_cgroup_empty(cg), 1);
    cr_assert_eq(dshx__range_cgroup_remove(cg), -ENOTEMPTY, "a fake directory with files stays");
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/r1/%s", root, files[i]);
        unlink(path);
    }
    cr_assert_eq(dshx__range_cgroup_remove(cg), 0);
    cr_assert_eq(rmdir(root), 0);
}

/* The pid of a child that has exited and been reaped: a pid no host has now (its reuse within
 * one test is not expected). */
static pid_t exited_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

Test(range_cgroup, fake_cgroupfs_sweep_removes_empty_groups_of_dead_hosts_only)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", path[4200];
    cr_assert(mkdtemp(root));
    pid_t dead = exited_pid();
    const char *names[] = {"dead-1", "dead-2", "dead-3", "live-1", "other-1"};
    char made[5][64];
    snprintf(made[0], 64, "dsh-range-%d-1", (int)dead);
    snprintf(made[1], 64, "dsh-range-%d-2", (int)dead);
    snprintf(made[2], 64, "dsh-range-%d-3", (int)dead); /* not empty: stays */
    snprintf(made[3], 64, "dsh-range-%d-1", (int)getpid());
    snprintf(made[4], 64, "unrelated-%d-1", (int)dead);
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "%s/%s", root, made[i]);
        cr_assert_eq(mkdir(path, 0700), 0, "%s", names[i]);
    }
    snprintf(path, sizeof(path), "%s/%s/cgroup.procs", root, made[2]);
    write_text(path, "");
    cr_assert_eq(dshx__range_cgroup_sweep(root, "dsh-range-"), 2);
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "%s/%s", root, made[i]);
        cr_assert_eq(access(path, F_OK) == 0, i >= 2, "%s", names[i]);
    }
    snprintf(path, sizeof(path), "%s/%s/cgroup.procs", root, made[2]);
    unlink(path);
    for (size_t i = 2; i < 5; i++) {
        snprintf(path, sizeof(path), "%s/%s", root, made[i]);
        rmdir(path);
    }
    cr_assert_eq(rmdir(root), 0);
}

/* A fake cgroup2 tree whose host group delegates (or not) the limit controllers: root/self-cgroup
 * stands for /proc/self/cgroup, root/host for the host's group. */
static void fake_v2_host(char *root, const char *subtree_control)
{
    char path[4200];
    fake_tree_with_membership(root, path, "0::/host\n");
    snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
    write_text(path, "cpu memory pids\n");
    snprintf(path, sizeof(path), "%s/host", root);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/host/cgroup.subtree_control", root);
    write_text(path, subtree_control);
}

static void fake_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    write_text(path, text);
}

static void expect_text(const char *dir, const char *name, const char *want)
{
    char path[4200], buf[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    read_text(path, buf, sizeof(buf));
    cr_assert_str_eq(buf, want, "%s", name);
}

/* A fake group's files are plain files: emptied, the directory can be removed like a real one. */
static void remove_fake_group(struct dshx__range_cgroup *cg, const char *group)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "find '%s' -type f -delete", group);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(dshx__range_cgroup_remove(cg), 0);
}

static void remove_fake(const char *root)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

/* The files a kernel shows in a new group whose parent delegates memory, pids and cpu. */
static const char *const V2_LIMIT_FILES[] = {"memory.max", "memory.swap.max", "memory.oom.group", "pids.max",
                                             "cpu.max", "cpu.stat", "cgroup.freeze", "cgroup.kill", NULL};

Test(range_cgroup, fake_cgroupfs_v2_limits_are_written_to_the_range_group)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", host[512], group[1024];
    fake_v2_host(root, "cpu memory pids\n");
    struct dshx__cgroup_roots roots = {NULL, root};
    char proc[4200];
    snprintf(proc, sizeof(proc), "%s/self-cgroup", root);
    roots.proc_cgroup = proc;
    unsigned all = (1u << DSHX_CGROUP_CTL_COUNT) - 1;
    cr_assert_eq(dshx__cgroup_controllers_available(&roots), all, "every controller delegated");

    snprintf(host, sizeof(host), "%s/host", root);
    struct dshx__range_cgroup *cg;
    cr_assert_eq(dshx__range_cgroup_create(DSHX_CGROUP_V2, host, "r1", &cg), 0);
    snprintf(group, sizeof(group), "%s/r1", host);
    for (const char *const *f = V2_LIMIT_FILES; *f; f++)
        fake_file(group, *f, "");
    cr_assert_eq(dshx__range_cgroup_add_controllers(cg, &roots, "r1"), all, "all from the cgroup2 group itself");
    int join[8];
    cr_assert_eq(dshx__range_cgroup_join_fds(cg, join, 8), 0, "cgroup2: clone3 joins, no v1 group to write");

    const char *what = NULL;
    struct dshx__range_limits limits = {.memory_bytes = 256ull << 20, .processes = 64, .cpu_percent = 20};
    cr_assert_eq(dshx__range_cgroup_set_limits(cg, &limits, &what), 0);
    expect_text(group, "memory.max", "268435456");
    expect_text(group, "memory.swap.max", "0");
    expect_text(group, "memory.oom.group", "1");
    expect_text(group, "pids.max", "64");
    expect_text(group, "cpu.max", "20000 100000");

    /* After the end: what the kernel counted, as it words it. */
    fake_file(group, "memory.events", "low 0\nhigh 0\nmax 17\noom 2\noom_kill 1\noom_group_kill 1\n");
    fake_file(group, "memory.peak", "268435456\n");
    fake_file(group, "cpu.stat", "usage_usec 123456\nuser_usec 120000\nsystem_usec 3456\n"
                                 "nr_periods 40\nnr_throttled 31\nthrottled_usec 2000000\n");
    fake_file(group, "pids.events", "max 9\n");
    struct dshx__range_usage u;
    dshx__range_cgroup_usage(cg, &u);
    cr_assert_eq(u.oom_kills, 1);
    cr_assert_eq(u.memory_peak_bytes, 268435456);
    cr_assert_eq(u.cpu_usage_usec, 123456);
    cr_assert_eq(u.cpu_periods, 40);
    cr_assert_eq(u.cpu_throttled_periods, 31);
    cr_assert_eq(u.process_limit_hits, 9);

    cr_assert_eq(dshx__range_cgroup_kill(cg), 0);
    expect_text(group, "cgroup.kill", "1");
    remove_fake_group(cg, group);
    remove_fake(root);
}

Test(range_cgroup, fake_cgroupfs_v2_without_delegation_has_no_limits)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", host[512], group[1024], proc[4200];
    fake_v2_host(root, "\n");
    snprintf(proc, sizeof(proc), "%s/self-cgroup", root);
    struct dshx__cgroup_roots roots = {proc, root};
    /* cpu.stat's usage is cgroup2 core: the accounting stays; no limit controller does. */
    cr_assert_eq(dshx__cgroup_controllers_available(&roots), 1u << DSHX_CGROUP_CTL_CPUACCT);
    snprintf(host, sizeof(host), "%s/host", root);
    struct dshx__range_cgroup *cg;
    cr_assert_eq(dshx__range_cgroup_create(DSHX_CGROUP_V2, host, "r1", &cg), 0);
    snprintf(group, sizeof(group), "%s/r1", host);
    fake_file(group, "cpu.stat", "usage_usec 5\n");
    cr_assert_eq(dshx__range_cgroup_add_controllers(cg, &roots, "r1"), 1u << DSHX_CGROUP_CTL_CPUACCT);
    const char *what = NULL;
    cr_assert_eq(dshx__range_cgroup_set_limits(cg, &(struct dshx__range_limits){.memory_bytes = 1 << 20}, &what),
                 -ENOTSUP);
    cr_assert_str_eq(what, "memory");
    cr_assert_eq(dshx__range_cgroup_set_limits(cg, &(struct dshx__range_limits){.processes = 9}, &what), -ENOTSUP);
    cr_assert_str_eq(what, "processes");
    cr_assert_eq(dshx__range_cgroup_set_limits(cg, &(struct dshx__range_limits){0}, &what), 0, "no limit asked");
    struct dshx__range_usage u;
    dshx__range_cgroup_usage(cg, &u);
    cr_assert_eq(u.cpu_usage_usec, 5);
    cr_assert_eq(u.oom_kills, 0);
    remove_fake_group(cg, group);
    remove_fake(root);
}

Test(range_cgroup, v1_membership_lines_name_co_mounted_controllers)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", proc[4200], dir[4200];
    fake_tree_with_membership(root, proc, "4:memory:/jobs/m\n2:cpu,cpuacct:/c\n8:pids:/\n0::/\n");
    cr_assert_eq(dshx__cgroup_v1_dir_in("memory", proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir + strlen(root), "/memory/jobs/m");
    cr_assert_eq(dshx__cgroup_v1_dir_in("cpuacct", proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir + strlen(root), "/cpuacct/c", "the second name of a co-mounted hierarchy");
    cr_assert_eq(dshx__cgroup_v1_dir_in("cpu", proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir + strlen(root), "/cpu/c");
    cr_assert_eq(dshx__cgroup_v1_dir_in("pids", proc, root, dir, sizeof(dir)), 0);
    cr_assert_str_eq(dir + strlen(root), "/pids", "the root group adds no path");
    cr_assert_eq(dshx__cgroup_v1_dir_in("cpuset", proc, root, dir, sizeof(dir)), -ENOENT);
    cr_assert_eq(dshx__cgroup_v1_dir_in("cpu,", proc, root, dir, sizeof(dir)), -ENOENT, "whole names only");
    remove_fake(root);
}

/* A host that died left groups in the v1 controller hierarchies too: each is swept in this
 * process's own group of that hierarchy, and only there. */
Test(range_cgroup, fake_cgroupfs_v1_controller_groups_of_dead_hosts_are_swept)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", proc[4200], path[4200];
    fake_tree_with_membership(root, proc, "4:memory:/m\n8:pids:/\n0::/\n");
    pid_t dead = exited_pid();
    const char *dirs[] = {"memory", "memory/m", "pids", "cpu"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
    }
    const char *groups[] = {"memory/m", "pids", "memory", "cpu"}; /* the last two: not ours */
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s/dsh-range-%d-1", root, groups[i], (int)dead);
        cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
    }
    struct dshx__cgroup_roots roots = {proc, root};
    dshx__cgroup_sweep_controllers(&roots, "dsh-range-");
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s/dsh-range-%d-1", root, groups[i], (int)dead);
        cr_assert_eq(access(path, F_OK) == 0, i >= 2, "%s", path);
    }
    remove_fake(root);
}

/* A dead host's session group holds its ranges' empty groups: the sweep removes them with it; a
 * live host's session, and a session one of whose ranges still holds something, stay. */
Test(range_cgroup, fake_cgroupfs_sweep_removes_dead_hosts_sessions_with_their_ranges)
{
    char root[] = "/tmp/fake-cgroupfs-XXXXXX", path[4200];
    cr_assert(mkdtemp(root));
    pid_t dead = exited_pid();
    const char *dirs[] = {"dsh-session-%d-1", "dsh-session-%d-1/dsh-range-%d-2", "dsh-session-%d-1/dsh-range-%d-3",
                          "dsh-session-%d-2", "dsh-session-%d-2/dsh-range-%d-4"};
    for (size_t i = 0; i < 5; i++) {
        char rel[128];
        snprintf(rel, sizeof(rel), dirs[i], (int)dead, (int)dead);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
    }
    snprintf(path, sizeof(path), "%s/dsh-session-%d-2/dsh-range-%d-4/cgroup.procs", root, (int)dead, (int)dead);
    write_text(path, ""); /* stands for a range with a process left */
    snprintf(path, sizeof(path), "%s/dsh-session-%d-1", root, (int)getpid());
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_assert_eq(dshx__range_cgroup_sweep(root, "dsh-session-"), 1);
    snprintf(path, sizeof(path), "%s/dsh-session-%d-1", root, (int)dead);
    cr_assert_eq(access(path, F_OK), -1, "the dead host's session and its ranges are gone");
    snprintf(path, sizeof(path), "%s/dsh-session-%d-2/dsh-range-%d-4", root, (int)dead, (int)dead);
    cr_assert_eq(access(path, F_OK), 0, "a range still holding something stays, and its session");
    snprintf(path, sizeof(path), "%s/dsh-session-%d-1", root, (int)getpid());
    cr_assert_eq(access(path, F_OK), 0, "a live host's session stays");
    remove_fake(root);
}

/* The open-files rule (range_cgroup.h): processes x nofile within an eighth of fs.file-max for a
 * range and half of it for the session, clamped to [64, 4096]. */
Test(range_cgroup, nofile_keeps_a_range_and_a_session_within_their_share_of_file_max)
{
    cr_assert_eq(dshx__range_nofile(2466248, 512, 4096), 301, "the defaults here: the session's half binds");
    cr_assert_eq(dshx__range_nofile(2466248, 512, 0), 602, "no session total: the range's eighth");
    cr_assert_eq(dshx__range_nofile(2466248, 64, 512), 2408);
    cr_assert_eq(dshx__range_nofile(2466248, 4096, 1024), 301, "a range has at most the session's processes");
    cr_assert_eq(dshx__range_nofile(100000000, 32, 32), 4096, "never above the launcher's ceiling");
    cr_assert_eq(dshx__range_nofile(100000, 512, 4096), 64, "never below the floor Node needs");
    cr_assert_eq(dshx__range_nofile(0, 512, 4096), 4096, "fs.file-max unknown: the ceiling");
    for (uint32_t p = 32; p < 100000; p = p * 3 + 1) {
        uint32_t n = dshx__range_nofile(2466248, p, 4 * p);
        cr_assert(n == 64 || (uint64_t)n * p <= 2466248 / 8, "range %u", p);
        cr_assert(n == 64 || (uint64_t)n * 4 * p <= 2466248 / 2, "session %u", 4 * p);
    }
}

static size_t lines_in(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    for (int c; f && (c = fgetc(f)) != EOF;)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

/* The session group on this machine's real hierarchies: its totals are written where the kernel
 * enforces them, a range is made inside it (in every hierarchy), and the session's process total
 * binds a range whose own limit is higher: of 20 forks in it, 7 succeed (8 tasks with the forking
 * one) and 13 fail with EAGAIN. */
Test(range_cgroup, a_session_group_holds_its_totals_and_binds_the_ranges_made_in_it)
{
    struct dshx__cgroup_roots roots = {"/proc/self/cgroup", "/sys/fs/cgroup"};
    unsigned need = (1u << DSHX_CGROUP_CTL_MEMORY) | (1u << DSHX_CGROUP_CTL_PIDS);
    if ((dshx__cgroup_controllers_available(&roots) & need) != need)
        cr_skip_test("no memory and pids controllers a range could get here");
    char session_name[64], range_name[64];
    snprintf(session_name, sizeof(session_name), "dsh-test-session-%d", (int)getpid());
    snprintf(range_name, sizeof(range_name), "dsh-test-range-%d", (int)getpid());
    struct dshx__range_cgroup *s = NULL, *r = NULL;
    int rc = dshx__session_cgroup_create(DSHX_CGROUP_V2, &roots, session_name, &s);
    if (rc < 0 || !dshx__range_cgroup_usable(s)) {
        if (rc == 0)
            cr_assert_eq(dshx__range_cgroup_remove(s), 0);
        rc = dshx__session_cgroup_create(DSHX_CGROUP_V1_FREEZER, &roots, session_name, &s);
    }
    cr_assert_eq(rc, 0, "session: %s", strerror(-rc));
    const char *what = "";
    struct dshx__range_limits totals = {.memory_bytes = 64ull << 20, .processes = 8};
    cr_assert_eq(dshx__session_cgroup_set_totals(s, &totals, &what), 0, "%s", what);
    int join[8];
    cr_assert_eq(dshx__range_cgroup_join_fds(s, join, 8), 0, "nothing ever joins the session group");
    cr_assert_eq(dshx__range_cgroup_create_in(s, range_name, &r), 0);
    cr_assert_eq(dshx__range_cgroup_add_controllers(r, &roots, range_name) & need, need);
    cr_assert_eq(dshx__range_cgroup_set_limits(r, &(struct dshx__range_limits){.processes = 100}, &what), 0);

    struct clone_args args = {.exit_signal = SIGCHLD};
    if (dshx__range_cgroup_clone_fd(r) >= 0) {
        args.flags = CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)dshx__range_cgroup_clone_fd(r);
    }
    size_t n_join = dshx__range_cgroup_join_fds(r, join, 8);
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
    cr_assert(pid >= 0, "clone3: %s", strerror(errno));
    if (pid == 0) {
        for (size_t i = 0; i < n_join; i++)
            if (write(join[i], "0", 1) != 1)
                _exit(126);
        int forks[2] = {0, 0}; /* succeeded, failed with EAGAIN */
        for (int i = 0; i < 20; i++) {
            pid_t k = fork();
            if (k == 0) {
                pause();
                _exit(0);
            }
            forks[k > 0 ? 0 : 1] += k > 0 || errno == EAGAIN;
        }
        if (write(ready[1], forks, sizeof(forks)) != (ssize_t)sizeof(forks))
            _exit(125);
        pause();
        _exit(0);
    }
    close(ready[1]);
    int forks[2];
    cr_assert_eq(read(ready[0], forks, sizeof(forks)), (ssize_t)sizeof(forks));
    close(ready[0]);
    cr_assert_eq(forks[0], 7, "the session's total of 8 held the range (its own limit is 100)");
    cr_assert_eq(forks[1], 13, "the forks beyond it failed with EAGAIN");

    /* The shell's memberships: <own group>/<session>/<range> in every hierarchy ranges use. */
    char path[2 * PATH_MAX], own[PATH_MAX], want[PATH_MAX + 160], text[4096];
    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    read_text(path, text, sizeof(text));
    snprintf(want, sizeof(want), "/%s/%s\n", session_name, range_name);
    cr_assert(strstr(text, want), "%s in\n%s", want, text);
    cr_assert_eq(strstr(strstr(text, want) + 1, want) != NULL || strstr(text, "0::") != NULL, 1);

    /* The totals where the kernel reads them, and what they did. */
    char session_memory[PATH_MAX + 64], session_pids[PATH_MAX + 64];
    bool v1_pids = dshx__cgroup_v1_dir_in("pids", "/proc/self/cgroup", "/sys/fs/cgroup", own, sizeof(own)) == 0 &&
                   access(own, W_OK) == 0;
    if (!v1_pids)
        cr_assert_eq(dshx__cgroup_dir_in(DSHX_CGROUP_V2, "/proc/self/cgroup", "/sys/fs/cgroup", own, sizeof(own)), 0);
    snprintf(session_pids, sizeof(session_pids), "%s/%s", own, session_name);
    expect_text(session_pids, "pids.max", "8\n");
    snprintf(path, sizeof(path), "%s/%s/cgroup.procs", session_pids, range_name);
    cr_assert_eq(lines_in(path), 8, "every task of the session is in its range");
    bool v1_memory = dshx__cgroup_v1_dir_in("memory", "/proc/self/cgroup", "/sys/fs/cgroup", own, sizeof(own)) == 0 &&
                     access(own, W_OK) == 0;
    if (!v1_memory)
        cr_assert_eq(dshx__cgroup_dir_in(DSHX_CGROUP_V2, "/proc/self/cgroup", "/sys/fs/cgroup", own, sizeof(own)), 0);
    snprintf(session_memory, sizeof(session_memory), "%s/%s", own, session_name);
    expect_text(session_memory, v1_memory ? "memory.limit_in_bytes" : "memory.max", "67108864\n");

    cr_assert_eq(dshx__range_cgroup_kill(r), 0);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    for (int spins = 0; dshx__range_cgroup_empty(r) == 0 && spins < 5000; spins++)
        usleep(1000);
    cr_assert_eq(dshx__range_cgroup_remove(r), 0);
    cr_assert_eq(dshx__range_cgroup_remove(s), 0, "the session group goes once its ranges are gone");
}
