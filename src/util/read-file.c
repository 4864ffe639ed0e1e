/* read-file.c: whole-file reads with a size limit checked while reading (read-file.h). */
#include "util/read-file.h"
#include "util/quote.h"

#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
read_fail(GError **error, const char *path, int err)
{
    g_autofree char *q = ppsim_quote_path(path);
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "cannot read '%s': %s", q,
                g_strerror(err));
    return FALSE;
}

static gboolean
read_too_big(GError **error, const char *path_raw, gsize max_bytes, const char *what)
{
    g_autofree char *path = ppsim_quote_path(path_raw);
    if (max_bytes >= ((gsize)1 << 20))
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                    "'%s': more than %" G_GSIZE_FORMAT " MiB, the limit for %s", path,
                    max_bytes >> 20, what);
    else
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                    "'%s': more than %" G_GSIZE_FORMAT " bytes, the limit for %s", path, max_bytes,
                    what);
    return FALSE;
}

gboolean
ppsim_text_check_nul(const char *text, gsize len, const char *name, const char *what,
                     GError **error)
{
    const char *nul = memchr(text, '\0', len);
    if (nul == NULL)
        return TRUE;
    int line = 1;
    const char *bol = text;
    for (const char *p = text; p < nul; p++)
        if (*p == '\n')
            line++, bol = p + 1;
    g_autofree char *q = ppsim_quote_path(name);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                "%s:%d:%d: a NUL byte (%s is text; is this the right file?)", q, line,
                (int)(nul - bol) + 1, what);
    return FALSE;
}

gboolean
ppsim_read_file(const char *path, gsize max_bytes, const char *what, char **text, gsize *len,
                GError **error)
{
    *text = NULL;
    *len = 0;
    int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return read_fail(error, path, errno);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        g_autofree char *q = ppsim_quote_path(path);
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "cannot read '%s': is a directory", q);
        return FALSE;
    }
    /* a regular file's size is known: refuse it before reading a byte */
    if (S_ISREG(st.st_mode) && (guint64)st.st_size > max_bytes) {
        close(fd);
        return read_too_big(error, path, max_bytes, what);
    }
    gsize cap = S_ISREG(st.st_mode) ? (gsize)st.st_size + 1 : 65536, n = 0;
    char *buf = g_malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (n > max_bytes)
                break;
            cap = MIN(2 * cap, max_bytes + 1);
            buf = g_realloc(buf, cap + 1);
        }
        gssize got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int err = errno;
            g_free(buf);
            close(fd);
            return read_fail(error, path, err);
        }
        if (got == 0)
            break;
        /* text has no NUL byte: a binary file or a device such as /dev/zero stops here */
        if (memchr(buf + n, '\0', (gsize)got) != NULL) {
            n += (gsize)got;
            close(fd);
            (void)ppsim_text_check_nul(buf, n, path, what, error); /* fails: it has one */
            g_free(buf);
            return FALSE;
        }
        n += (gsize)got;
    }
    close(fd);
    if (n > max_bytes) {
        g_free(buf);
        return read_too_big(error, path, max_bytes, what);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return TRUE;
}
