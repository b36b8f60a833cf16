/* Hostile reads: secrets outside the execution world's read set stay hidden, in both restricted
 * modes; what the world does include stays readable. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fx f;

static void setup(void)
{
    fx_setup(&f, NULL);
}

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(fs_read, .init = setup, .fini = teardown, .timeout = 90);

Test(fs_read, ssh_private_key_outside_the_read_set)
{
    const char *js = "R('R',()=>fs.readFileSync(SEC+'/.ssh/id_rsa','utf8'))";
    hostile_case(&f, RO, "R", js, NULL, NULL);
    hostile_case(&f, WW, "R", js, NULL, NULL);
}

Test(fs_read, list_the_secret_directory)
{
    hostile_case(&f, WW, "R", "R('R',()=>fs.readdirSync(SEC+'/.ssh').join(','))", NULL, NULL);
}

Test(fs_read, etc_shadow)
{
    hostile_case(&f, RO, "R", "R('R',()=>fs.readFileSync('/etc/shadow','utf8').length)", NULL,
                 NULL);
}

Test(fs_read, root_home)
{
    hostile_case(&f, WW, "R", "R('R',()=>fs.readdirSync('/root').length)", NULL, NULL);
}

Test(fs_read, host_tmp_listing)
{
    hostile_case(&f, WW, "R", "R('R',()=>fs.readdirSync('/tmp').length)", NULL, NULL);
}

Test(fs_read, invisible_outside_file)
{
    hostile_case(&f, RO, "R", "R('R',()=>fs.readFileSync(OUT+'/victim.txt','utf8'))", NULL, NULL);
}

Test(fs_read, through_symlink_planted_in_workspace)
{
    hostile_case(&f, WW, "R",
                 "try{fs.unlinkSync(WS+'/k')}catch{}fs.symlinkSync(SEC+'/.ssh/id_rsa',WS+'/k');"
                 "R('R',()=>fs.readFileSync(WS+'/k','utf8'))",
                 NULL, NULL);
}

Test(fs_read, another_process_environment)
{
    /* The decoy inherits this test's environment, including a host secret. */
    setenv("DSH_T_HOST_SECRET", "host-secret-7f3a", 1);
    f.decoy = start_decoy();
    fx_snapshot(&f);
    const char *js = "R('R',()=>fs.readFileSync('/proc/'+E.DSH_T_DECOY+'/"
                     "environ','latin1').replace(/\\0/g,' '))";
    struct run r;
    fx_run(&f, WW, js, NULL, &r);
    cr_assert(tag_value(&r, "R") && !tag_ok(&r, "R"), "reading the host's environ must fail");
    cr_assert(!strstr(r.out, "host-secret-7f3a"));
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
    fx_run(&f, DANGER, js, NULL, &r);
    cr_assert(tag_ok(&r, "R") && strstr(r.out, "host-secret-7f3a"), "control reads it");
    run_free(&r);
}

Test(fs_read, world_stays_readable)
{
    struct run r;
    fx_run(&f, RO,
           "R('SYS',()=>fs.readFileSync('/etc/passwd','utf8').length>0);"
           "R('SH',()=>fs.readFileSync(SH+'/victim.txt','utf8').trim());"
           "R('WS',()=>fs.readdirSync(WS).includes('probe'));"
           "R('RND',()=>fs.readSync(fs.openSync('/dev/urandom','r'),Buffer.alloc(8)));"
           "R('EXE',()=>cp.execFileSync('/bin/sh',['-c','echo hi']).toString().trim())",
           NULL, &r);
    cr_assert(tag_ok(&r, "SYS") && tag_ok(&r, "WS") && tag_ok(&r, "EXE") && tag_ok(&r, "RND"));
    cr_assert_str_eq(tag_value(&r, "SH"), "OK:shared-original");
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
}

/* /sys is narrowed to what glibc, libuv and V8 read: the host's network interfaces (names, MAC
 * addresses), firmware and ACPI tables stay closed... */
Test(fs_read, sys_network_interfaces)
{
    hostile_case(&f, RO, "N", "R('N',()=>fs.readdirSync('/sys/class').length)", NULL, NULL);
}

