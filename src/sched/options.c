/* options.c: generator options checked against the generator's table, and the list of
 * choices generators report; see generator.h.
 *
 * Values arrive as text with their location in the scenario file; each is parsed to its
 * declared type once here, so generators read typed values and never see a bad one.
 */
#include "sched/generator.h"
#include "scenario/scenario.h"
#include "util/quote.h"
#include "util/ppsim-error.h"
#include "util/suggest.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef struct {
    const PpsimOptionSpec *spec;
    gboolean set;
    gint64 i;
    double d;
    char *s;
} OptionSlot;

struct PpsimOptions {
    guint n;
    OptionSlot *slots;
};

static gboolean
option_parse(OptionSlot *slot, const char *text, GError **error)
{
    char *end = NULL;
    errno = 0;
    switch (slot->spec->type) {
    case PPSIM_OPTION_INT:
        slot->i = g_ascii_strtoll(text, &end, 10);
        if (end == text || *end != '\0' || errno != 0) {
            g_autofree char *q = ppsim_quote(text);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "option '%s' must be an integer, got '%s'", slot->spec->name, q);
            return FALSE;
        }
        slot->d = (double)slot->i;
        break;
    case PPSIM_OPTION_DOUBLE:
        slot->d = g_ascii_strtod(text, &end);
        if (end == text || *end != '\0' || errno != 0 || !isfinite(slot->d)) {
            g_autofree char *q = ppsim_quote(text);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "option '%s' must be a finite number, got '%s'%s", slot->spec->name, q,
                        end != text && *end == '\0' && !isfinite(slot->d)
                            ? " (infinity and NaN are not values; leave the option out for its "
                              "default)"
                            : "");
            return FALSE;
        }
        break;
    case PPSIM_OPTION_STRING:
        break;
    }
    g_free(slot->s);
    slot->s = g_strdup(text);
    slot->set = TRUE;
    return TRUE;
}

static int
options_find(const PpsimOptions *opts, const char *name)
{
    for (guint i = 0; i < opts->n; i++)
        if (g_strcmp0(opts->slots[i].spec->name, name) == 0)
            return i;
    return -1;
}

static void
options_unknown(const PpsimScheduleClass *klass, const char *key, GError **error)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (const PpsimOptionSpec *o = klass->options; o && o->name; o++)
        g_ptr_array_add(names, (gpointer)o->name);
    g_ptr_array_add(names, NULL);
    const char *hint = ppsim_suggest(key, (const char *const *)names->pdata);
    g_autofree char *q = ppsim_quote(key);
    if (hint)
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "unknown option '%s' for schedule '%s' (did you mean '%s'?)", q, klass->name,
                    hint);
    else if (names->len > 1)
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "unknown option '%s' for schedule '%s' (see 'ppsim list schedules')", q,
                    klass->name);
    else
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_SCHEMA,
                    "schedule '%s' takes no option, got '%s'", klass->name, q);
}

PpsimOptions *
ppsim_options_new(const PpsimScheduleClass *klass, const GArray *values, const char *display_name,
                  GError **error)
{
    g_autoptr(PpsimOptions) opts = g_new0(PpsimOptions, 1);
    for (const PpsimOptionSpec *o = klass->options; o && o->name; o++)
        opts->n++;
    opts->slots = g_new0(OptionSlot, MAX(opts->n, 1));
    for (guint i = 0; i < opts->n; i++) {
        opts->slots[i].spec = &klass->options[i];
        if (klass->options[i].default_value != NULL) {
            gboolean ok = option_parse(&opts->slots[i], klass->options[i].default_value, NULL);
            g_assert(ok); /* a generator's own default must parse */
        }
    }
    for (guint v = 0; values != NULL && v < values->len; v++) {
        const PpsimOptionValue *val = &g_array_index(values, PpsimOptionValue, v);
        int idx = options_find(opts, val->key);
        GError *local = NULL;
        if (idx < 0)
            options_unknown(klass, val->key, &local);
        else
            option_parse(&opts->slots[idx], val->value, &local);
        if (local != NULL) {
            g_propagate_prefixed_error(error, local, "%s:%d:%d: ", display_name ? display_name : "",
                                       val->mark.line, val->mark.col);
            return NULL;
        }
    }
    return g_steal_pointer(&opts);
}

void
ppsim_options_free(PpsimOptions *opts)
{
    if (opts == NULL)
        return;
    for (guint i = 0; i < opts->n; i++)
        g_free(opts->slots[i].s);
    g_free(opts->slots);
    g_free(opts);
}

static const OptionSlot *
options_slot(const PpsimOptions *opts, const char *name)
{
    int idx = options_find(opts, name);
    g_assert(idx >= 0); /* a generator asked for an option it did not declare */
    return &opts->slots[idx];
}

gboolean
ppsim_options_is_set(const PpsimOptions *opts, const char *name)
{
    return options_slot(opts, name)->set;
}

gint64
ppsim_options_get_int(const PpsimOptions *opts, const char *name)
{
    return options_slot(opts, name)->i;
}

double
ppsim_options_get_double(const PpsimOptions *opts, const char *name)
{
    return options_slot(opts, name)->d;
}

const char *
ppsim_options_get_string(const PpsimOptions *opts, const char *name)
{
    return options_slot(opts, name)->s;
}

/* ---- choices ------------------------------------------------------------------------ */

static void
choice_clear(gpointer p)
{
    PpsimChoice *c = p;
    g_free(c->key);
    g_free(c->value);
    g_free(c->note);
}

GArray *
ppsim_choices_new(void)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(PpsimChoice));
    g_array_set_clear_func(a, choice_clear);
    return a;
}

void
ppsim_choice_add(GArray *choices, const char *key, const char *value, const char *note_fmt, ...)
{
    if (choices == NULL)
        return;
    va_list ap;
    va_start(ap, note_fmt);
    PpsimChoice c = {g_strdup(key), g_strdup(value), g_strdup_vprintf(note_fmt, ap)};
    va_end(ap);
    for (guint i = 0; i < choices->len; i++) {
        if (strcmp(g_array_index(choices, PpsimChoice, i).key, key) == 0) {
            choice_clear(&g_array_index(choices, PpsimChoice, i));
            g_array_index(choices, PpsimChoice, i) = c;
            return;
        }
    }
    g_array_append_val(choices, c);
}

gboolean
ppsim_options_get_recompute(const PpsimOptions *opts, const char *name, gboolean allow_t_recomp,
                            int *share_pct, gboolean *t_recomp, GError **error)
{
    const char *text = ppsim_options_get_string(opts, name);
    *share_pct = 0;
    *t_recomp = FALSE;
    if (text == NULL || g_strcmp0(text, "none") == 0)
        return TRUE;
    if (allow_t_recomp && g_strcmp0(text, "t-recomp") == 0) {
        *t_recomp = TRUE;
        return TRUE;
    }
    char *end = NULL;
    double ratio = g_ascii_strtod(text, &end);
    /* whole percents: the IR keeps a recompute share in percent */
    if (end != text && *end == '\0' && ratio > 0 && ratio <= 1 &&
        fabs(ratio * 100 - round(ratio * 100)) < 1e-9 && round(ratio * 100) >= 1) {
        *share_pct = (int)round(ratio * 100);
        return TRUE;
    }
    g_autofree char *q = ppsim_quote(text);
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                "option '%s' must be 'none'%s or a ratio in (0, 1] in whole percents, got '%s'",
                name, allow_t_recomp ? ", 't-recomp'" : "", q);
    return FALSE;
}
