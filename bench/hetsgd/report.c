/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The trace file and the recovery figures (see report.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "emulate.h"
#include "report.h"

int hetsgd_write_trace(const char *path, const char *policy, long steps, int P, const double *record)
{
    FILE *f = fopen(path, "w");
    int ok;

    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--trace %s: cannot create: %s", path, strerror(errno));
    }
    fprintf(f, "step,rank,policy,batch,compute_s,step_s,speed,cpu_s,step_cpu_s,taken,given,chunks,chunk_call_s,"
            "late_s\n");
    for (long k = 0; k < steps; k++) {
        for (int r = 0; r < P; r++) {
            const double *x = record + ((long) r * steps + k) * HETSGD_TRACE_FIELDS;

            fprintf(f, "%ld,%d,%s,%ld,%.9f,%.9f,%.6g,%.9f,%.9f,%ld,%ld,%ld,%.9f,%.9f\n", k, r, policy,
                    (long) x[HETSGD_TRACE_BATCH], x[HETSGD_TRACE_COMPUTE], x[HETSGD_TRACE_STEP], x[HETSGD_TRACE_SPEED],
                    x[HETSGD_TRACE_CPU], x[HETSGD_TRACE_STEP_CPU], (long) x[HETSGD_TRACE_TAKEN],
                    (long) x[HETSGD_TRACE_GIVEN], (long) x[HETSGD_TRACE_CHUNKS], x[HETSGD_TRACE_CHUNK_CALL],
                    x[HETSGD_TRACE_LATE]);
        }
    }
    ok = !ferror(f);
    if (0 != fclose(f) || !ok) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--trace %s: write failed", path);
    }
    return OMNIBATCH_SUCCESS;
}

/* Rows room is made for at first; it doubles as needed. */
#define TRACE_FIRST_ROWS 1024

/* One row of a trace file as read, before it finds its place. */
typedef struct trace_row {
    long step;
    int rank;
    double field[HETSGD_TRACE_FIELDS];
} trace_row;

/* The rows read so far.  max_step and max_rank stay below their limits
 * (trace_parse_row), so the step and rank counts are max + 1 without
 * overflow; they index the records only once steps x ranks == rows is known
 * (trace_place_rows), so no index passes the rows read. */
typedef struct trace_rows {
    trace_row *row;
    long n;
    long cap;
    long max_step;
    int max_rank;
} trace_rows;

static int trace_parse_row(const char *path, long lineno, const char *line, trace_row *out)
{
    long k, r, batch, taken = 0, given = 0, chunks = 0;
    double t, st, sp, cpu, step_cpu = 0.0, call = 0.0, late = 0.0;
    int n;

    /* Both indices as long, bounded before they become anything smaller
     * (glibc's scanf saturates a number past the type's range).  The step's
     * CPU came later, the chunks' columns later still: a trace without them
     * reads them as 0. */
    n = sscanf(line, "%ld,%ld,%*[^,],%ld,%lf,%lf,%lf,%lf,%lf,%ld,%ld,%ld,%lf,%lf", &k, &r, &batch, &t, &st, &sp,
               &cpu, &step_cpu, &taken, &given, &chunks, &call, &late);
    if (7 != n && 8 != n && 13 != n) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s:%ld: not a trace row", path, lineno);
    }
    if (k < 0 || k >= HETSGD_TRACE_MAX_STEPS) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s:%ld: step %ld: expected 0..%ld", path, lineno, k,
                       (long) HETSGD_TRACE_MAX_STEPS - 1);
    }
    if (r < 0 || r >= HETSGD_TRACE_MAX_RANKS) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s:%ld: rank %ld: expected 0..%d", path, lineno, r,
                       HETSGD_TRACE_MAX_RANKS - 1);
    }
    out->step = k;
    out->rank = (int) r;
    out->field[HETSGD_TRACE_BATCH] = (double) batch;
    out->field[HETSGD_TRACE_COMPUTE] = t;
    out->field[HETSGD_TRACE_STEP] = st;
    out->field[HETSGD_TRACE_SPEED] = sp;
    out->field[HETSGD_TRACE_CPU] = cpu;
    out->field[HETSGD_TRACE_STEP_CPU] = step_cpu;
    out->field[HETSGD_TRACE_TAKEN] = (double) taken;
    out->field[HETSGD_TRACE_GIVEN] = (double) given;
    out->field[HETSGD_TRACE_CHUNKS] = (double) chunks;
    out->field[HETSGD_TRACE_CHUNK_CALL] = call;
    out->field[HETSGD_TRACE_LATE] = late;
    return OMNIBATCH_SUCCESS;
}

