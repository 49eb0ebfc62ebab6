/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The parameter server's update rule (ob_update.h).
 */
#include "config.h"

#include <math.h>

#include "ob_error.h"
#include "ob_update.h"

static int ob_update_check_numbers(const ob_update_rule *r, const char *prefix)
{
    /* Written so that NaN fails too. */
    if (!(r->lr > 0.0 && isfinite(r->lr))) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s lr=%g: expected a finite number > 0", prefix, r->lr);
    }
    if (!(r->momentum >= 0.0 && r->momentum < 1.0)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s momentum=%g: expected a number in [0, 1)", prefix,
                       r->momentum);
    }
    if (!(r->weight_decay >= 0.0 && isfinite(r->weight_decay))) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s weight_decay=%g: expected a finite number >= 0",
                       prefix, r->weight_decay);
    }
    return OMNIBATCH_SUCCESS;
}

int ob_update_check(const ob_update_rule *r, const char *prefix)
{
    int rc = ob_update_check_numbers(r, prefix);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (r->ref_batch < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s ref_batch=%ld: expected >= 1", prefix, r->ref_batch);
    }
    if (OB_UPDATE_CONSTANT != r->staleness && OB_UPDATE_INVERSE != r->staleness
        && OB_UPDATE_ADAPTIVE != r->staleness) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s staleness=%d: expected OMNIBATCH_PS_STALE_CONSTANT (0), "
                       "_INVERSE (1) or _ADAPTIVE (2)", prefix, (int) r->staleness);
    }
    if (r->concurrency < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s concurrency=%ld: expected >= 1 (the workers)", prefix,
                       r->concurrency);
    }
    if (r->max_staleness < 0 || r->max_staleness > OB_UPDATE_MAX_BOUND) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s max_staleness=%ld: expected 0..%ld updates", prefix,
                       r->max_staleness, OB_UPDATE_MAX_BOUND);
    }
    return OMNIBATCH_SUCCESS;
}

int ob_update_drops(const ob_update_rule *r, long tau)
{
    return tau > r->max_staleness;
}

double ob_update_staleness_factor(const ob_update_rule *r, long tau)
{
    switch (r->staleness) {
    case OB_UPDATE_INVERSE:
        return tau > 1 ? 1.0 / (double) tau : 1.0;
    case OB_UPDATE_ADAPTIVE:
        return tau > r->concurrency ? (double) r->concurrency / (double) tau : 1.0;
    case OB_UPDATE_CONSTANT:
    default:
        return 1.0;
    }
}

double ob_update_scale(const ob_update_rule *r, long batch, long tau)
{
    /* b == b_ref gives exactly 1, so a fresh gradient of the reference
     * batch is applied as plain SGD applies it, bit for bit. */
    double share = batch == r->ref_batch ? 1.0 : (double) batch / (double) r->ref_batch;

    return share * ob_update_staleness_factor(r, tau);
}

void ob_update_apply_float(const ob_update_rule *r, double s, float *w, float *m, const float *g,
                           size_t n)
{
    const float mu = (float) r->momentum;
    const float lr = (float) r->lr;
    const float wd = (float) r->weight_decay;
    const float fs = (float) s;

    for (size_t i = 0; i < n; i++) {
        m[i] = mu * m[i] + fs * (g[i] + wd * w[i]);
        w[i] -= lr * m[i];
    }
}

void ob_update_apply_double(const ob_update_rule *r, double s, double *w, double *m,
                            const double *g, size_t n)
{
    const double mu = r->momentum;
    const double lr = r->lr;
    const double wd = r->weight_decay;

    for (size_t i = 0; i < n; i++) {
        m[i] = mu * m[i] + s * (g[i] + wd * w[i]);
        w[i] -= lr * m[i];
    }
}
