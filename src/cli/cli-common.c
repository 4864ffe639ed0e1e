/* cli-common.c: error printing and option parsing shared by the subcommands. */
#include "cli/cli.h"
#include "scenario/scenario.h"
#include "util/file-replace.h"
#include "util/quote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest message printed: quoted input is capped where it is quoted (util/quote.h); this
 * is the last guard, for a message that quotes input some other way. */
#define CLI_MESSAGE_MAX 4096

static void
cli_print_error(const char *message)
{
    g_autofree char *safe = ppsim_message_sanitize(message, CLI_MESSAGE_MAX);
    fprintf(stderr, "ppsim: error: %s\n", safe);
}

void
ppsim_cli_warning(const char *message)
{
    g_autofree char *safe = ppsim_message_sanitize(message, CLI_MESSAGE_MAX);
    fprintf(stderr, "ppsim: warning: %s\n", safe);
}

int
ppsim_cli_fail(const GError *error)
{
    cli_print_error(error->message);
    return PPSIM_EXIT_FAILURE;
}

int
ppsim_cli_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    cli_print_error(msg);
    return PPSIM_EXIT_USAGE;
}

int
ppsim_cli_usage_quoted(const char *what, const char *input)
{
    g_autofree char *q = ppsim_quote(input);
    return ppsim_cli_usage("%s '%s'", what, q);
}

int
ppsim_cli_usage_io(const char *what)
{
    g_autofree char *msg = g_strdup_printf("%s: %s", what, g_strerror(errno ? errno : EIO));
    cli_print_error(msg);
    return PPSIM_EXIT_FAILURE;
}

gboolean
ppsim_cli_parse(GOptionContext *ctx, int *argc, char ***argv)
{
    g_autoptr(GError) error = NULL;
    /* GLib converts string options from the locale's encoding and, on a byte it cannot,
     * fails without naming the option: name it, and show the value escaped */
    g_autofree char *flag = NULL;
    const char *bad = NULL;
    for (int i = 1; i < *argc && bad == NULL; i++) {
        const char *a = (*argv)[i];
        if (g_utf8_validate(a, -1, NULL))
            continue;
        bad = a;
        const char *eq = strchr(a, '=');
        if (a[0] == '-' && eq != NULL) /* --flag=value */
            flag = g_strndup(a, eq - a), bad = eq + 1;
        else if (i > 1 && (*argv)[i - 1][0] == '-' && strchr((*argv)[i - 1], '=') == NULL)
            flag = g_strdup((*argv)[i - 1]);
    }
    if (!g_option_context_parse(ctx, argc, argv, &error)) {
        if (g_error_matches(error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE) &&
            bad != NULL) {
            g_autofree char *q = ppsim_quote(bad);
            g_autofree char *msg =
                flag != NULL
                    ? g_strdup_printf("%s: the value '%s' is not UTF-8 text\n(see '%s --help')",
                                      flag, q, g_get_prgname())
                    : g_strdup_printf("the argument '%s' is not UTF-8 text\n(see '%s --help')", q,
                                      g_get_prgname());
            cli_print_error(msg);
            return FALSE;
        }
        g_autofree char *msg =
            g_strdup_printf("%s\n(see '%s --help')", error->message, g_get_prgname());
        cli_print_error(msg);
        return FALSE;
    }
    return TRUE;
}

gboolean
ppsim_cli_write_file(const char *path, const char *data, gsize len, GError **error)
{
    if (strcmp(path, "-") == 0) /* stdout; main() checks the final flush */
        return fwrite(data, 1, len, stdout) == len ||
               (g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                            "Failed to write to stdout: %s", g_strerror(errno)),
                FALSE);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        /* follow the link explicitly: replace its target, keep the link */
        g_autofree char *target = realpath(path, NULL);
        if (target == NULL) {
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                        "'%s' is a symbolic link to a missing file: %s", path, g_strerror(errno));
            return FALSE;
        }
        return ppsim_cli_write_file(target, data, len, error);
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "'%s' is a directory", path);
            return FALSE;
        }
        /* a FIFO, a device, a socket: write through, never replace it with a file */
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                        "Failed to open '%s': %s", path, g_strerror(errno));
            return FALSE;
        }
        int err = ppsim_fd_write_all(fd, data, len);
        if (err != 0)
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
                        "Failed to write to '%s': %s", path, g_strerror(err));
        gboolean ok = err == 0;
        if (close(fd) != 0 && ok) {
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                        "Failed to write to '%s': %s", path, g_strerror(errno));
            ok = FALSE;
        }
        return ok;
    }
    /* a regular file (or none yet): replaced whole, so readers never see it half-written */
    return ppsim_file_replace(path, data, len, error);
}

gboolean
ppsim_cli_with_overrides(char **with, char ***sets, GError **error)
{
    g_autoptr(GStrvBuilder) all = g_strv_builder_new();
    for (char **f = with; f && *f; f++) {
        g_auto(GStrv) frag = ppsim_scenario_fragment_overrides(*f, error);
        if (frag == NULL)
            return FALSE;
        g_strv_builder_addv(all, (const char **)frag);
    }
    if (*sets)
        g_strv_builder_addv(all, (const char **)*sets);
    g_strfreev(*sets);
    *sets = g_strv_builder_end(all);
    return TRUE;
}
