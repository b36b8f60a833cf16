/* The kernel's Landlock ABI (landlock_probe.c): read by the library's kernel probe for the report
 * and by the launcher, which refuses a kernel below the ABI the report promised. */
#ifndef DSHX_LANDLOCK_PROBE_H
#define DSHX_LANDLOCK_PROBE_H

int dshx__landlock_probe_abi(void); /* 0 when missing */

#endif /* DSHX_LANDLOCK_PROBE_H */
