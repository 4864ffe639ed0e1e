/* read-file.h: read a whole input file with a size limit checked while reading.
 *
 * g_file_get_contents() grows its buffer until end of file: a device such as /dev/zero, a
 * FIFO fed forever or a huge file takes minutes and gigabytes before anything is checked.
 * This reader stops at @max_bytes + 1 bytes and fails naming the file, what it is and the
 * limit, whatever the file is (regular, device, pipe). Every input ppsim reads is text, so
 * a NUL byte also stops it at once, naming its line and column.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Limits of the inputs ppsim reads (scenarios/README.md "Limits"). */
#define PPSIM_SCENARIO_MAX_BYTES ((gsize)64 << 20) /* scenario, sweep file, --with fragment */
#define PPSIM_SET_MAX_BYTES ((gsize)16 << 20)      /* one --set value */
#define PPSIM_CSV_MAX_BYTES ((gsize)1 << 30)       /* schedule CSV, sweep CSV parts */

/* Reads @path into *@text (NUL-terminated, g_free) and *@len. Fails with G_FILE_ERROR
 * (the system's reason) or G_FILE_ERROR_FBIG when the file holds more than @max_bytes:
 * "PATH: more than N MiB, the limit for @what". */
gboolean ppsim_read_file(const char *path, gsize max_bytes, const char *what, char **text,
                         gsize *len, GError **error);

/* FALSE with "@name:line:col: a NUL byte (@what is text ...)" when @text (@len bytes) holds
 * a NUL byte. ppsim_read_file() applies it while reading. */
gboolean ppsim_text_check_nul(const char *text, gsize len, const char *name, const char *what,
                              GError **error);

G_END_DECLS
