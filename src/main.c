/* main.c: `ppsim <command> [options]`: the subcommand table only (gio-tool.c shape). */
#include "config.h"
#include "cli/cli.h"
#include "util/suggest.h"
#include "util/quote.h"

#include <locale.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const PpsimCommand commands[] = {
    {"run", ppsim_cmd_run, "simulate the schedules of a scenario and report"},
    {"check", ppsim_cmd_check, "validate a scenario and its schedules without simulating"},
    {"list", ppsim_cmd_list, "list schedules, hardware and model presets, frameworks"},
    {"validate", ppsim_cmd_validate, "check published formulas against simulated timelines"},
    {"sweep", ppsim_cmd_sweep, "run a design-space sweep: one row per point and schedule"},
    {"merge", ppsim_cmd_merge, "join the CSV parts of a sharded sweep"},
    {"search", ppsim_cmd_search, "rank the layouts of N GPUs (tp, pp, dp, schedule) by tokens/s"},
    {"plan", ppsim_cmd_plan, "plan layers and recompute per stage (ILP) and replay the plan"},
    {"calibrate", ppsim_cmd_calibrate, "fit a hardware efficiency to measured runs of your stack"},
    {"help", cmd_help, "show help for ppsim or for a command"},
    {"version", cmd_version, "print the version"},
};

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: ppsim <command> [options]\n\n"
            "ppsim simulates pipeline-parallel LLM training schedules on modelled hardware.\n\n"
            "commands:\n");
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'ppsim help <command>' or 'ppsim <command> --help' for details.\n"
                 "Exit status: 0 ok, 1 runtime failure, 2 usage error.\n");
}

static const PpsimCommand *
find_command(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int
unknown_command(const char *name)
{
    const char *names[G_N_ELEMENTS(commands) + 1];
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        names[i] = commands[i].name;
    names[G_N_ELEMENTS(commands)] = NULL;
    const char *hint = ppsim_suggest(name, names);
    g_autofree char *q = ppsim_quote(name);
    if (hint)
        return ppsim_cli_usage("unknown command '%s' (did you mean '%s'?)", q, hint);
    return ppsim_cli_usage("unknown command '%s' (see 'ppsim --help')", q);
}

static int
dispatch(const PpsimCommand *cmd, int argc, char **argv)
{
    g_autofree char *prgname = g_strdup_printf("ppsim %s", cmd->name);
    g_set_prgname(prgname);
    return cmd->run(argc, argv);
}

static int
cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return PPSIM_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) { /* `ppsim help help` */
        usage(stdout);
        return PPSIM_EXIT_OK;
    }
    const PpsimCommand *cmd = find_command(argv[1]);
    if (cmd == NULL)
        return unknown_command(argv[1]);
    char *help_argv[] = {argv[1], "--help", NULL};
    return dispatch(cmd, 2, help_argv);
}

static int
cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("ppsim %s\n", PPSIM_VERSION);
    return PPSIM_EXIT_OK;
}

/* Results that did not reach stdout (a full disk, a closed pipe) are a failure, not a
 * success with the output lost. */
static int
finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ppsim: error: writing the results to stdout: %s\n",
                g_strerror(errno ? errno : EIO));
        return rc == PPSIM_EXIT_OK ? PPSIM_EXIT_FAILURE : rc;
    }
    return rc;
}

int
main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    g_set_prgname("ppsim");
    if (argc < 2) {
        usage(stderr);
        return PPSIM_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return finish(cmd_help(1, argv));
    if (strcmp(name, "--version") == 0)
        return finish(cmd_version(0, NULL));
    const PpsimCommand *cmd = find_command(name);
    if (cmd == NULL)
        return name[0] == '-' ? ppsim_cli_usage_quoted("unknown option", name)
                              : unknown_command(name);
    return finish(dispatch(cmd, argc - 1, argv + 1));
}
