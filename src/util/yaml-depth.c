/* yaml-depth.c: see yaml-depth.h. */
#include "util/yaml-depth.h"

gboolean
ppsim_yaml_check_depth(const char *bytes, gsize len, yaml_mark_t *where)
{
    /* Every collection opens at an indicator of its own: '[' or '{' (flow), '-' (block
     * sequence), '?' or ':' (block or flow mapping). A text with few of these characters
     * (counted anywhere, strings included) cannot nest deeper than their count, and needs
     * no parse: a sweep reads the same small base scenario once per point. */
    gsize indicators = 0;
    for (gsize i = 0; i < len && indicators <= PPSIM_YAML_MAX_DEPTH; i++)
        indicators += bytes[i] == '[' || bytes[i] == '{' || bytes[i] == '-' || bytes[i] == '?' ||
                      bytes[i] == ':';
    if (indicators <= PPSIM_YAML_MAX_DEPTH)
        return TRUE;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return TRUE;
    yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
    int depth = 0;
    gboolean ok = TRUE, done = FALSE;
    while (ok && !done) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event))
            break; /* a syntax error: the loader reports it */
        switch (event.type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > PPSIM_YAML_MAX_DEPTH) {
                ok = FALSE;
                if (where != NULL)
                    *where = event.start_mark;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_STREAM_END_EVENT:
            done = TRUE;
            break;
        default:
            break;
        }
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return ok;
}

gboolean
ppsim_yaml_load_checked(const char *bytes, gsize len, const char *display, yaml_document_t *doc,
                        GQuark domain, int code, GError **error)
{
    yaml_mark_t deep;
    if (!ppsim_yaml_check_depth(bytes, len, &deep)) {
        g_set_error(error, domain, code, "%s:%zu:%zu: YAML nested more than %d levels deep",
                    display, deep.line + 1, deep.column + 1, PPSIM_YAML_MAX_DEPTH);
        return FALSE;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
    gboolean loaded = yaml_parser_load(&parser, doc);
    if (!loaded)
        g_set_error(error, domain, code, "%s:%zu:%zu: %s", display, parser.problem_mark.line + 1,
                    parser.problem_mark.column + 1, parser.problem ? parser.problem : "bad YAML");
    yaml_parser_delete(&parser);
    return loaded;
}
