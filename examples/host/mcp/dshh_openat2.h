/* openat2(2) UAPI for C libraries and kernel headers that predate it (Linux 5.6). The values are
 * the kernel's ABI and never change. */
#ifndef DSHH_OPENAT2_H
#define DSHH_OPENAT2_H

#include <stdint.h>
#include <sys/syscall.h>

#if defined(__has_include) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#define RESOLVE_IN_ROOT 0x10
#endif

#ifndef __NR_openat2
#define __NR_openat2 437
#endif

#endif
