/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OmniLearn's published batch rule and its mapping onto a fixed global
 * batch (see omnilearn.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "ob_error.h"
#include "omnilearn.h"

int hetsgd_omnilearn_published(const long *b, const double *t, int P, long B, double deadband,
                               long lo, long hi, long *published)
{
    double *next;
    double mean_t = 0.0;
    double sum = 0.0;
    double share;

    if (P < 1 || B < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "P=%d, B=%ld: expected both >= 1", P, B);
    }
    if (lo < 0 || hi < lo) {
        return ob_fail(OMNIBATCH_ERR_ARG, "bounds [%ld, %ld]: expected 0 <= lo <= hi", lo, hi);
    }
    if (!(deadband >= 0.0)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "deadband=%g: expected >= 0", deadband);
    }
    next = malloc((size_t) P * sizeof *next);
    if (NULL == next) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate %d batches", P);
    }
    for (int i = 0; i < P; i++) {
        mean_t += t[i];
    }
    mean_t /= P;
    for (int i = 0; i < P; i++) {
        double x = (double) b[i];

        if (t[i] > 0.0 && mean_t > 0.0 && fabs(t[i] - mean_t) / mean_t > deadband) {
            x *= mean_t / t[i];
        }
        next[i] = x < (double) lo ? (double) lo : x > (double) hi ? (double) hi : x;
        sum += next[i];
    }
    share = ((double) B - sum) / P;
    for (int i = 0; i < P; i++) {
        double x = ceil(next[i] + share);

        /* A batch cannot be negative, whatever the share; nothing else is corrected. */
        published[i] = x > 0.0 ? (long) x : 0;
    }
    free(next);
    return OMNIBATCH_SUCCESS;
}

int hetsgd_omnilearn_fit(const long *published, int P, long B, long lo, long hi, long *plan)
{
    long sum = 0;

    if (P < 1 || lo < 0 || hi < lo) {
        return ob_fail(OMNIBATCH_ERR_ARG, "P=%d, bounds [%ld, %ld]: expected P >= 1, 0 <= lo <= hi",
                       P, lo, hi);
    }
    if ((long) P * lo > B || (long) P * hi < B) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "B=%ld cannot be split over %d ranks within [%ld, %ld]",
                       B, P, lo, hi);
    }
    for (int i = 0; i < P; i++) {
        plan[i] = published[i] < lo ? lo : published[i] > hi ? hi : published[i];
        sum += plan[i];
    }
    /* One sample at a time: the excess is at most P - 1 plus what the bounds
     * moved, small next to B. */
    while (sum > B) {
        int largest = -1;

        for (int i = 0; i < P; i++) {
            if (plan[i] > lo && (largest < 0 || plan[i] > plan[largest])) {
                largest = i;
            }
        }
        plan[largest]--;
        sum--;
    }
    while (sum < B) {
        int smallest = -1;

        for (int i = 0; i < P; i++) {
            if (plan[i] < hi && (smallest < 0 || plan[i] < plan[smallest])) {
                smallest = i;
            }
        }
        plan[smallest]++;
        sum++;
    }
    return OMNIBATCH_SUCCESS;
}
