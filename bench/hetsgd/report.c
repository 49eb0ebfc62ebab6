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
#include "report.h"

int hetsgd_write_trace(const char *path, const char *policy, long steps, int P, const double *record)
{
    FILE *f = fopen(path, "w");
    int ok;

    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--trace %s: cannot create: %s", path, strerror(errno));
    }
    fprintf(f, "step,rank,policy,batch,compute_s,step_s,speed,cpu_s\n");
    for (long k = 0; k < steps; k++) {
        for (int r = 0; r < P; r++) {
            const double *x = record + ((long) r * steps + k) * HETSGD_TRACE_FIELDS;

            fprintf(f, "%ld,%d,%s,%ld,%.9f,%.9f,%.6g,%.9f\n", k, r, policy, (long) x[HETSGD_TRACE_BATCH],
                    x[HETSGD_TRACE_COMPUTE], x[HETSGD_TRACE_STEP], x[HETSGD_TRACE_SPEED], x[HETSGD_TRACE_CPU]);
        }
    }
    ok = !ferror(f);
    if (0 != fclose(f) || !ok) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--trace %s: write failed", path);
    }
    return OMNIBATCH_SUCCESS;
}

int hetsgd_read_trace(const char *path, long *steps, int *P, double **record)
{
    FILE *f = fopen(path, "r");
    char line[512];
    long n = 0, cap = 0, lineno = 1, maxk = -1;
    int maxr = -1;
    double *rows = NULL;
    int rc = OMNIBATCH_SUCCESS;

    *record = NULL;
    if (NULL == f) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot open: %s", path, strerror(errno));
    }
    if (NULL == fgets(line, sizeof line, f) || 0 != strncmp(line, "step,rank,", 10)) {
        fclose(f);
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: not a hetsgd trace (no step,rank,... header)", path);
    }
    /* Rows of (step, rank, batch, compute, step_s, speed, cpu), in any order. */
    while (OMNIBATCH_SUCCESS == rc && NULL != fgets(line, sizeof line, f)) {
        long k, batch;
        int r;
        double t, st, sp, cpu;

        lineno++;
        if (7 != sscanf(line, "%ld,%d,%*[^,],%ld,%lf,%lf,%lf,%lf", &k, &r, &batch, &t, &st, &sp, &cpu)
            || k < 0 || r < 0 || r >= 1 << 20) {
            rc = ob_fail(OMNIBATCH_ERR_ARG, "%s:%ld: not a trace row", path, lineno);
            break;
        }
        if (n == cap) {
            double *more = realloc(rows, (size_t) (cap = cap ? 2 * cap : 1024) * 7 * sizeof *rows);

            if (NULL == more) {
                rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %ld rows", path, cap);
                break;
            }
            rows = more;
        }
        rows[7 * n] = (double) k;
        rows[7 * n + 1] = (double) r;
        rows[7 * n + 2] = (double) batch;
        rows[7 * n + 3] = t;
        rows[7 * n + 4] = st;
        rows[7 * n + 5] = sp;
        rows[7 * n + 6] = cpu;
        n++;
        maxk = k > maxk ? k : maxk;
        maxr = r > maxr ? r : maxr;
    }
    fclose(f);
    if (OMNIBATCH_SUCCESS == rc && (maxk < 0 || n != (maxk + 1) * (long) (maxr + 1))) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "%s: %ld rows for %ld steps of %d ranks", path, n, maxk + 1, maxr + 1);
    }
    if (OMNIBATCH_SUCCESS == rc && NULL == (*record = calloc((size_t) n * HETSGD_TRACE_FIELDS, sizeof **record))) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %ld records", path, n);
    }
    for (long j = 0; OMNIBATCH_SUCCESS == rc && j < n; j++) {
        double *x = *record + ((long) rows[7 * j + 1] * (maxk + 1) + (long) rows[7 * j]) * HETSGD_TRACE_FIELDS;

        x[HETSGD_TRACE_BATCH] = rows[7 * j + 2];
        x[HETSGD_TRACE_COMPUTE] = rows[7 * j + 3];
        x[HETSGD_TRACE_STEP] = rows[7 * j + 4];
        x[HETSGD_TRACE_SPEED] = rows[7 * j + 5];
        x[HETSGD_TRACE_CPU] = rows[7 * j + 6];
    }
    free(rows);
    if (OMNIBATCH_SUCCESS != rc) {
        free(*record);
        *record = NULL;
        return rc;
    }
    *steps = maxk + 1;
    *P = maxr + 1;
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

int hetsgd_side_by_side(const double *a, const double *b, long steps, int P, double *ratio,
                        unsigned char *change)
{
    double *x = calloc((size_t) steps * 4, sizeof *x);

    if (NULL == x) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the balance of %ld steps", steps);
    }
    for (long k = 0; k < steps; k++) {
        change[k] = 0 == k;
        for (int i = 0; i < P && k > 0; i++) {
            const double *now = a + ((long) i * steps + k) * HETSGD_TRACE_FIELDS;

            change[k] |= now[HETSGD_TRACE_SPEED] != now[HETSGD_TRACE_SPEED - HETSGD_TRACE_FIELDS];
        }
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

long hetsgd_overrun_steps(const double *record, long steps, int P, double slowdown, double alpha)
{
    long overruns = 0;

    for (long k = 0; k < steps; k++) {
        double longest = 0.0;
        double emulated = 0.0;

        for (int r = 0; r < P; r++) {
            const double *x = record + ((long) r * steps + k) * HETSGD_TRACE_FIELDS;
            double length = x[HETSGD_TRACE_CPU] * slowdown / x[HETSGD_TRACE_SPEED] + alpha;

            longest = x[HETSGD_TRACE_COMPUTE] > longest ? x[HETSGD_TRACE_COMPUTE] : longest;
            emulated = length > emulated ? length : emulated;
        }
        overruns += longest > 1.1 * emulated + 1e-3;
    }
    return overruns;
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