Test(fs_read, sys_firmware_tables)
{
    hostile_case(&f, WW, "A", "R('A',()=>fs.readdirSync('/sys/firmware').length)", NULL, NULL);
}

/* ... while the CPU count, parallelism and cgroup limits a program sees are the host's. */
Test(fs_read, cpu_and_memory_views_still_work)
{
    const char *js = "R('C',()=>[os.cpus().length,os.availableParallelism(),"
                     "fs.readFileSync('/sys/devices/system/cpu/online','utf8').trim()].join('/'))";
    struct run r, control;
    fx_run(&f, RO, js, NULL, &r);
    fx_run(&f, DANGER, js, NULL, &control);
    cr_assert(tag_ok(&r, "C") && tag_ok(&control, "C"), "%s", tag_value(&r, "C"));
    char confined[128];
    snprintf(confined, sizeof(confined), "%s", tag_value(&r, "C"));
    cr_assert_str_eq(confined, tag_value(&control, "C"));
    run_free(&r);
    run_free(&control);
}

/* stat() is not a Landlock right: the mount layer covers the directories that lead to nothing
 * visible, so their contents do not exist for the program. What remains: entries next to a root
 * (the fixture's secret/ beside the workspace). */
Test(fs_read, stat_outside_the_roots)
{
    const char *js = "const st=(p)=>{try{fs.lstatSync(p);return 'OK'}catch(e){return e.code}};"
                     "console.log('V:'+st('/var/log'));console.log('N:'+st('/sys/class/net/lo'));"
                     "console.log('C:'+st('/sys/devices/system/cpu/online'));"
                     "console.log('S:'+st(SEC+'/.ssh/id_rsa'))";
    struct run r, control;
    fx_run(&f, RO, js, NULL, &r);
    fx_run(&f, DANGER, js, NULL, &control);
    cr_assert_str_eq(tag_value(&r, "V"), "ENOENT");
    cr_assert_str_eq(tag_value(&r, "N"), "ENOENT");
    cr_assert_str_eq(tag_value(&r, "C"), "OK", "the CPU view stays");
    cr_assert_str_eq(tag_value(&r, "S"), "OK", "beside a root, stat still answers (documented)");
    cr_assert_str_eq(tag_value(&control, "V"), "OK", "control");
    cr_assert_str_eq(tag_value(&control, "N"), "OK", "control");
    run_free(&r);
    run_free(&control);
}

/* The directories the mount layer covers are one empty tmpfs instance (mount_hide.c), read-only
 * at the mount and the superblock, nosuid, nodev, noexec (Landlock refuses to list them, so
 * emptiness shows as a host directory that does not exist there). */
Test(fs_read, hidden_directories_are_one_empty_read_only_tmpfs)
{
    const char *js =
        "const m=fs.readFileSync('/proc/self/mountinfo','utf8').split('\\n').map(l=>l.split(' '))"
        ".filter(x=>x[x.indexOf('-')+2]==='dsh-hidden');"
        "console.log('H:'+(m.length>10));console.log('D:'+new Set(m.map(x=>x[2])).size);"
        "console.log('O:'+[...new Set(m.map(x=>x[5]+' '+x[x.indexOf('-')+3]))].join('|'));"
        "R('E',()=>fs.lstatSync('/var/lib'));R('W',()=>fs.writeFileSync('/root/x','1'));"
        "R('M',()=>fs.mkdirSync('/var/x'))";
    struct run r;
    fx_run(&f, WW, js, NULL, &r);
    cr_assert_str_eq(tag_value(&r, "H"), "true", "dozens of covered directories");
    cr_assert_str_eq(tag_value(&r, "D"), "1", "one tmpfs instance");
    cr_assert_str_eq(tag_value(&r, "O"), "ro,nosuid,nodev,noexec,relatime ro,size=4k,mode=555");
    cr_assert_str_eq(tag_value(&r, "E"), "ENOENT", "empty (the host's /var/lib exists)");
    cr_assert_str_eq(tag_value(&r, "W"), "EROFS");
    cr_assert_str_eq(tag_value(&r, "M"), "EROFS");
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
}