static int trace_rows_push(const char *path, trace_rows *rows, const trace_row *row)
{
    if (rows->n == rows->cap) {
        long cap = 0 == rows->cap ? TRACE_FIRST_ROWS : 2 * rows->cap;
        trace_row *more;

        if (cap > HETSGD_TRACE_MAX_ROWS) {
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: more than %ld rows: expected at most that",
                           path, (long) HETSGD_TRACE_MAX_ROWS);
        }
        more = realloc(rows->row, (size_t) cap * sizeof *more);
        if (NULL == more) {
            return ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %ld rows", path, cap);
        }
        rows->row = more;
        rows->cap = cap;
    }
    rows->row[rows->n++] = *row;
    rows->max_step = row->step > rows->max_step ? row->step : rows->max_step;
    rows->max_rank = row->rank > rows->max_rank ? row->rank : rows->max_rank;
    return OMNIBATCH_SUCCESS;
}

/* Rows of (step, rank, batch, compute, step_s, speed, cpu), in any order. */
static int trace_read_rows(const char *path, FILE *f, trace_rows *rows)
{
    char line[512];
    long lineno = 1;
    int rc = OMNIBATCH_SUCCESS;

    while (OMNIBATCH_SUCCESS == rc && NULL != fgets(line, sizeof line, f)) {
        trace_row row;

        lineno++;
        rc = trace_parse_row(path, lineno, line, &row);
        if (OMNIBATCH_SUCCESS == rc) {
            rc = trace_rows_push(path, rows, &row);
        }
    }
    return rc;
}

/* Every step has every rank exactly once: steps x ranks == rows, computed
 * without a product that could wrap, and no (step, rank) twice. */
static int trace_place_rows(const char *path, const trace_rows *rows, long steps, int P,
                            double *record)
{
    unsigned char *seen = NULL;

    if (rows->n < 1 || (long) P > rows->n || 0 != rows->n % P || steps != rows->n / P) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: %ld rows for %ld steps of %d ranks", path, rows->n,
                       steps, P);
    }
    seen = calloc((size_t) rows->n, 1);
    if (NULL == seen) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %ld rows", path, rows->n);
    }
    for (long j = 0; j < rows->n; j++) {
        const trace_row *row = &rows->row[j];
        long at = (long) row->rank * steps + row->step;

        if (seen[at]) {
            free(seen);
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: step %ld of rank %d appears twice", path,
                           row->step, row->rank);
        }
        seen[at] = 1;
        memcpy(record + at * HETSGD_TRACE_FIELDS, row->field, sizeof row->field);
    }
    free(seen);
    return OMNIBATCH_SUCCESS;
}

int hetsgd_read_trace(const char *path, long *steps, int *P, double **record)
{
    FILE *f = fopen(path, "r");
    char line[512];
    trace_rows rows = { NULL, 0, 0, -1, -1 };
    long nsteps;
    int nranks;
    int rc;

    *record = NULL;
    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot open: %s", path, strerror(errno));
    }
    if (NULL == fgets(line, sizeof line, f) || 0 != strncmp(line, "step,rank,", 10)) {
        fclose(f);
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: not a hetsgd trace (no step,rank,... header)", path);
    }
    rc = trace_read_rows(path, f, &rows);
    fclose(f);
    /* Both are below their row limits: + 1 cannot overflow. */
    nsteps = rows.max_step + 1;
    nranks = rows.max_rank + 1;
    if (OMNIBATCH_SUCCESS == rc && rows.n > 0) {
        *record = calloc((size_t) rows.n * HETSGD_TRACE_FIELDS, sizeof **record);
        if (NULL == *record) {
            rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %ld records", path, rows.n);
        }
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = trace_place_rows(path, &rows, nsteps, nranks, *record);
    }
    free(rows.row);
    if (OMNIBATCH_SUCCESS != rc) {
        free(*record);
        *record = NULL;
        return rc;
    }
    *steps = nsteps;
    *P = nranks;
    return OMNIBATCH_SUCCESS;
}

/* Whether the hold judged steps from k on (fewer at the phase's end) are all within tol. */
static int holds_from(const double *ratio, const unsigned char *change, long steps, long k, double tol,
                      long hold)
{
    long seen = 0;

    for (long j = k; j < steps && seen < hold && (j == k || !change[j]); j++) {
        if (ratio[j] < 0.0) {
            continue;
        }
        if (ratio[j] > tol) {
            return 0;
        }
        seen++;
    }
    return seen > 0;
}

