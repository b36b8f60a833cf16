/* mount_setattr(2) UAPI beyond what Debian 12's C library declares. The values are the kernel's
 * ABI and never change. */
#ifndef DSHX_MOUNT_DEFS_H
#define DSHX_MOUNT_DEFS_H

#include <linux/mount.h>
#include <sys/syscall.h>

#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

#endif
