/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A step's true times and its yardsticks (sim_work.h).  The per-step
 * oracle is found by bisection on the step time T: every rank's samples by
 * T (real, or whole) only grow with T, piecewise linear where a rank slows
 * down, so the least T at which they reach B is found to the last bit.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "ob_error.h"
#include "sim_work.h"

/* Bisection steps: far past the last bit of a double's relative precision. */
#define OB_SIM_BISECTIONS 200

double ob_sim_work_end(const ob_sim_work *w, double t0, double work)
{
    if (t0 >= w->slow_at) {
        return t0 + work * w->slow_factor;
    }
    if (t0 + work <= w->slow_at) {
        return t0 + work;
    }
    return w->slow_at + (work - (w->slow_at - t0)) * w->slow_factor;
}

double ob_sim_work_time(const ob_sim_work *w, int P, const long *b)
{
    double t = 0.0;
    for (int i = 0; i < P; i++) {
        const double ti = ob_sim_work_end(&w[i], 0.0, w[i].alpha + w[i].beta * (double) b[i]);
        t = ti > t ? ti : t;
    }
    return t;
}

/* Rank w's samples by time T, in [0, B]: real, or whole when \p whole. */
static double ob_sim_work_samples(const ob_sim_work *w, double T, long B, int whole)
{
    const double done = T <= w->slow_at ? T : w->slow_at + (T - w->slow_at) / w->slow_factor;
    double b = (done - w->alpha) / w->beta;

    b = whole ? floor(b) : b;
    return b <= 0.0 ? 0.0 : (b >= (double) B ? (double) B : b);
}

static double ob_sim_work_samples_sum(const ob_sim_work *w, int P, double T, long B, int whole)
{
    double sum = 0.0;
    for (int i = 0; i < P; i++) {
        sum += ob_sim_work_samples(&w[i], T, B, whole);
    }
    return sum;
}

int ob_sim_work_optimum(const ob_sim_work *w, int P, long B, int whole, double *T)
{
    double lo = 0.0;
    double hi = 0.0;

    if (P < 1 || B < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "simulate: per-step oracle: P=%d B=%ld: expected both >= 1", P, B);
    }
    /* Between every fixed cost's end and every rank doing all B (one ulp
     * more, so that rounding cannot leave the top short). */
    for (int i = 0; i < P; i++) {
        const double a = ob_sim_work_end(&w[i], 0.0, w[i].alpha);
        const double all = ob_sim_work_end(&w[i], 0.0, w[i].alpha + w[i].beta * (double) B);
        lo = a > lo ? a : lo;
        hi = all > hi ? all : hi;
    }
    hi = nextafter(hi, HUGE_VAL);
    if (ob_sim_work_samples_sum(w, P, lo, B, whole) >= (double) B) {
        *T = lo;
        return OMNIBATCH_SUCCESS;
    }
    for (int it = 0; it < OB_SIM_BISECTIONS; it++) {
        const double mid = lo + 0.5 * (hi - lo);
        if (!(mid > lo && mid < hi)) {
            break;
        }
        if (ob_sim_work_samples_sum(w, P, mid, B, whole) >= (double) B) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    *T = hi;
    return OMNIBATCH_SUCCESS;
}