void hetsgd_recovery(const double *ratio, const unsigned char *change, long steps, double tol, long hold,
                     hetsgd_recovery_stats *out)
{
    long recovered_sum = 0;
    int recovered = 0;

    memset(out, 0, sizeof *out);
    out->initial = -1;
    out->worst = -1;
    hold = hold > 0 ? hold : 1;
    for (long c = 0; c < steps; c++) {
        long took = -1;

        if (0 != c && !change[c]) {
            continue;
        }
        for (long k = c; k < steps && (k == c || !change[k]); k++) {
            if (ratio[k] >= 0.0 && holds_from(ratio, change, steps, k, tol, hold)) {
                took = k - c;
                break;
            }
        }
        if (0 == c) {
            out->initial = took;
            continue;
        }
        out->changes++;
        if (took < 0) {
            out->unrecovered++;
        } else {
            recovered++;
            recovered_sum += took;
            out->worst = took > out->worst ? took : out->worst;
        }
    }
    out->mean = recovered > 0 ? (double) recovered_sum / recovered : 0.0;
}

double hetsgd_balance_ratio(const double *record, long steps, int P, long k, double *balanced)
{
    double samples = 0.0;
    double throughput = 0.0;
    double longest = 0.0;

    for (int i = 0; i < P; i++) {
        const double *x = record + ((long) i * steps + k) * HETSGD_TRACE_FIELDS;
        double b = x[HETSGD_TRACE_BATCH];
        double t = x[HETSGD_TRACE_COMPUTE];

        if (!(t > 0.0) || b < 0.0) {
            return -1.0;
        }
        samples += b;
        throughput += b / t;
        longest = t > longest ? t : longest;
    }
    if (!(samples > 0.0)) {
        return -1.0;
    }
    if (NULL != balanced) {
        *balanced = samples / throughput;
    }
    return longest * throughput / samples;
}

static double median3(double a, double b, double c)
{
    double lo = a < b ? a : b;
    double hi = a < b ? b : a;

    return c < lo ? lo : c > hi ? hi : c;
}

void hetsgd_smooth_median3(const double *x, const unsigned char *change, long steps, double *out)
{
    for (long k = 0; k < steps; k++) {
        long before = -1;
        long after = -1;

        out[k] = -1.0;
        if (x[k] < 0.0) {
            continue;
        }
        /* The nearest judged neighbours, without crossing a change: at step k itself a change
         * separates k from what came before. */
        for (long j = k; j > 0 && !change[j]; j--) {
            if (x[j - 1] >= 0.0) {
                before = j - 1;
                break;
            }
        }
        for (long j = k + 1; j < steps && !change[j]; j++) {
            if (x[j] >= 0.0) {
                after = j;
                break;
            }
        }
        if (before >= 0 && after >= 0) {
            out[k] = median3(x[before], x[k], x[after]);
        } else if (before >= 0 || after >= 0) {
            out[k] = 0.5 * (x[k] + x[before >= 0 ? before : after]);
        } else {
            out[k] = x[k];
        }
    }
}

double hetsgd_final_accuracy(const long *done, const double *acc, long n, long steps, long eval_every,
                             long evals, long *used, long *from)
{
    double sum = 0.0;
    long first;
    long count = 0;

    *used = 0;
    *from = -1;
    if (n <= 0) {
        return -1.0;
    }
    evals = evals > 0 ? evals : 1;
    if (eval_every > 0) {
        first = n - 1;
        while (first > 0 && done[first - 1] > steps - evals * eval_every) {
            first--;
        }
    } else {
        first = n > evals ? n - evals : 0;
    }
    for (long e = first; e < n; e++) {
        sum += acc[e];
        count++;
    }
    *used = count;
    *from = done[first];
    return sum / (double) count;
}

/* The speeds of run \p a changed at step k (step 0 counts as the start). */
static unsigned char speeds_change(const double *a, long steps, int P, long k)
{
    unsigned char change = 0 == k;

    for (int i = 0; i < P && k > 0; i++) {
        const double *now = a + ((long) i * steps + k) * HETSGD_TRACE_FIELDS;

        change |= now[HETSGD_TRACE_SPEED] != now[HETSGD_TRACE_SPEED - HETSGD_TRACE_FIELDS];
    }
    return change;
}

/* Step k's time: the mean over the ranks of their step_s (-1 when one is not positive). */
static double step_seconds(const double *record, long steps, int P, long k)
{
    double sum = 0.0;

    for (int i = 0; i < P; i++) {
        const double t = record[((long) i * steps + k) * HETSGD_TRACE_FIELDS + HETSGD_TRACE_STEP];

        if (!(t > 0.0)) {
            return -1.0;
        }
        sum += t;
    }
    return sum / P;
}

