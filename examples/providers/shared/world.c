/* The execution world's system read set (see world.h). */
#include "world.h"

#include <string.h>

const char *const dshx__world_system_roots[] = {
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    /* /sys: what glibc, libuv and V8 read (CPU count and topology, the cgroup limits libuv
     * honours in availableParallelism and constrainedMemory); not the network interfaces, MAC
     * addresses, firmware and ACPI tables, or device tree of the rest of /sys */
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
    /* /etc: what programs and the dynamic loader need, nothing that holds credentials */
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/alternatives",
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/mime.types",
    "/etc/locale.alias",
    "/etc/inputrc",
    "/etc/terminfo",
    "/etc/magic",
    "/etc/gitconfig",
    "/etc/bash.bashrc",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/shells",
    "/etc/mailcap",
    NULL,
};

const char *const dshx__world_devices_rw[] = {"/dev/null", "/dev/zero", "/dev/full", NULL};
const char *const dshx__world_devices_ro[] = {"/dev/random", "/dev/urandom", NULL};

bool dshx__path_within(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return path[0] == '/';
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool within_any(const char *path, const char *const *roots)
{
    for (const char *const *r = roots; *r; r++)
        if (dshx__path_within(path, *r))
            return true;
    return false;
}

bool dshx__world_system_visible(const char *canonical_path)
{
    if (dshx__path_within(canonical_path, "/proc"))
        return false;
    return within_any(canonical_path, dshx__world_system_roots) ||
           within_any(canonical_path, dshx__world_devices_rw) ||
           within_any(canonical_path, dshx__world_devices_ro);
}
