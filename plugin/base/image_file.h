/* Image file probing: the pixel size of a stored PNG (IHDR) or JPEG (first SOFn) file, with
 * bounded reads. */
#ifndef PTC_IMAGE_FILE_H
#define PTC_IMAGE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Opens host_path O_PATH (nothing is read, no driver's open runs, whatever a program put there):
 * the fd, or a negative errno with why filled. */
int ptc__image_open(const char *host_path, char *why, size_t why_len);
/* Opens the file behind an O_PATH fd for reading (read-only, non-blocking, through its /proc
 * link: the same inode, never a name again) when it is a regular file, so a device or FIFO a
 * program put in its place is never opened. The fd, or a negative errno with why filled ("not a
 * regular file": -EINVAL). */
int ptc__image_open_for_reading(int path_fd, char *why, size_t why_len);
/* Pixel size of the open file. Returns 0, DSH_E_UNSUPPORTED (another format),
 * DSH_E_REQUEST_INVALID (malformed, or not a regular file); why names the reason. */
int ptc__image_size_of(int fd, uint32_t *ret_width, uint32_t *ret_height, char *why, size_t why_len);
#endif
