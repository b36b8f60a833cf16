/* Hostile writes: every way out of the workspace a Node program can try. shared/ is readable
 * (an extra readable root) so attacks that need to open the target can reach it; outside/ is
 * invisible. Each case's control runs unconfined and must succeed. */
#include "harness.h"

#include <criterion/criterion.h>
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

TestSuite(fs_write, .init = setup, .fini = teardown, .timeout = 90);

static char *shared_victim(void)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/victim.txt", f.shared);
    return fx_read(p);
}

Test(fs_write, new_file_outside_directly)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.writeFileSync(OUT+'/new.txt','pwned'))", NULL, NULL);
}

Test(fs_write, overwrite_readable_file)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.writeFileSync(SH+'/victim.txt','pwned'))", NULL, NULL);
    char *v = shared_victim();
    cr_assert_str_eq(v, "pwned", "the control really overwrote the file");
    free(v);
}

Test(fs_write, append_to_readable_file)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.appendFileSync(SH+'/victim.txt','pwned'))", NULL, NULL);
}

Test(fs_write, through_symlink_to_file)
{
    hostile_case(&f, WW, "W",
                 "try{fs.unlinkSync(WS+'/ln')}catch{}fs.symlinkSync(SH+'/victim.txt',WS+'/ln');"
                 "R('W',()=>fs.writeFileSync(WS+'/ln','pwned'))",
                 NULL, NULL);
}

Test(fs_write, through_symlink_to_directory)
{
    hostile_case(&f, WW, "W",
                 "try{fs.unlinkSync(WS+'/d')}catch{}fs.symlinkSync(OUT+'/dir',WS+'/d');"
                 "R('W',()=>fs.writeFileSync(WS+'/d/planted','pwned'))",
                 NULL, NULL);
}

Test(fs_write, through_proc_self_root)
{
    hostile_case(&f, WW, "W",
                 "R('W',()=>fs.writeFileSync('/proc/self/root'+SH+'/victim.txt','pwned'))", NULL,
                 NULL);
}

Test(fs_write, reopen_readonly_fd_via_proc_fd)
{
    hostile_case(&f, WW, "W",
                 "const fd=fs.openSync(SH+'/victim.txt','r');"
                 "R('W',()=>fs.writeFileSync('/proc/self/fd/'+fd,'pwned'))",
                 NULL, NULL);
}

Test(fs_write, by_hardlink_into_workspace)
{
    hostile_case(
        &f, WW, "W",
        "try{fs.unlinkSync(WS+'/hl')}catch{}"
        "R('W',()=>{fs.linkSync(SH+'/victim.txt',WS+'/hl');fs.writeFileSync(WS+'/hl','pwned')})",
        NULL, NULL);
    char *v = shared_victim();
    cr_assert_str_eq(v, "pwned", "the control wrote through the hard link");
    free(v);
}

Test(fs_write, by_hardlink_out_of_workspace)
{
    hostile_case(&f, WW, "W",
                 "fs.writeFileSync(WS+'/mine','x');R('W',()=>fs.linkSync(WS+'/mine',OUT+'/hl'))",
                 NULL, NULL);
}

Test(fs_write, by_rename_into_place)
{
    hostile_case(&f, WW, "W",
                 "fs.writeFileSync(WS+'/evil','pwned');"
                 "R('W',()=>fs.renameSync(WS+'/evil',SH+'/victim.txt'))",
                 NULL, NULL);
}

Test(fs_write, by_rename_out_of_readable_root)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.renameSync(SH+'/victim.txt',WS+'/stolen'))", NULL,
                 NULL);
}

Test(fs_write, by_o_trunc_on_read_only_open)
{
    hostile_case(&f, WW, "W",
                 "R('W',()=>fs.closeSync(fs.openSync(SH+'/victim.txt',"
                 "fs.constants.O_RDONLY|fs.constants.O_TRUNC)))",
                 NULL, NULL);
    char *v = shared_victim();
    cr_assert_str_eq(v, "", "the control truncated the file");
    free(v);
}

Test(fs_write, by_o_trunc_write_open)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.closeSync(fs.openSync(SH+'/victim.txt','w')))", NULL,
                 NULL);
}

Test(fs_write, by_truncate_syscall)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.truncateSync(SH+'/victim.txt',0))", NULL, NULL);
}

Test(fs_write, mkdir_outside)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.mkdirSync(OUT+'/newdir'))", NULL, NULL);
}

Test(fs_write, unlink_outside)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.unlinkSync(SH+'/victim.txt'))", NULL, NULL);
}

Test(fs_write, rmdir_outside)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.rmdirSync(SH+'/empty'))", NULL, NULL);
}

