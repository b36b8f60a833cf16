/* dsh_root_refusal: which directories may be roots of a confined run (common/roots.c). */
#include "dsh_roots.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static char msg[8192];

static const char *check(const char *path, bool writable, const char *temp_root, const char *const *protected_roots)
{
    return dsh_root_refusal("f", path, path, writable, temp_root, protected_roots, msg, sizeof msg);
}

Test(roots, the_filesystem_root_is_never_a_root)
{
    cr_expect_str_eq(check("/", false, NULL, NULL), "f \"/\" is refused: it is the filesystem root");
    cr_expect_str_eq(check("/", true, NULL, NULL), "f \"/\" is refused: it is the filesystem root");
    cr_expect_str_eq(dsh_root_refusal("f", "/x/..", "/", false, NULL, NULL, msg, sizeof msg),
                     "f \"/x/..\" (resolves to /) is refused: it is the filesystem root");
}

Test(roots, no_root_overlaps_the_temp_root_in_either_direction)
{
    cr_expect_str_eq(check("/srv/t", false, "/srv/t/dsh-0", NULL),
                     "f \"/srv/t\" is refused: it contains the temp root /srv/t/dsh-0, where runs keep their private files");
    cr_expect_str_eq(check("/srv/t/dsh-0/dsh-host-a/dsh-run-b", false, "/srv/t/dsh-0", NULL),
                     "f \"/srv/t/dsh-0/dsh-host-a/dsh-run-b\" is refused: it lies inside the temp root /srv/t/dsh-0, "
                     "where runs keep their private files");
    cr_expect_not_null(check("/srv/t/dsh-0", true, "/srv/t/dsh-0", NULL), "the temp root itself");
    /* Controls: a sibling, and a name that only shares a prefix. */
    cr_expect_null(check("/srv/t/project", true, "/srv/t/dsh-0", NULL), "%s", msg);
    cr_expect_null(check("/srv/t/dsh-00", true, "/srv/t/dsh-0", NULL), "%s", msg);
}

Test(roots, a_writable_root_does_not_overlap_the_protected_files)
{
    const char *const own[] = {"/opt/dsh/lib/dsh/bootstrap", "/opt/node/bin", NULL};
    cr_expect_str_eq(check("/opt/dsh", true, NULL, own),
                     "f \"/opt/dsh\" is refused: a writable root may not contain /opt/dsh/lib/dsh/bootstrap, "
                     "which runs read and execute");
    cr_expect_str_eq(check("/opt/node/bin/x", true, NULL, own),
                     "f \"/opt/node/bin/x\" is refused: a writable root may not lie inside /opt/node/bin, "
                     "which runs read and execute");
    cr_expect_null(check("/opt/dsh", false, NULL, own), "reading it is fine: %s", msg);
    cr_expect_null(check("/opt/other", true, NULL, own), "%s", msg);
}

Test(roots, system_directories_are_never_writable)
{
    cr_expect_str_eq(check("/etc", true, NULL, NULL), "f \"/etc\" is refused: /etc is a system directory, never writable");
    cr_expect_str_eq(check("/etc/cron.d", true, NULL, NULL),
                     "f \"/etc/cron.d\" is refused: it lies inside the system directory /etc, never writable");
    const char *const parents[] = {"/home", "/root", "/tmp", "/var", "/var/tmp", "/usr", "/proc", "/sys", "/dev", "/boot", NULL};
    for (const char *const *p = parents; *p; p++) {
        char want[256];
        snprintf(want, sizeof want, "f \"%s\" is refused: %s is a system directory, never writable", *p, *p);
        cr_expect_str_eq(check(*p, true, NULL, NULL), want);
        cr_expect_null(check(*p, false, NULL, NULL), "%s may be read", *p);
    }
    /* Below a shared parent is a user's own directory; below a system tree it is not. */
    cr_expect_null(check("/home/alice/project", true, NULL, NULL), "%s", msg);
    cr_expect_null(check("/tmp/project", true, NULL, NULL), "%s", msg);
    cr_expect_null(check("/var/tmp/build", true, NULL, NULL), "%s", msg);
    cr_expect_not_null(check("/var/lib/dpkg", true, NULL, NULL));
    cr_expect_not_null(check("/usr/local/src", true, NULL, NULL));
    cr_expect_not_null(check("/proc/self", true, NULL, NULL));
}
