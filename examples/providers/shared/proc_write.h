/* Shared by the services library and dsh-range-supervisor. */
#ifndef DSHX_PROC_WRITE_H
#define DSHX_PROC_WRITE_H

/* Writes text into the /proc control file at path in one write(2). 0 or a negative errno. */
int dshx__proc_write(const char *path, const char *text);

#endif
