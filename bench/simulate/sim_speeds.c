/*
 * Copyright (c) 2026 The omnibatch authors.
 */
#include "config.h"

#include <math.h>

#include "ob_error.h"
#include "sim_speeds.h"

int ob_sim_speeds_uniform(ob_sim_rng *r, int P, double lo, double hi, double *s)
{
    if (P < 1 || !(lo > 0.0) || !(hi >= lo) || !isfinite(hi)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "uniform speeds: P=%d lo=%g hi=%g: expected P >= 1 and 0 < lo <= hi",
                       P, lo, hi);
    }
    for (int i = 0; i < P; i++) {
        s[i] = lo + (hi - lo) * ob_sim_rng_uniform(r);
    }
    return OMNIBATCH_SUCCESS;
}

int ob_sim_count_of(double fraction, int P)
{
    if (!(fraction > 0.0)) {
        return 0;
    }
    const double k = floor(fraction * (double) P + 0.5);
    if (k < 1.0) {
        return 1;
    }
    return k > (double) P ? P : (int) k;
}

int ob_sim_choose(ob_sim_rng *r, int P, int k, int *idx, int *scratch)
{
    if (P < 1 || k < 0 || k > P) {
        return ob_fail(OMNIBATCH_ERR_ARG, "choose k=%d of P=%d: expected 0 <= k <= P", k, P);
    }
    for (int i = 0; i < P; i++) {
        scratch[i] = i;
    }
    for (int j = 0; j < k; j++) {
        const int pick = j + (int) ob_sim_rng_below(r, P - j);
        const int tmp = scratch[j];
        scratch[j] = scratch[pick];
        scratch[pick] = tmp;
        idx[j] = scratch[j];
    }
    return OMNIBATCH_SUCCESS;
}

int ob_sim_speeds_bimodal(ob_sim_rng *r, int P, double fraction, double factor, double *s)
{
    if (P < 1 || !(fraction >= 0.0 && fraction <= 1.0) || !(factor > 0.0) || !isfinite(factor)) {
        return ob_fail(OMNIBATCH_ERR_ARG,
                       "bimodal speeds: P=%d fraction=%g factor=%g: expected P >= 1, fraction in [0, 1], factor > 0",
                       P, fraction, factor);
    }
    for (int i = 0; i < P; i++) {
        s[i] = 1.0;
    }
    /* The fast ranks are drawn, not the first ones: the controller must not
     * profit from an order. */
    const int k = ob_sim_count_of(fraction, P);
    /* Selection sampling: rank i is fast with probability (k - chosen) / (P - i),
     * which picks exactly k ranks, every set of k equally likely. */
    int chosen = 0;
    for (int i = 0; i < P && chosen < k; i++) {
        if (ob_sim_rng_below(r, P - i) < k - chosen) {
            s[i] = factor;
            chosen++;
        }
    }
    return OMNIBATCH_SUCCESS;
}

int ob_sim_speeds_level(int level, int P, double *s)
{
    static const double hl1[4] = { 12, 12, 12, 12 };
    static const double hl2[4] = { 12, 12, 8, 16 };
    static const double hl4[4] = { 9, 9, 6, 24 };
    static const double hl8[4] = { 6, 6, 4, 32 };
    const double *cores;

    switch (level) {
    case 1:
        cores = hl1;
        break;
    case 2:
        cores = hl2;
        break;
    case 4:
        cores = hl4;
        break;
    case 8:
        cores = hl8;
        break;
    default:
        return ob_fail(OMNIBATCH_ERR_ARG, "heterogeneity level %d: expected 1, 2, 4 or 8", level);
    }
    if (P < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "heterogeneity level: P=%d: expected >= 1", P);
    }
    for (int i = 0; i < P; i++) {
        s[i] = cores[i % 4];
    }
    return OMNIBATCH_SUCCESS;
}

void ob_sim_slow_down(double *s, const int *idx, int k, double factor)
{
    for (int j = 0; j < k; j++) {
        s[idx[j]] /= factor;
    }
}
