/*
 * Copyright (c) 2026 The omnibatch authors.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>

#include "ob_error.h"
#include "sim_omnilearn.h"

int ob_sim_omnilearn_adjust(int P, long B, const double *t, double deadband, long lo, long hi,
                            long *b, long *sum, int *moved)
{
    if (P < 1 || B < 1 || !(deadband >= 0.0) || lo < 1 || hi < lo) {
        return ob_fail(OMNIBATCH_ERR_ARG,
                       "omnilearn: P=%d B=%ld deadband=%g lo=%ld hi=%ld: expected P, B >= 1, "
                       "deadband >= 0, 1 <= lo <= hi", P, B, deadband, lo, hi);
    }
    double mean = 0.0;
    for (int i = 0; i < P; i++) {
        if (!(t[i] > 0.0) || !isfinite(t[i]) || b[i] < 1) {
            return ob_fail(OMNIBATCH_ERR_ARG, "omnilearn: rank %d: t=%g b=%ld: expected t > 0 finite, b >= 1",
                           i, t[i], b[i]);
        }
        mean += t[i];
    }
    mean /= (double) P;

    long total = 0;
    int n_moved = 0;
    for (int i = 0; i < P; i++) {
        if (fabs(t[i] - mean) > deadband * mean) {
            /* Truncation, as an int() of the real-valued update does. */
            const double nb = floor((double) b[i] * mean / t[i]);
            b[i] = nb < (double) lo ? lo : (nb > (double) hi ? hi : (long) nb);
            n_moved++;
        }
        total += b[i];
    }
    /* The equal additive share, rounded up: ceil of a real quotient. */
    const long share = (long) ceil((double) (B - total) / (double) P);
    total = 0;
    for (int i = 0; i < P; i++) {
        b[i] += share;
        if (b[i] < 1) {
            b[i] = 1;
        }
        total += b[i];
    }
    if (NULL != sum) {
        *sum = total;
    }
    if (NULL != moved) {
        *moved = n_moved;
    }
    return OMNIBATCH_SUCCESS;
}
