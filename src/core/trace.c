/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace (ob_trace.h).
 */
#include "config.h"

#include <stdlib.h>

#include "ob_error.h"
#include "ob_trace.h"

long ob_trace_rank_limit(int nranks)
{
    long limit = nranks > 0 ? OB_TRACE_MAX_ROWS / nranks : OB_TRACE_MAX_ROWS;

    return limit > 0 ? limit : 1;
}

void ob_trace_init(ob_trace *t, long limit)
{
    t->rows = NULL;
    t->n = 0;
    t->cap = 0;
    t->limit = limit > 0 ? limit : 0;
    t->dropped = 0;
}

int ob_trace_append(ob_trace *t, const ob_trace_row *row)
{
    if (t->n >= t->limit) {
        t->dropped++;
        return OMNIBATCH_SUCCESS;
    }
    if (t->n == t->cap) {
        /* Doubling, clipped to the limit: the last growth never overshoots. */
        long cap = t->cap > 0 ? 2 * t->cap : 64;
        ob_trace_row *rows;

        if (cap > t->limit) {
            cap = t->limit;
        }
        rows = realloc(t->rows, (size_t) cap * sizeof *rows);
        if (NULL == rows) {
            t->dropped++;
            return ob_fail(OMNIBATCH_ERR_NOMEM, "trace: no memory for %ld rows", cap);
        }
        t->rows = rows;
        t->cap = cap;
    }
    t->rows[t->n++] = *row;
    return OMNIBATCH_SUCCESS;
}

void ob_trace_free(ob_trace *t)
{
    free(t->rows);
    ob_trace_init(t, 0);
}

int ob_trace_write(FILE *f, const ob_trace_row *rows, const long *counts, int nranks)
{
    const ob_trace_row **cursor;
    const ob_trace_row **end;
    long offset = 0;

    cursor = malloc((size_t) (nranks > 0 ? nranks : 1) * sizeof *cursor);
    end = malloc((size_t) (nranks > 0 ? nranks : 1) * sizeof *end);
    if (NULL == cursor || NULL == end) {
        free(cursor);
        free(end);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "trace: no memory for %d ranks", nranks);
    }
    for (int r = 0; r < nranks; r++) {
        cursor[r] = rows + offset;
        offset += counts[r];
        end[r] = rows + offset;
    }
    fprintf(f, "step,rank,batch,compute_s,blocked_s\n");
    /* A merge by step: each rank's rows are in step order, and the ranks'
     * steps run nearly in lockstep, so each round writes about one row per
     * rank. */
    for (;;) {
        int64_t step = INT64_MAX;

        for (int r = 0; r < nranks; r++) {
            if (cursor[r] < end[r] && cursor[r]->step < step) {
                step = cursor[r]->step;
            }
        }
        if (INT64_MAX == step) {
            break;
        }
        for (int r = 0; r < nranks; r++) {
            for (; cursor[r] < end[r] && cursor[r]->step == step; cursor[r]++) {
                const ob_trace_row *row = cursor[r];

                if (row->batch >= 0) {
                    fprintf(f, "%lld,%d,%lld,%.9g,%.9g\n", (long long) row->step, r,
                            (long long) row->batch, row->compute_s, row->blocked_s);
                } else {
                    fprintf(f, "%lld,%d,,%.9g,%.9g\n", (long long) row->step, r,
                            row->compute_s, row->blocked_s);
                }
            }
        }
    }
    free(cursor);
    free(end);
    if (0 != fflush(f) || ferror(f)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "trace: write failed");
    }
    return OMNIBATCH_SUCCESS;
}
