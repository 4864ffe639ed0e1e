/* columns.h: the per-device figures of a result, in one table that every writer reads: the
 * CSV rows, the JSON device objects, the text tables of bubbles and of 3D communication,
 * and `ppsim plan`'s JSON (its peak memory and oom). A new per-device figure is one row here
 * and a field in run-result.h's PpsimDeviceResult.
 */
#pragma once

#include <glib.h>
#include "sim/run-result.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_COLUMN_ID,      /* int: the device id */
    PPSIM_COLUMN_MS,      /* PpsimTime, printed in ms */
    PPSIM_COLUMN_RATIO,   /* double, shortest round-trip */
    PPSIM_COLUMN_MEM,     /* gint64 memory units, divided by the result's mem_scale */
    PPSIM_COLUMN_BOOL,    /* gboolean: true / false */
    PPSIM_COLUMN_OP,      /* the peak op (PpsimOp, with has_peak_op): its description, or null */
    PPSIM_COLUMN_VERDICT, /* PpsimMemVerdict: "fits", "tight" or "oom" */
} PpsimColumnKind;

typedef enum {
    PPSIM_COLUMN_T_OFFLOAD = 1 << 0,         /* only for a device that offloads an optimizer step
                                              * (optimizer_overlap >= 0), so other outputs stay */
    PPSIM_COLUMN_TEXT_BUBBLES = 1 << 1,      /* in the text's bubble table (summed over devices) */
    PPSIM_COLUMN_TEXT_COMM = 1 << 2,         /* in the text's 3D table (max over devices) */
    PPSIM_COLUMN_MEMORY_BREAKDOWN = 1 << 3,  /* hardware mode only (has_breakdown) */
    PPSIM_COLUMN_COMPUTE_BREAKDOWN = 1 << 4, /* kernel model only (has_compute_breakdown) */
} PpsimColumnFlags;

typedef struct {
    const char *json;  /* key in a JSON device object */
    const char *group; /* the JSON object holding the key ("idle", "bubbles"); NULL: top */
    const char *csv;   /* CSV column; NULL: not in the CSV */
    const char *text;  /* heading in a text table; NULL: in none */
    PpsimColumnKind kind;
    gsize offset; /* of the field in PpsimDeviceResult */
    guint flags;  /* PpsimColumnFlags */
} PpsimDeviceColumn;

/* The columns in output order, closed by an entry whose json is NULL. */
extern const PpsimDeviceColumn ppsim_device_columns[];

/* The column whose JSON key is @json (top level first, then in groups); NULL if none. */
const PpsimDeviceColumn *ppsim_device_column_find(const char *json);

/* Appends @col's value for device @dev of @res, as JSON and CSV write it. */
void ppsim_device_column_append(GString *out, const PpsimDeviceColumn *col,
                                const PpsimRunResult *res, const PpsimDeviceResult *dev);

/* Appends @col's value over all devices of @res: the largest (MS, MEM, RATIO), or whether
 * any device's is true (BOOL), the worst (VERDICT). */
void ppsim_device_column_append_max(GString *out, const PpsimDeviceColumn *col,
                                    const PpsimRunResult *res);

/* @col's value for @dev as a PpsimTime (MS columns only). */
PpsimTime ppsim_device_column_time(const PpsimDeviceColumn *col, const PpsimDeviceResult *dev);

G_END_DECLS
