/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The trace file and the recovery figures (see report.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
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

void hetsgd_recovery(const double *ratio, const unsigned char *change, long steps, double tol,
                     hetsgd_recovery_stats *out)
{
    long recovered_sum = 0;
    int recovered = 0;

    memset(out, 0, sizeof *out);
    out->initial = -1;
    out->worst = -1;
    for (long c = 0; c < steps; c++) {
        long took = -1;

        if (0 != c && !change[c]) {
            continue;
        }
        for (long k = c; k < steps && (k == c || !change[k]); k++) {
            if (ratio[k] >= 0.0 && ratio[k] <= tol) {
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
