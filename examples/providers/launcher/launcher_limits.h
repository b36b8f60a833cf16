/* Limits of dsh-sandbox-launch's command line, shared by the launcher's files. */
#ifndef DSHX_LAUNCHER_LIMITS_H
#define DSHX_LAUNCHER_LIMITS_H

#define DSHX_MAX_ROOTS 256 /* of each kind on the launcher's command line */

#endif /* DSHX_LAUNCHER_LIMITS_H */
