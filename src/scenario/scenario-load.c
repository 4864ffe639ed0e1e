/* scenario-load.c: the I/O edge of scenario loading: read the file, parse the bytes. */
#include "scenario/scenario.h"

PpsimScenario *
ppsim_scenario_load_file(const char *path, const char *const *overrides, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, error))
        return NULL;
    g_autofree char *dir = g_path_get_dirname(path);
    return ppsim_scenario_parse(text, len, path, dir, overrides, error);
}
