/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The timeline (ob_timeline.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_json.h"
#include "ob_timeline.h"

/* Trace-event times are microseconds. */
#define OB_TIMELINE_US 1e6

static void ob_timeline_sep(ob_timeline *t)
{
    fputs(0 == t->events ? "\n" : ",\n", t->f);
    t->events++;
}

void ob_timeline_begin(ob_timeline *t, FILE *f, double origin)
{
    t->f = f;
    t->origin = origin;
    t->events = 0;
    fputs("[", f);
}

void ob_timeline_rank(ob_timeline *t, int rank, const char *host)
{
    ob_timeline_sep(t);
    fprintf(t->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"name\":\"rank %d", rank, rank);
    if (NULL != host && '\0' != host[0]) {
        fputs(" (", t->f);
        ob_json_escaped(t->f, host);
        fputs(")", t->f);
    }
    fputs("\"}}", t->f);
    ob_timeline_sep(t);
    fprintf(t->f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"sort_index\":%d}}", rank, rank);
}

static void ob_timeline_span(ob_timeline *t, const char *name, int rank, double start, double dur,
                             const ob_trace_row *row)
{
    ob_timeline_sep(t);
    fprintf(t->f, "{\"name\":\"%s\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,"
            "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%lld,\"batch\":", name, rank,
            (start - t->origin) * OB_TIMELINE_US, dur * OB_TIMELINE_US, (long long) row->step);
    if (row->batch >= 0) {
        fprintf(t->f, "%lld", (long long) row->batch);
    } else {
        fputs("null", t->f);
    }
    /* A step worked in chunks: the samples taken from others and given. */
    if (row->taken >= 0 && row->given >= 0) {
        fprintf(t->f, ",\"taken\":%lld,\"given\":%lld", (long long) row->taken, (long long) row->given);
    }
    fputs("}}", t->f);
}

void ob_timeline_step(ob_timeline *t, int rank, const ob_trace_row *row, double reduction,
                      long prev_batch)
{
    double start, waiting;

    if (!(row->time_s > 0.0)) {
        return;
    }
    if (!(reduction > 0.0)) {
        reduction = 0.0;
    }
    if (reduction > row->blocked_s) {
        reduction = row->blocked_s;
    }
    waiting = row->blocked_s - reduction;
    start = row->time_s - row->compute_s - row->blocked_s;
    if (prev_batch >= 0 && row->batch >= 0 && prev_batch != row->batch) {
        ob_timeline_sep(t);
        fprintf(t->f, "{\"name\":\"plan change\",\"cat\":\"plan\",\"ph\":\"i\",\"s\":\"p\","
                "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"step\":%lld,\"from\":%ld,"
                "\"to\":%lld}}", rank, (start - t->origin) * OB_TIMELINE_US,
                (long long) row->step, prev_batch, (long long) row->batch);
    }
    ob_timeline_span(t, "compute", rank, start, row->compute_s, row);
    ob_timeline_span(t, "waiting", rank, start + row->compute_s, waiting, row);
    ob_timeline_span(t, "reduction", rank, start + row->compute_s + waiting, reduction, row);
}

int ob_timeline_end(ob_timeline *t)
{
    fputs("\n]\n", t->f);
    if (0 != fflush(t->f) || ferror(t->f)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "timeline: write failed");
    }
    return OMNIBATCH_SUCCESS;
}

/* ---------------------------------------------------------------- stream */

static long ob_timeline_window(int nranks)
{
    long window = nranks > 0 ? OB_TIMELINE_WINDOW_ROWS / nranks : OB_TIMELINE_WINDOW_STEPS;

    if (window > OB_TIMELINE_WINDOW_STEPS) {
        window = OB_TIMELINE_WINDOW_STEPS;
    }
    return window > 1 ? window : 1;
}

int ob_timeline_stream_begin(ob_timeline_stream *s, FILE *f, int nranks,
                             const char *const *hosts, double origin)
{
    size_t n = (size_t) (nranks > 0 ? nranks : 1);

    s->nranks = nranks > 0 ? nranks : 0;
    s->window = ob_timeline_window(nranks);
    s->step = malloc((size_t) s->window * sizeof *s->step);
    s->have = calloc((size_t) s->window, sizeof *s->have);
    s->rows = malloc((size_t) s->window * n * sizeof *s->rows);
    s->got = calloc((size_t) s->window * n, sizeof *s->got);
    s->prev_batch = malloc(n * sizeof *s->prev_batch);
    s->failed = NULL == s->step || NULL == s->have || NULL == s->rows || NULL == s->got
                || NULL == s->prev_batch;
    for (long k = 0; !s->failed && k < s->window; k++) {
        s->step[k] = -1;
    }
    for (int r = 0; NULL != s->prev_batch && r < s->nranks; r++) {
        s->prev_batch[r] = -1;
    }
    ob_timeline_begin(&s->t, f, origin);
    for (int r = 0; r < s->nranks; r++) {
        ob_timeline_rank(&s->t, r, NULL != hosts ? hosts[r] : NULL);
    }
    if (s->failed) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "timeline: no memory for a window of %ld steps of "
                       "%d ranks; each step's reduction is taken from its own row", s->window,
                       nranks);
    }
    return OMNIBATCH_SUCCESS;
}

/* Write one row, remembering the rank's batch for the next plan change. */
static void ob_timeline_stream_row(ob_timeline_stream *s, int rank, const ob_trace_row *row,
                                   double reduction)
{
    long prev = NULL != s->prev_batch ? s->prev_batch[rank] : -1;

    ob_timeline_step(&s->t, rank, row, reduction, prev);
    if (NULL != s->prev_batch) {
        s->prev_batch[rank] = (long) row->batch;
    }
}

