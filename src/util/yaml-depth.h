/* yaml-depth.h: a nesting-depth pre-check for YAML text, run before libyaml loads it.
 *
 * libyaml's scanner takes time quadratic in the nesting depth (it revisits every open level
 * on each token), and walking a deep tree recurses: a few kilobytes of '[' take seconds and
 * then the stack. Scenario, sweep and --set texts nest a handful of levels; anything past
 * PPSIM_YAML_MAX_DEPTH is refused before it is loaded.
 */
#pragma once

#include <glib.h>
#include <yaml.h>

G_BEGIN_DECLS

/* Deepest nesting of mappings and sequences a YAML text may have. */
#define PPSIM_YAML_MAX_DEPTH 64

/* Streams the events of @bytes (@len bytes) and returns FALSE when a collection opens more
 * than PPSIM_YAML_MAX_DEPTH levels deep, with *@where (nullable) its start mark (0-based).
 * Syntax errors return TRUE: loading the text reports them with libyaml's message. Stops at
 * the first offending collection, so time stays linear in what it reads. */
gboolean ppsim_yaml_check_depth(const char *bytes, gsize len, yaml_mark_t *where);

/* Loads the first document of @bytes into @doc after the depth check; errors (in @domain
 * with @code) read "@display:line:col: why". On success the caller deletes @doc. */
gboolean ppsim_yaml_load_checked(const char *bytes, gsize len, const char *display,
                                 yaml_document_t *doc, GQuark domain, int code, GError **error);

G_END_DECLS
