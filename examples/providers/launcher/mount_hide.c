/* Hiding what Landlock cannot: stat(), readlink() and path lookup answer for any path Landlock
 * does not open, so in the launcher's mount namespace an empty read-only tmpfs covers every
 * directory under a few fixed parents ("/", "/dev", "/sys" and the levels of /sys above the CPU
 * and cgroup views) that holds no visible path and lies in none. Behind it /root/.ssh, the home
 * directories, /var/log or /sys/class/net/eth0 answer ENOENT. The parents are fixed so the cost
 * stays a few dozen mounts: other entries of a directory above a root (/tmp next to the temp
 * root, a home directory next to the workspace) and /etc's files stay stat-able. One tmpfs
 * instance serves them all: the first directory gets it, the others bind mounts of it, which keep
 * its read-only, nosuid, nodev and noexec flags (a new superblock per directory cost most of the
 * launcher's mount time). */
#include "mount_hide.h"
#include "launcher_limits.h"
#include "world.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* The visible paths with their lengths, measured once: related() runs for every directory of
 * the parents against every visible path. */
struct visible {
    const char *path;
    size_t len;
};
#define MAX_VISIBLE (3 * DSHX_MAX_ROOTS + 128) /* ro, rw, owned and the world's lists; beyond it a
                                                * path would be hidden, never shown */

static size_t flatten(const char *const *const *sets, struct visible *out)
{
    size_t n = 0;
    for (const char *const *const *set = sets; *set; set++)
        for (const char *const *p = *set; *p && n < MAX_VISIBLE; p++)
            out[n++] = (struct visible){*p, strlen(*p)};
    return n;
}

/* dir (canonical, absolute) is a visible path, lies beneath one or leads to one: what
 * dshx__path_within(v, dir) || dshx__path_within(dir, v) says, without measuring v again. */
static bool related(const char *dir, const struct visible *vis, size_t n)
{
    size_t len = strlen(dir);
    for (size_t i = 0; i < n; i++) {
        const struct visible *v = &vis[i];
        if (v->len >= len ? memcmp(v->path, dir, len) == 0 &&
                                (len == 1 || v->path[len] == '\0' || v->path[len] == '/')
                          : memcmp(dir, v->path, v->len) == 0 && (v->len == 1 || dir[v->len] == '/'))
            return true;
    }
    return false;
}

/* Covers path with the empty read-only tmpfs, mounted at first[0] (then "") by the first call. */
static int hide(const char *path, char first[512], char *ret_err, size_t errlen)
{
    int rc = first[0] ? mount(first, path, NULL, MS_BIND, NULL)
                      : mount("dsh-hidden", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                              "size=4k,mode=0555");
    if (rc < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "namespaces: hide %s: %s", path, strerror(e));
        return -e;
    }
    if (!first[0])
        snprintf(first, 512, "%s", path);
    return 0;
}

int dshx__hide_unrelated(const char *const *const *visible, char *ret_err, size_t errlen)
{
    char first[512] = "";
    static struct visible vis[MAX_VISIBLE]; /* static: large; the launcher is single-use */
    size_t nvis = flatten(visible, vis);
    static const char *const parents[] = {"/",       "/dev",         "/sys",
                                          "/sys/fs", "/sys/devices", "/sys/devices/system"};
    for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
        /* Only a parent that leads to something visible: the others are hidden whole, or are
         * visible themselves. */
        if (!related(parents[i], vis, nvis))
            continue;
        DIR *d = opendir(parents[i]);
        if (!d)
            continue;
        struct dirent *e;
        int rc = 0;
        while (rc == 0 && (e = readdir(d))) {
            struct stat st;
            bool dir = e->d_type == DT_DIR ||
                       (e->d_type == DT_UNKNOWN &&
                        fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                        S_ISDIR(st.st_mode));
            if (!dir || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue; /* symlinks and files stay: only directories can be covered */
            char path[512];
            int n = snprintf(path, sizeof(path), "%s/%s", strcmp(parents[i], "/") ? parents[i] : "",
                             e->d_name);
            if (n < 0 || (size_t)n >= sizeof(path) || related(path, vis, nvis))
                continue;
            rc = hide(path, first, ret_err, errlen);
        }
        closedir(d);
        if (rc < 0)
            return rc;
    }
    return 0;
}
