/* file-replace.h: write a whole file so that readers never see it half-written.
 *
 * The data goes to a temporary file next to @path, which is then renamed over it; on any
 * failure the temporary file is removed and the error names @path (never the temporary
 * name) with the system's reason.
 */
#pragma once

#include <glib.h>

gboolean ppsim_file_replace(const char *path, const char *data, gsize len, GError **error);

/* Writes all @len bytes of @data to the open descriptor @fd, again after EINTR and short
 * writes. Returns 0, or the errno value of the failure (ENOSPC when nothing more goes). */
int ppsim_fd_write_all(int fd, const char *data, gsize len);
