/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Speeds that change inside a step (see profile.h).
 */
#include "config.h"

#include <stddef.h>

#include "ob_error.h"
#include "profile.h"

/* Halvings of the bracket of the optimum: far past double precision. */
#define BISECTIONS 200

/* The speed in force from \p t on, and until when (1e300: for good). */
static double speed_from(const hetsgd_profile *p, double t, double *until)
{
    if (p->at > 0.0 && t < p->at) {
        *until = p->at;
        return p->before;
    }
    *until = 1e300;
    return p->after;
}

double hetsgd_profile_finish(const hetsgd_profile *p, double start, double work)
{
    double until;
    double s = speed_from(p, start, &until);

    /* Does the work end before the speed changes? */
    if (start + work / s <= until) {
        return start + work / s;
    }
    work -= (until - start) * s;
    return until + work / p->after;
}

double hetsgd_profile_work(const hetsgd_profile *p, double t)
{
    if (t <= 0.0) {
        return 0.0;
    }
    if (p->at > 0.0 && t > p->at) {
        return p->at * p->before + (t - p->at) * p->after;
    }
    return t * (p->at > 0.0 ? p->before : p->after);
}

double hetsgd_profile_step_end(const hetsgd_profile *p, const hetsgd_work_model *m, long n)
{
    return hetsgd_profile_finish(p, 0.0, m->a + m->b * (double) n) + m->alpha;
}

double hetsgd_profile_step_time(const hetsgd_profile *p, const hetsgd_work_model *m, int P, const long *plan)
{
    double worst = 0.0;

    for (int i = 0; i < P; i++) {
        double t = hetsgd_profile_step_end(&p[i], &m[i], plan[i]);

        worst = t > worst ? t : worst;
    }
    return worst;
}

/* The samples rank \p m ends by \p T, as a real within its bounds. */
static double samples_by(const hetsgd_profile *p, const hetsgd_work_model *m, long B, double T)
{
    const double hi = (double) (m->hi < B ? m->hi : B);
    double n = (hetsgd_profile_work(p, T - m->alpha) - m->a) / m->b;

    n = n < hi ? n : hi;
    return n > (double) m->lo ? n : (double) m->lo;
}

static double samples_sum(const hetsgd_profile *p, const hetsgd_work_model *m, int P, long B, double T)
{
    double sum = 0.0;

    for (int i = 0; i < P; i++) {
        sum += samples_by(&p[i], &m[i], B, T);
    }
    return sum;
}

int hetsgd_profile_optimum(const hetsgd_profile *p, const hetsgd_work_model *m, int P, long B, double *target,
                           double *T)
{
    double lo = 0.0, hi = 1e-3;
    long least = 0, most = 0;

    for (int i = 0; i < P; i++) {
        least += m[i].lo;
        most += m[i].hi < B ? m[i].hi : B;
    }
    if (least > B || most < B) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "the bounds hold %ld..%ld samples: expected B = %ld within",
                       least, most, B);
    }
    while (samples_sum(p, m, P, B, hi) < (double) B) {
        lo = hi;
        hi *= 2.0;
    }
    for (int k = 0; k < BISECTIONS && hi - lo > 1e-15 * hi; k++) {
        const double mid = 0.5 * (lo + hi);

        if (samples_sum(p, m, P, B, mid) < (double) B) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    for (int i = 0; NULL != target && i < P; i++) {
        target[i] = samples_by(&p[i], &m[i], B, hi);
    }
    if (NULL != T) {
        *T = hi;
    }
    return OMNIBATCH_SUCCESS;
}
