/* Image file probing: the pixel size of a stored PNG (IHDR) or JPEG (first SOFn) file, with
 * bounded reads. */
#ifndef PTC_IMAGE_FILE_H
#define PTC_IMAGE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Opens host_path read-only and non-blocking (a FIFO in place of the file must not block the host
 * thread). The fd, or a negative errno with why filled. */
int ptc__image_open(const char *host_path, char *why, size_t why_len);
/* Pixel size of the open file. Returns 0, DSH_E_UNSUPPORTED (another format),
 * DSH_E_REQUEST_INVALID (malformed, or not a regular file); why names the reason. */
int ptc__image_size_of(int fd, uint32_t *ret_width, uint32_t *ret_height, char *why, size_t why_len);
#endif
