/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OmniLearn's published batch rule, shared with the simulator, and its
 * mapping onto a fixed global batch (see omnilearn.h).
 */
#include "config.h"

#include <string.h>

#include "ob_error.h"
#include "omnilearn.h"
#include "sim_omnilearn.h"

int hetsgd_omnilearn_published(const long *b, const double *t, int P, long B, double deadband,
                               long lo, long hi, long *published)
{
    if (P < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "omnilearn: P=%d: expected >= 1", P);
    }
    memcpy(published, b, (size_t) P * sizeof *published);
    return ob_sim_omnilearn_adjust(P, B, t, deadband, lo, hi, published, NULL, NULL);
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