int hetsgd_side_by_side(const double *a, const double *b, long steps, int P, double *ratio,
                        unsigned char *change)
{
    double *x = calloc((size_t) steps * 4, sizeof *x);

    if (NULL == x) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the balance of %ld steps", steps);
    }
    for (long k = 0; k < steps; k++) {
        change[k] = speeds_change(a, steps, P, k);
        x[k] = hetsgd_balance_ratio(a, steps, P, k, NULL);
        x[steps + k] = hetsgd_balance_ratio(b, steps, P, k, NULL);
    }
    hetsgd_smooth_median3(x, change, steps, x + 2 * steps);
    hetsgd_smooth_median3(x + steps, change, steps, x + 3 * steps);
    for (long k = 0; k < steps; k++) {
        double m = x[2 * steps + k], n = x[3 * steps + k];

        ratio[k] = m > 0.0 && n > 0.0 ? m / n : -1.0;
    }
    free(x);
    return OMNIBATCH_SUCCESS;
}

void hetsgd_side_by_side_steps(const double *a, const double *b, long steps, int P, double *raw, double *ratio,
                               unsigned char *change)
{
    for (long k = 0; k < steps; k++) {
        const double x = step_seconds(a, steps, P, k), y = step_seconds(b, steps, P, k);

        change[k] = speeds_change(a, steps, P, k);
        raw[k] = x > 0.0 && y > 0.0 ? x / y : -1.0;
    }
    hetsgd_smooth_median3(raw, change, steps, ratio);
}

long hetsgd_overrun_steps(const double *record, long steps, int P, double slowdown, double alpha,
                          const double *cost)
{
    long overruns = 0;

    for (long k = 0; k < steps; k++) {
        double longest = 0.0;
        double emulated = 0.0;

        for (int r = 0; r < P; r++) {
            const double *x = record + ((long) r * steps + k) * HETSGD_TRACE_FIELDS;
            double length = hetsgd_emulated_seconds(hetsgd_charged_cpu(cost, x[HETSGD_TRACE_BATCH],
                                                                       x[HETSGD_TRACE_CPU]),
                                                    x[HETSGD_TRACE_SPEED], slowdown, alpha);

            longest = x[HETSGD_TRACE_COMPUTE] > longest ? x[HETSGD_TRACE_COMPUTE] : longest;
            emulated = length > emulated ? length : emulated;
        }
        overruns += longest > 1.1 * emulated + 1e-3;
    }
    return overruns;
}

long hetsgd_late_steps(const double *record, long steps, int P)
{
    long late = 0;

    for (long k = 0; k < steps; k++) {
        int over = 0;

        for (int r = 0; r < P; r++) {
            const double *x = record + ((long) r * steps + k) * HETSGD_TRACE_FIELDS;

            over |= x[HETSGD_TRACE_LATE] > 0.1 * x[HETSGD_TRACE_COMPUTE] + 1e-3;
        }
        late += over;
    }
    return late;
}

void hetsgd_chunk_summary(const double *record, long steps, int P, long first, hetsgd_chunk_figures *out)
{
    double chunks = 0.0, moved = 0.0, samples = 0.0, call = 0.0, step_s = 0.0;

    memset(out, 0, sizeof *out);
    for (long k = first < 0 ? 0 : first; k < steps; k++) {
        double taken = 0.0;

        for (int r = 0; r < P; r++) {
            const double *x = record + ((long) r * steps + k) * HETSGD_TRACE_FIELDS;

            chunks += x[HETSGD_TRACE_CHUNKS];
            taken += x[HETSGD_TRACE_TAKEN];
            samples += x[HETSGD_TRACE_BATCH];
            call += x[HETSGD_TRACE_CHUNK_CALL];
            step_s += x[HETSGD_TRACE_STEP];
        }
        moved += taken;
        out->steps_moved += taken > 0.0;
    }
    if (steps > first && P > 0) {
        out->chunks_per_step = chunks / ((double) (steps - (first < 0 ? 0 : first)) * P);
    }
    out->moved_share = samples > 0.0 ? moved / samples : 0.0;
    out->call_share = step_s > 0.0 ? call / step_s : 0.0;
}

double hetsgd_mean_judged(const double *x, long first, long last)
{
    double sum = 0.0;
    long n = 0;

    for (long k = first; k < last; k++) {
        if (x[k] >= 0.0) {
            sum += x[k];
            n++;
        }
    }
    return n > 0 ? sum / (double) n : 0.0;
}
