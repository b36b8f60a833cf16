/* Without namespaces (test knob): the supervisor falls back to a child subreaper that finds the
 * range through /proc, the read-only mount layer is absent, and the report says so. Landlock and
 * seccomp still hold on their own. */
#include "harness.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct fx f;

static void setup(void)
{
    struct fx_options o = {.no_namespaces = true};
    fx_setup(&f, &o);
}

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(fallback, .init = setup, .fini = teardown, .timeout = 90);

static const char *cap(json_object *rep, const char *name)
{
    json_object *caps = NULL, *v = NULL;
    json_object_object_get_ex(rep, "capabilities", &caps);
    return json_object_object_get_ex(caps, name, &v) ? json_object_get_string(v) : "(missing)";
}

Test(fallback, report_is_partial_where_namespaces_are_missing)
{
    struct run r;
    fx_run(&f, WW, "R('W',()=>fs.writeFileSync(SH+'/victim.txt','x'))", NULL, &r);
    json_object *rep = json_tokener_parse(r.report);
    json_object *e = NULL;
    json_object_object_get_ex(rep, "enforcement", &e);
    cr_assert_str_eq(json_object_get_string(e), "partial");
    cr_assert_str_eq(cap(rep, "processLifetime"), "partial");
    cr_assert_str_eq(cap(rep, "fileMetadata"), "none");
    cr_assert_str_eq(cap(rep, "network"), "partial");
    cr_assert_str_eq(cap(rep, "resources"), "partial");
    cr_assert_str_eq(cap(rep, "files"), "full");
    /* Landlock alone: EACCES, not the mount layer's EROFS. */
    cr_assert_str_eq(tag_value(&r, "W"), "EACCES");
    cr_assert(fx_outside_unchanged(&f));
    json_object_put(rep);
    run_free(&r);
}

Test(fallback, landlock_and_seccomp_hold_alone)
{
    /* Landlock's own TRUNCATE right (ABI 3), without the read-only mount layer behind it. */
    hostile_case(&f, WW, "T",
                 "R('T',()=>fs.closeSync(fs.openSync(SH+'/victim.txt',"
                 "fs.constants.O_RDONLY|fs.constants.O_TRUNC)))",
                 NULL, NULL);
    hostile_case(&f, WW, "W", "R('W',()=>fs.renameSync(SH+'/victim.txt',WS+'/stolen'))", NULL,
                 NULL);
    hostile_case(&f, WW, "R", "R('R',()=>fs.readFileSync(SEC+'/.ssh/id_rsa','utf8'))", NULL,
                 NULL);
    hostile_case(&f, WW, "S", "RP('S','ptrace-child')", NULL, NULL);
    hostile_case(&f, WW, "K", "R('K',()=>process.kill(1,0))", NULL, NULL);
}

/* The partial reports are honest: what they call uncontrolled really is. */
Test(fallback, reported_gaps_are_real)
{
    struct run r;
    fx_run(&f, WW, "R('M',()=>fs.chmodSync(SH+'/victim.txt',0o600))", NULL, &r);
    cr_assert_str_eq(tag_value(&r, "M"), "OK", "fileMetadata none: chmod is not controlled");
    run_free(&r);
    fx_teardown(&f);
    struct fx_options o = {.no_namespaces = true, .max_landlock_abi = 2};
    fx_setup(&f, &o);
    fx_run(&f, WW,
           "R('T',()=>fs.closeSync(fs.openSync(SH+'/victim.txt',"
           "fs.constants.O_RDONLY|fs.constants.O_TRUNC)))",
           NULL, &r);
    json_object *rep = json_tokener_parse(r.report);
    cr_assert_str_eq(cap(rep, "files"), "partial", "below ABI 3 truncation is not controlled");
    cr_assert_str_eq(tag_value(&r, "T"), "OK", "and indeed a read-only open truncated the file");
    json_object_put(rep);
    run_free(&r);
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

Test(fallback, subreaper_still_owns_double_forked_setsid_daemons)
{
    char mark[128], log[256];
    snprintf(mark, sizeof(mark), "DSH_T_MARK=fallback-%s", strrchr(f.root, '/') + 1);
    const char *id = mark + strlen("DSH_T_MARK=");
    snprintf(log, sizeof(log), "%s/stubborn.log", f.ws);
    const char *env[] = {mark, NULL};
    struct live l;
    cr_assert_eq(live_start(&f, WW, "RP('D','daemon',WS+'/stubborn.log');"
                                    "cp.spawn('/bin/sh',['-c','(sleep 100 &) &'],"
                                    "{detached:true,stdio:'ignore'}).unref()",
                            env, &l),
                 0);
    for (int i = 0; i < 200 && file_size(log) < 20; i++)
        live_pump(&l, 50);
    cr_assert_geq(file_size(log), 20);
    cr_assert(!live_pump(&l, 300), "the daemons keep the range alive");
    cr_assert_geq(count_marked(id), 2);
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 200), 0);
    cr_assert(live_pump(&l, 10000), "quiescent after terminate");
    cr_assert_eq(l.quiescent, 1);
    cr_assert(l.st.exited == 1 && l.st.code == 0);
    long long a = file_size(log);
    usleep(300 * 1000);
    cr_assert_eq(file_size(log), a, "the daemon is gone");
    cr_assert_eq(count_marked(id), 0);
    struct run r;
    live_end(&l, &r);
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
}
