/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One worker's pushes counted (ob_tally.h).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ob_tally.h"

void ob_tally_init(ob_tally *t)
{
    memset(t, 0, sizeof *t);
}

void ob_tally_add(ob_tally *t, long tau, int applied, long samples, double compute_s)
{
    long bin = tau < 0 ? 0 : (tau < OB_TALLY_BINS - 1 ? tau : OB_TALLY_BINS - 1);

    t->pushes++;
    if (applied) {
        t->applied++;
    } else {
        t->dropped++;
    }
    t->samples += samples;
    t->compute_s += compute_s > 0.0 && isfinite(compute_s) ? compute_s : 0.0;
    t->stale_sum += (double) tau;
    t->stale_max = tau > t->stale_max ? tau : t->stale_max;
    t->hist[bin]++;
}

double ob_tally_mean(const ob_tally *t)
{
    return t->pushes > 0 ? t->stale_sum / (double) t->pushes : 0.0;
}

long ob_tally_quantile(const ob_tally *t, double q)
{
    /* The rank of the quantile among the pushes: ceil(q n), at least 1. */
    double need = ceil(q * (double) t->pushes);
    double seen = 0.0;

    if (t->pushes < 1) {
        return 0;
    }
    need = need < 1.0 ? 1.0 : need;
    for (long s = 0; s < OB_TALLY_BINS; s++) {
        seen += (double) t->hist[s];
        if (seen >= need) {
            return s;
        }
    }
    return OB_TALLY_BINS - 1;
}
