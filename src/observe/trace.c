/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace's rows (ob_trace.h).
 */
#include "config.h"

#include <stdio.h>

#include "ob_trace.h"

/* ",reduction,waiting" of the step model, or ",," when the reduction is
 * unknown; \p size bytes at \p buf. */
static int ob_trace_format_model(char *buf, size_t size, const ob_trace_row *row)
{
    double waiting = row->blocked_s - row->reduction_s;

    if (!(row->reduction_s >= 0.0)) {
        return snprintf(buf, size, ",,");
    }
    return snprintf(buf, size, ",%.9g,%.9g", row->reduction_s, waiting > 0.0 ? waiting : 0.0);
}

/* A time the kernel may not have told: empty when unknown (< 0). */
static void ob_trace_format_known(char *buf, size_t size, double x)
{
    if (x >= 0.0) {
        snprintf(buf, size, "%.9g", x);
    } else {
        buf[0] = '\0';
    }
}

/* ",cpu,switches,off_cpu,throttled" of what the kernel gave the rank, or
 * ",,,," when it is unknown; \p size bytes at \p buf. */
static void ob_trace_format_cpu(char *buf, size_t size, const ob_trace_row *row)
{
    char switches[24] = "", off[32], stopped[32];

    if (!row->cpu_known) {
        snprintf(buf, size, ",,,,");
        return;
    }
    if (row->nivcsw >= 0) {
        snprintf(switches, sizeof switches, "%lld", (long long) row->nivcsw);
    }
    ob_trace_format_known(off, sizeof off, row->off_cpu_s);
    ob_trace_format_known(stopped, sizeof stopped, row->throttled_s);
    snprintf(buf, size, ",%.9g,%s,%s,%s", row->cpu_s, switches, off, stopped);
}

size_t ob_trace_format(char *buf, const ob_trace_row *row, int rank, const char *host)
{
    char batch[24] = "", model[64] = "", time[32] = "", cpu[128], moved[48] = ",,";
    int n;

    if (row->batch >= 0) {
        snprintf(batch, sizeof batch, "%lld", (long long) row->batch);
    }
    ob_trace_format_model(model, sizeof model, row);
    if (row->time_s > 0.0) {
        snprintf(time, sizeof time, "%.6f", row->time_s);
    }
    ob_trace_format_cpu(cpu, sizeof cpu, row);
    if (row->taken >= 0 && row->given >= 0) {
        snprintf(moved, sizeof moved, ",%lld,%lld", (long long) row->taken, (long long) row->given);
    }
    n = snprintf(buf, OB_TRACE_ROW_MAX, "%lld,%d,%s,%.9g,%.9g%s,%s,%.*s%s%s\n", (long long) row->step,
                 rank, batch, row->compute_s, row->blocked_s, model, time, OB_TRACE_HOST_MAX,
                 NULL != host ? host : "", cpu, moved);
    /* The longest row fits: the cut never happens, but never reads past the end either. */
    return n < 0 ? 0 : (size_t) n < OB_TRACE_ROW_MAX ? (size_t) n : OB_TRACE_ROW_MAX - 1;
}
