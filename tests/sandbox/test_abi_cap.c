/* The enforcement report follows the Landlock ABI the launcher really uses. A test-only cap
 * (max_landlock_abi) makes the launcher use an older ABI: the report must turn partial exactly
 * where the rules say (truncate below 3, TCP below 4, device ioctls below 5, signal and abstract
 * unix scoping below 6), and the programs must still run confined at every level. */
#include "harness.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct fx f;

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(abi_cap, .fini = teardown, .timeout = 90);

static const char *cap_level(json_object *report, const char *name)
{
    json_object *caps = NULL, *v = NULL;
    if (!json_object_object_get_ex(report, "capabilities", &caps) ||
        !json_object_object_get_ex(caps, name, &v))
        return "(missing)";
    return json_object_get_string(v);
}

static int kernel_abi(void)
{
    long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U /* VERSION */);
    return abi < 0 ? 0 : abi > 7 ? 7 : (int)abi;
}

static void check_level(int cap)
{
    int abi = cap ? cap : kernel_abi();
    if (kernel_abi() < abi)
        cr_skip_test("the kernel's Landlock ABI %d is below %d", kernel_abi(), abi);
    struct fx_options o = {.max_landlock_abi = cap};
    fx_setup(&f, &o);
    struct run r;
    fx_run(&f, WW,
           "R('WS',()=>fs.writeFileSync(WS+'/ok','x'));"
           "R('OUT',()=>fs.writeFileSync(SH+'/victim.txt','x'));"
           "R('SEC',()=>fs.readFileSync(SEC+'/.ssh/id_rsa'));"
           "R('SIG',()=>process.kill(1,0))",
           NULL, &r);
    cr_assert_eq(r.confine_status, 0);
    json_object *rep = json_tokener_parse(r.report);
    cr_assert(rep, "report: %s", r.report);
    cr_log_info("ABI %d report: %s", abi, r.report);
    json_object *v = NULL;
    cr_assert(json_object_object_get_ex(rep, "landlockAbi", &v));
    cr_assert_eq(json_object_get_int(v), abi, "the report names the ABI in use");

    bool files = abi >= 3, network = abi >= 4, ioctl = abi >= 5, scoped = abi >= 6;
    cr_assert_str_eq(cap_level(rep, "files"), files ? "full" : "partial", "files at ABI %d", abi);
    cr_assert_str_eq(cap_level(rep, "network"), network ? "full" : "partial", "network at %d", abi);
    cr_assert_str_eq(cap_level(rep, "ioctl"), ioctl ? "full" : "partial", "ioctl at %d", abi);
    cr_assert_str_eq(cap_level(rep, "signals"), scoped ? "full" : "partial", "signals at %d", abi);
    cr_assert_str_eq(cap_level(rep, "ipc"), scoped ? "full" : "partial", "ipc at %d", abi);
    json_object *e = NULL;
    cr_assert(json_object_object_get_ex(rep, "enforcement", &e));
    cr_assert_str_eq(json_object_get_string(e), scoped ? "full" : "partial");
    cr_assert(json_object_object_get_ex(rep, "denialLogging", &v));
    cr_assert_eq(json_object_get_boolean(v), abi >= 7);

    /* Confined at every level ... */
    cr_assert(tag_ok(&r, "WS"), "ABI %d: the workspace is writable", abi);
    cr_assert(tag_denied(&r, "OUT"), "ABI %d: writing outside is denied", abi);
    cr_assert(tag_denied(&r, "SEC"), "ABI %d: secrets stay hidden", abi);
    cr_assert(fx_outside_unchanged(&f));
    /* ... and the partial report is honest: below ABI 6 a program running as the host's uid can
     * signal the supervisor; one with a dedicated uid is stopped by the uid check alone. */
    bool dedicated = strcmp(cap_level(rep, "identity"), "full") == 0;
    if (scoped || dedicated)
        cr_assert(tag_denied(&r, "SIG"), "ABI %d: signal scoping or a foreign uid", abi);
    else
        cr_assert(tag_ok(&r, "SIG"), "ABI %d: no signal scoping, as reported", abi);
    json_object_put(rep);
    run_free(&r);
}

Test(abi_cap, abi_1)
{
    check_level(1);
}

Test(abi_cap, abi_2)
{
    check_level(2);
}

Test(abi_cap, abi_3)
{
    check_level(3);
}

Test(abi_cap, abi_4)
{
    check_level(4);
}

Test(abi_cap, abi_5)
{
    check_level(5);
}

Test(abi_cap, abi_6)
{
    check_level(6);
}

Test(abi_cap, abi_7_is_this_kernel)
{
    check_level(7);
}

Test(abi_cap, uncapped_uses_the_kernel_abi)
{
    check_level(0); /* 0 = the kernel's own */
}
