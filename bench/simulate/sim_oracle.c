/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The integer optimum by bisection on the step time T.  At a given T, rank
 * i can take at most n_i(T) = min(hi_i, floor((T - alpha_i) / beta_i))
 * samples, and T is reachable iff every rank's lower bound fits
 * (T >= alpha_i + beta_i lo_i) and sum_i n_i(T) >= B.  That sum only grows
 * with T, so bisection finds the least reachable T to the last bit; the
 * plan at that T holds at most a few samples too many (ranks whose next
 * sample fits exactly at the threshold), which are taken back from the
 * ranks that finish last.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "ob_error.h"
#include "sim_oracle.h"

typedef struct ob_sim_slot {
    double t;
    int rank;
} ob_sim_slot;

static int ob_sim_slot_later_first(const void *a, const void *b)
{
    const ob_sim_slot *x = a;
    const ob_sim_slot *y = b;
    if (x->t != y->t) {
        return x->t < y->t ? 1 : -1;
    }
    return x->rank - y->rank;
}

/* Samples rank i can take within T (at least its lower bound: the caller
 * only asks for T at or above every lower bound's time). */
static long ob_sim_fit(const ob_rank_model *mi, double T)
{
    const double n = floor((T - mi->alpha) / mi->beta);
    if (n <= (double) mi->lo) {
        return mi->lo;
    }
    return n >= (double) mi->hi ? mi->hi : (long) n;
}

static long ob_sim_fit_sum(const ob_rank_model *m, int P, double T, long B)
{
    long sum = 0;
    for (int i = 0; i < P; i++) {
        sum += ob_sim_fit(&m[i], T);
        if (sum >= B) {
            return sum;          /* enough: the exact excess does not matter here */
        }
    }
    return sum;
}

/* The least and the most a plan can take: every rank at its lower bound
 * (t_floor: all of them fit) and every rank at its upper bound or at B
 * (t_ceil); OMNIBATCH_ERR_ARG for a bad model, OMNIBATCH_ERR_INFEASIBLE
 * when B lies outside the bounds' sums. */
static int ob_sim_time_range(const ob_rank_model *m, int P, long B, double *t_floor, double *t_ceil)
{
    long sum_lo = 0;
    long sum_hi = 0;

    *t_floor = 0.0;
    *t_ceil = 0.0;
    for (int i = 0; i < P; i++) {
        if (!(m[i].alpha >= 0.0) || !(m[i].beta > 0.0) || !isfinite(m[i].alpha) || !isfinite(m[i].beta) ||
            m[i].lo < 0 || m[i].hi < m[i].lo) {
            return ob_fail(OMNIBATCH_ERR_ARG, "integer optimum: rank %d: alpha=%g beta=%g lo=%ld hi=%ld: "
                           "expected alpha >= 0, beta > 0, 0 <= lo <= hi", i, m[i].alpha, m[i].beta, m[i].lo,
                           m[i].hi);
        }
        const long hi = m[i].hi < B ? m[i].hi : B;
        sum_lo += m[i].lo;
        sum_hi += hi > m[i].lo ? hi : m[i].lo;
        const double tl = m[i].alpha + m[i].beta * (double) m[i].lo;
        const double th = m[i].alpha + m[i].beta * (double) (hi > m[i].lo ? hi : m[i].lo);
        *t_floor = tl > *t_floor ? tl : *t_floor;
        *t_ceil = th > *t_ceil ? th : *t_ceil;
    }
    if (sum_lo > B || sum_hi < B) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "integer optimum: B=%ld outside [sum lo=%ld, sum hi=%ld]", B,
                       sum_lo, sum_hi);
    }
    return OMNIBATCH_SUCCESS;
}

/* The least T in [t_floor, t_ceil] at which the ranks fit B samples. */
static double ob_sim_least_time(const ob_rank_model *m, int P, long B, double t_floor, double t_ceil)
{
    if (ob_sim_fit_sum(m, P, t_floor, B) >= B) {
        return t_floor;
    }
    /* One ulp of headroom so that rounding in (T - alpha) / beta cannot
     * leave the upper end short. */
    double T_lo = t_floor;
    double T_hi = nextafter(t_ceil, INFINITY);
    for (int it = 0; it < 2000; it++) {
        const double mid = T_lo + 0.5 * (T_hi - T_lo);
        if (!(mid > T_lo && mid < T_hi)) {
            break;
        }
        if (ob_sim_fit_sum(m, P, mid, B) >= B) {
            T_hi = mid;
        } else {
            T_lo = mid;
        }
    }
    return T_hi;
}

/* Take \p excess samples back from the plan \p n: one sample each from the
 * ranks that finish last first (which lowers the maximum), then whatever
 * is left from any rank above its lower bound (which cannot raise it). */
static void ob_sim_take_back(const ob_rank_model *m, int P, long *n, long excess, ob_sim_slot *slot)
{
    for (int i = 0; i < P; i++) {
        slot[i].t = m[i].alpha + m[i].beta * (double) n[i];
        slot[i].rank = i;
    }
    qsort(slot, (size_t) P, sizeof *slot, ob_sim_slot_later_first);
    for (int k = 0; k < P && excess > 0; k++) {
        const int i = slot[k].rank;
        if (n[i] > m[i].lo) {
            n[i]--;
            excess--;
        }
    }
    for (int i = 0; i < P && excess > 0; i++) {
        const long take = n[i] - m[i].lo < excess ? n[i] - m[i].lo : excess;
        n[i] -= take;
        excess -= take;
    }
}

int ob_sim_integer_optimum(const ob_rank_model *m, int P, long B, long *plan, double *T)
{
    double t_floor;
    double t_ceil;

    if (P < 1 || B < 1 || NULL == T) {
        return ob_fail(OMNIBATCH_ERR_ARG, "integer optimum: P=%d B=%ld: expected both >= 1", P, B);
    }
    const int rc = ob_sim_time_range(m, P, B, &t_floor, &t_ceil);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    const double T_hi = ob_sim_least_time(m, P, B, t_floor, t_ceil);
    long *own = NULL == plan ? malloc((size_t) P * sizeof *own) : NULL;
    long *n = NULL == plan ? own : plan;
    ob_sim_slot *slot = malloc((size_t) P * sizeof *slot);
    if (NULL == n || NULL == slot) {
        free(own);
        free(slot);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "integer optimum: %d ranks", P);
    }
    long excess = -B;
    for (int i = 0; i < P; i++) {
        n[i] = ob_sim_fit(&m[i], T_hi);
        excess += n[i];
    }
    ob_sim_take_back(m, P, n, excess, slot);
    double t = 0.0;
    for (int i = 0; i < P; i++) {
        const double ti = m[i].alpha + m[i].beta * (double) n[i];
        t = ti > t ? ti : t;
    }
    *T = t;
    free(slot);
    free(own);
    return OMNIBATCH_SUCCESS;
}
