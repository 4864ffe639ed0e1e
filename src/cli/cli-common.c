/* cli-common.c: error printing and option parsing shared by the subcommands. */
#include "cli/cli.h"

#include <stdio.h>

int
ppsim_cli_fail(const GError *error)
{
    fprintf(stderr, "ppsim: error: %s\n", error->message);
    return PPSIM_EXIT_FAILURE;
}

int
ppsim_cli_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    fprintf(stderr, "ppsim: error: %s\n", msg);
    return PPSIM_EXIT_USAGE;
}

gboolean
ppsim_cli_parse(GOptionContext *ctx, int *argc, char ***argv)
{
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(ctx, argc, argv, &error)) {
        fprintf(stderr, "ppsim: error: %s\n(see '%s --help')\n", error->message, g_get_prgname());
        return FALSE;
    }
    return TRUE;
}

gboolean
ppsim_cli_write_file(const char *path, const char *data, gsize len, GError **error)
{
    /* g_file_set_contents writes a temporary file and renames it over @path, so readers
     * never see a half-written file. */
    return g_file_set_contents(path, data, (gssize)len, error);
}
