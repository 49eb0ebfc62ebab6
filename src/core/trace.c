/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace's rows (ob_trace.h).
 */
#include "config.h"

#include <stdio.h>

#include "ob_trace.h"

size_t ob_trace_format(char *buf, const ob_trace_row *row, int rank)
{
    int n;

    if (row->batch >= 0) {
        n = snprintf(buf, OB_TRACE_ROW_MAX, "%lld,%d,%lld,%.9g,%.9g\n", (long long) row->step, rank,
                     (long long) row->batch, row->compute_s, row->blocked_s);
    } else {
        n = snprintf(buf, OB_TRACE_ROW_MAX, "%lld,%d,,%.9g,%.9g\n", (long long) row->step, rank,
                     row->compute_s, row->blocked_s);
    }
    /* The longest row fits: the cut never happens, but never reads past the end either. */
    return n < 0 ? 0 : (size_t) n < OB_TRACE_ROW_MAX ? (size_t) n : OB_TRACE_ROW_MAX - 1;
}