/* Write the step slot \p k holds (its rows, by rank) and free the slot. */
static void ob_timeline_stream_emit(ob_timeline_stream *s, long k)
{
    const ob_trace_row *rows = s->rows + (size_t) k * (size_t) s->nranks;
    const unsigned char *got = s->got + (size_t) k * (size_t) s->nranks;
    double least = -1.0;

    for (int r = 0; r < s->nranks; r++) {
        if (got[r] && (least < 0.0 || rows[r].blocked_s < least)) {
            least = rows[r].blocked_s;
        }
    }
    for (int r = 0; r < s->nranks; r++) {
        if (got[r]) {
            ob_timeline_stream_row(s, r, &rows[r], least);
        }
    }
    memset(s->got + (size_t) k * (size_t) s->nranks, 0, (size_t) s->nranks);
    s->have[k] = 0;
    s->step[k] = -1;
}

/* Write every held step before \p step (all of them: INT64_MAX), oldest first. */
static void ob_timeline_stream_flush_before(ob_timeline_stream *s, int64_t step)
{
    for (;;) {
        long oldest = -1;

        for (long k = 0; k < s->window; k++) {
            if (s->step[k] >= 0 && s->step[k] < step
                && (oldest < 0 || s->step[k] < s->step[oldest])) {
                oldest = k;
            }
        }
        if (oldest < 0) {
            return;
        }
        ob_timeline_stream_emit(s, oldest);
    }
}

void ob_timeline_stream_add(ob_timeline_stream *s, int rank, const ob_trace_row *row)
{
    long k;

    if (rank < 0 || rank >= s->nranks || row->step < 0) {
        return;
    }
    if (s->failed) {
        ob_timeline_stream_row(s, rank, row, row->blocked_s);
        return;
    }
    k = (long) (row->step % s->window);
    if (s->step[k] != row->step && s->step[k] >= 0) {
        /* The window is full: what it holds up to the slot's step goes out as it is. */
        ob_timeline_stream_flush_before(s, s->step[k] + 1);
    }
    if (s->got[(size_t) k * (size_t) s->nranks + (size_t) rank]) {
        /* The same step twice from one rank: write the first out. */
        ob_timeline_stream_flush_before(s, row->step + 1);
    }
    s->step[k] = row->step;
    s->rows[(size_t) k * (size_t) s->nranks + (size_t) rank] = *row;
    s->got[(size_t) k * (size_t) s->nranks + (size_t) rank] = 1;
    if (++s->have[k] == s->nranks) {
        ob_timeline_stream_flush_before(s, row->step + 1);
    }
}

int ob_timeline_stream_end(ob_timeline_stream *s)
{
    if (!s->failed) {
        ob_timeline_stream_flush_before(s, INT64_MAX);
    }
    free(s->step);
    free(s->have);
    free(s->rows);
    free(s->got);
    free(s->prev_batch);
    s->step = NULL;
    s->have = NULL;
    s->rows = NULL;
    s->got = NULL;
    s->prev_batch = NULL;
    return ob_timeline_end(&s->t);
}

/* ------------------------------------------------------------ whole run */

/* The earliest step start of all rows with a known time; 0 when none. */
static double ob_timeline_origin(const ob_trace_row *rows, long total)
{
    double origin = 0.0;

    for (long k = 0; k < total; k++) {
        double start = rows[k].time_s - rows[k].compute_s - rows[k].blocked_s;

        if (rows[k].time_s > 0.0 && (0.0 == origin || start < origin)) {
            origin = start;
        }
    }
    return origin;
}

/* The least step index any rank has left, or INT64_MAX. */
static int64_t ob_timeline_next(const ob_trace_row *const *cursor, const ob_trace_row *const *end,
                                int nranks)
{
    int64_t step = INT64_MAX;

    for (int r = 0; r < nranks; r++) {
        if (cursor[r] < end[r] && cursor[r]->step < step) {
            step = cursor[r]->step;
        }
    }
    return step;
}

int ob_timeline_write(FILE *f, const ob_trace_row *rows, const long *counts, int nranks,
                      const char *const *hosts)
{
    size_t n = (size_t) (nranks > 0 ? nranks : 1);
    const ob_trace_row **cursor = malloc(n * sizeof *cursor);
    const ob_trace_row **end = malloc(n * sizeof *end);
    ob_timeline_stream s;
    long total = 0;
    int rc;

    if (NULL == cursor || NULL == end) {
        free(cursor);
        free(end);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "timeline: no memory for %d ranks", nranks);
    }
    for (int r = 0; r < nranks; r++) {
        cursor[r] = rows + total;
        total += counts[r];
        end[r] = rows + total;
    }
    /* The stream, fed step by step: each step is complete when its turn comes.  Without
     * memory for its window it still writes every row, a row at a time. */
    (void) ob_timeline_stream_begin(&s, f, nranks, hosts, ob_timeline_origin(rows, total));
    for (int64_t step = ob_timeline_next(cursor, end, nranks); INT64_MAX != step;
         step = ob_timeline_next(cursor, end, nranks)) {
        for (int r = 0; r < nranks; r++) {
            for (; cursor[r] < end[r] && cursor[r]->step == step; cursor[r]++) {
                ob_timeline_stream_add(&s, r, cursor[r]);
            }
        }
    }
    rc = ob_timeline_stream_end(&s);
    free(cursor);
    free(end);
    return rc;
}
