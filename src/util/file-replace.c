/* file-replace.c: atomic whole-file writes (see file-replace.h). */
#include "util/file-replace.h"
#include "util/quote.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <unistd.h>

static gboolean
replace_fail(GError **error, const char *path, int err)
{
    g_autofree char *q = ppsim_quote_path(path);
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "cannot write '%s': %s", q,
                g_strerror(err));
    return FALSE;
}

int
ppsim_fd_write_all(int fd, const char *data, gsize len)
{
    while (len > 0) {
        gssize n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : ENOSPC;
        data += n;
        len -= (gsize)n;
    }
    return 0;
}

gboolean
ppsim_file_replace(const char *path, const char *data, gsize len, GError **error)
{
    g_autofree char *tmp = g_strdup_printf("%s.XXXXXX", path);
    int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0)
        return replace_fail(error, path, errno);
    int err = ppsim_fd_write_all(fd, data, len);
    if (close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && g_rename(tmp, path) != 0)
        err = errno;
    if (err != 0) {
        g_unlink(tmp);
        return replace_fail(error, path, err);
    }
    return TRUE;
}