Test(fs_write, plant_symlink_outside)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.symlinkSync('/etc/passwd',OUT+'/ln'))", NULL, NULL);
}

Test(fs_write, chmod_outside)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.chmodSync(SH+'/victim.txt',0o777))", NULL, NULL);
}

Test(fs_write, utimes_outside)
{
    hostile_case(&f, WW, "W", "R('W',()=>fs.utimesSync(SH+'/victim.txt',1,1))", NULL, NULL);
}

Test(fs_write, host_tmp)
{
    char marker[256];
    snprintf(marker, sizeof(marker), "/tmp/%s-pwned", strrchr(f.root, '/') + 1);
    hostile_case(&f, WW, "W",
                 "R('W',()=>fs.writeFileSync('/tmp/'+path.basename(E.DSH_T_ROOT)+'-pwned','x'))",
                 NULL, NULL);
    cr_assert(access(marker, F_OK) == 0, "the control wrote into /tmp");
    unlink(marker);
}

Test(fs_write, host_dev_shm)
{
    char marker[256];
    snprintf(marker, sizeof(marker), "/dev/shm/%s-pwned", strrchr(f.root, '/') + 1);
    hostile_case(
        &f, WW, "W",
        "R('W',()=>fs.writeFileSync('/dev/shm/'+path.basename(E.DSH_T_ROOT)+'-pwned','x'))", NULL,
        NULL);
    unlink(marker);
}

Test(fs_write, from_a_shell_child)
{
    hostile_case(&f, WW, "W",
                 "const r=cp.spawnSync('/bin/sh',['-c','echo pwned > \"$0\"',SH+'/victim.txt'],"
                 "{encoding:'utf8'});console.log('W:'+(r.status===0?'OK':"
                 "(/Permission denied|Read-only/.test(r.stderr)?'EACCES':'FAIL '+r.stderr)))",
                 NULL, NULL);
}

Test(fs_write, workspace_in_read_only_mode)
{
    /* The control is workspace-write: the same write is allowed there. */
    hostile_case(&f, RO, "W", "R('W',()=>fs.writeFileSync(WS+'/x','y'))", NULL, WW);
}

Test(fs_write, private_tmp_in_read_only_mode)
{
    hostile_case(&f, RO, "W", "R('W',()=>fs.writeFileSync(os.tmpdir()+'/dsh-ro-probe-'+process.pid,'y'))", NULL, WW);
}

Test(fs_write, allowed_writes_still_work)
{
    struct run r;
    fx_run(&f, WW,
           "R('WS',()=>fs.writeFileSync(WS+'/ok','y'));"
           "R('MV',()=>{fs.mkdirSync(WS+'/a');fs.mkdirSync(WS+'/b');"
           "fs.writeFileSync(WS+'/a/f','1');fs.renameSync(WS+'/a/f',WS+'/b/f')});"
           "R('TMP',()=>{fs.writeFileSync(os.tmpdir()+'/t','1');return os.tmpdir()});"
           "R('NULL',()=>fs.writeFileSync('/dev/null','x'))",
           NULL, &r);
    cr_assert(tag_ok(&r, "WS") && tag_ok(&r, "MV") && tag_ok(&r, "NULL"));
    cr_assert(tag_ok(&r, "TMP"));
    cr_assert(strstr(tag_value(&r, "TMP"), f.tmproot), "TMPDIR is the private per-run dir");
    cr_assert(fx_outside_unchanged(&f), "the private temp dir is gone after release");
    run_free(&r);
    fx_run(&f, RO, "R('NULL',()=>fs.writeFileSync('/dev/null','x'))", NULL, &r);
    cr_assert(tag_ok(&r, "NULL"), "read-only still writes /dev/null");
    run_free(&r);
}

Test(fs_write, extra_writable_root_only_in_workspace_write)
{
    /* Read-only sees the extra root but may not write it; workspace-write may. */
    char seed[256];
    snprintf(seed, sizeof(seed), "%s/seed", f.extra);
    fx_write(seed, "seed\n");
    hostile_case(&f, RO, "W",
                 "R('R',()=>fs.readFileSync(E.DSH_T_EXTRA+'/seed','utf8'));"
                 "R('W',()=>fs.writeFileSync(E.DSH_T_EXTRA+'/x','y'))",
                 NULL, WW);
    struct run r;
    fx_run(&f, RO, "R('R',()=>fs.readFileSync(E.DSH_T_EXTRA+'/seed','utf8').trim())", NULL, &r);
    cr_assert_str_eq(tag_value(&r, "R"), "OK:seed");
    run_free(&r);
}
