/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace's rows (ob_trace.h).
 */
#include "config.h"

#include <stdio.h>

#include "ob_trace.h"

/* ",reduction,waiting\n" of the step model, or ",,\n" when the reduction is
 * unknown; \p size bytes at \p buf. */
static int ob_trace_format_model(char *buf, size_t size, const ob_trace_row *row)
{
    double waiting = row->blocked_s - row->reduction_s;

    if (!(row->reduction_s >= 0.0)) {
        return snprintf(buf, size, ",,\n");
    }
    return snprintf(buf, size, ",%.9g,%.9g\n", row->reduction_s, waiting > 0.0 ? waiting : 0.0);
}

size_t ob_trace_format(char *buf, const ob_trace_row *row, int rank)
{
    int n, m;

    if (row->batch >= 0) {
        n = snprintf(buf, OB_TRACE_ROW_MAX, "%lld,%d,%lld,%.9g,%.9g", (long long) row->step, rank,
                     (long long) row->batch, row->compute_s, row->blocked_s);
    } else {
        n = snprintf(buf, OB_TRACE_ROW_MAX, "%lld,%d,,%.9g,%.9g", (long long) row->step, rank,
                     row->compute_s, row->blocked_s);
    }
    if (n < 0 || (size_t) n >= OB_TRACE_ROW_MAX) {
        n = n < 0 ? 0 : OB_TRACE_ROW_MAX - 1;
        buf[n] = '\0';
        return (size_t) n;
    }
    m = ob_trace_format_model(buf + n, OB_TRACE_ROW_MAX - (size_t) n, row);
    n += m < 0 ? 0 : m;
    /* The longest row fits: the cut never happens, but never reads past the end either. */
    return (size_t) n < OB_TRACE_ROW_MAX ? (size_t) n : OB_TRACE_ROW_MAX - 1;
}
