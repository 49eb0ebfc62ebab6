/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Water-filling, the proportional step with its dead-band, and the integer
 * plan by largest remainder (see ob_planner.h for the contract).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_config.h"
#include "ob_error.h"
#include "ob_planner.h"

/* Targets handed to ob_plan_round() may miss their bounds and their sum by
 * this fraction of B: the rounding of a continuous solution, no more. */
#define OB_PLAN_TARGET_TOL 1e-6
/* Weights of a proportional plan are taken relative to the largest; below
 * this ratio a rank gets its lower bound anyway, and the clamp keeps every
 * breakpoint finite. */
#define OB_PLAN_MIN_WEIGHT_RATIO 1e-200
/* Sums of bounds saturate here: far above any B, far below overflow. */
#define OB_PLAN_SUM_CAP (LLONG_MAX / 4)

/* One rank of a water-filling problem: x = clamp((level - a) / b, lo, hi). */
typedef struct ob_wf_rank {
    double a;
    double b;
    double lo;
    double hi;
} ob_wf_rank;

/* Scratch of one call, one allocation. */
typedef struct ob_work {
    ob_wf_rank *wf;              /* P */
    uint64_t *key;               /* 2P sort keys (breakpoints, then remainders) */
    uint64_t *key2;              /* 2P, the radix sort's other buffer */
    double *x;                   /* P */
    long *cand;                  /* P */
    uint32_t *tag;               /* 2P: what each key stands for */
    uint32_t *tag2;              /* 2P */
} ob_work;

/* Granularity g applied to B: B = Q * g + r; every rank holds a multiple of
 * g except the carrier, which holds a multiple of g plus r. */
typedef struct ob_granules {
    long g;
    long r;
    long Q;
    long long sum_low;           /* sum of the granule lower bounds, carrier role for none */
    long long sum_high;          /* same for the upper bounds (saturated) */
    int forced;                  /* the one rank whose bounds hold no multiple of g, or -1 */
} ob_granules;

/* ------------------------------------------------------------------ */
/* Scratch                                                              */

static int ob_work_alloc(ob_work *w, int P)
{
    size_t n = (size_t) P;
    size_t bytes = n * (sizeof(ob_wf_rank) + 4 * sizeof(uint64_t) + sizeof(double) + sizeof(long)
                        + 4 * sizeof(uint32_t));
    char *p;

    memset(w, 0, sizeof *w);
    if (n > SIZE_MAX / 256 || NULL == (p = malloc(bytes))) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "planner: no memory for the scratch of %d ranks", P);
    }
    /* Largest alignment first. */
    w->wf = (ob_wf_rank *) (void *) p;
    w->key = (uint64_t *) (void *) (w->wf + n);
    w->key2 = w->key + 2 * n;
    w->x = (double *) (void *) (w->key2 + 2 * n);
    w->cand = (long *) (void *) (w->x + n);
    w->tag = (uint32_t *) (void *) (w->cand + n);
    w->tag2 = w->tag + 2 * n;
    return OMNIBATCH_SUCCESS;
}

static void ob_work_free(ob_work *w)
{
    free(w->wf);
    w->wf = NULL;
}

/* ------------------------------------------------------------------ */
/* Water-filling                                                        */

static double ob_wf_x(const ob_wf_rank *r, double level)
{
    double x = (level - r->a) / r->b;

    return x < r->lo ? r->lo : (x > r->hi ? r->hi : x);
}

/* sum_i x_i(level), compensated (Neumaier) so that the sum of P terms of
 * very different sizes is as exact as one term. */
static double ob_wf_sum(const ob_wf_rank *r, int P, double level)
{
    double s = 0.0;
    double c = 0.0;

    for (int i = 0; i < P; i++) {
        double v = ob_wf_x(&r[i], level);
        double t = s + v;

        c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
    }
    return s + c;
}

/* An unsigned key in the order of the doubles (IEEE 754: flip the sign
 * bit of positives, every bit of negatives), and back. */
static uint64_t ob_key(double v)
{
    uint64_t u;

    memcpy(&u, &v, sizeof u);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static double ob_unkey(uint64_t k)
{
    uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
    double v;

    memcpy(&v, &u, sizeof v);
    return v;
}

/* Stable LSD radix sort of n keys with their tags, a byte at a time,
 * skipping the bytes all keys share: O(n), and the order of equal keys is
 * their order on entry (deterministic). */
static void ob_radix_sort(uint64_t *key, uint32_t *tag, uint64_t *key2, uint32_t *tag2, size_t n)
{
    uint64_t *src = key, *dst = key2;
    uint32_t *tsrc = tag, *tdst = tag2;

    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[257] = { 0 };
        int same = 0;

        for (size_t k = 0; k < n; k++) {
            count[((src[k] >> shift) & 0xffu) + 1]++;
        }
        for (int d = 1; d <= 256; d++) {
            same = same || count[d] == n;
            count[d] += count[d - 1];
        }
        if (same) {
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            size_t at = count[(src[k] >> shift) & 0xffu]++;

            dst[at] = src[k];
            tdst[at] = tsrc[k];
        }
        {
            uint64_t *t = src;
            uint32_t *tt = tsrc;

            src = dst;
            dst = t;
            tsrc = tdst;
            tdst = tt;
        }
    }
    if (src != key) {
        memcpy(key, src, n * sizeof *key);
        memcpy(tag, tsrc, n * sizeof *tag);
    }
}

/*
 * The least level at which sum_i x_i(level) = total (the caller guarantees
 * sum lo <= total <= sum hi), and x at that level.  The sum is piecewise
 * linear with kinks only at the 2P breakpoints a + b * lo (rank i joins,
 * the slope grows by 1 / b) and a + b * hi (it leaves): sort them, sweep
 * them with the running slope to find the segment where the sum crosses
 * total, confirm that segment with two sums evaluated afresh (compensated,
 * so no error accumulated along the sweep matters; bisection on fresh sums
 * if the sweep erred), and interpolate on it, where the sum is exactly
 * linear.  O(P) after an O(P) radix sort.
 */
/* A segment [key[lo], key[hi]] of the sorted breakpoints with the sums at
 * its ends. */
typedef struct ob_wf_bracket {
    int lo, hi;
    double f_lo, f_hi;
} ob_wf_bracket;

static void ob_wf_sort_breakpoints(const ob_wf_rank *r, int P, ob_work *w)
{
    for (int i = 0; i < P; i++) {
        w->key[2 * i] = ob_key(r[i].a + r[i].b * r[i].lo);
        w->key[2 * i + 1] = ob_key(r[i].a + r[i].b * r[i].hi);
        w->tag[2 * i] = (uint32_t) (2 * i);
        w->tag[2 * i + 1] = (uint32_t) (2 * i + 1);
    }
    ob_radix_sort(w->key, w->tag, w->key2, w->tag2, (size_t) (2 * P));
}

/* Sweep the breakpoints with the running slope from the sum f at the first;
 * the index of the first breakpoint where the sum reaches total (n - 1 if
 * none does). */
static int ob_wf_sweep(const ob_wf_rank *r, int n, double total, double f, const ob_work *w)
{
    double slope = 0.0;
    int k;

    for (k = 0; k < n; k++) {
        const ob_wf_rank *ri = &r[w->tag[k] >> 1];

        if (k > 0) {
            f += slope * (ob_unkey(w->key[k]) - ob_unkey(w->key[k - 1]));
            if (f >= total) {
                break;
            }
        }
        slope += (w->tag[k] & 1u) ? -1.0 / ri->b : 1.0 / ri->b;
    }
    return k < n ? k : n - 1;
}

/* Confirm the sweep's segment ending at hi with sums evaluated afresh; if
 * the sweep erred, widen the bracket to the side where the crossing lies. */
static ob_wf_bracket ob_wf_confirm(const ob_wf_rank *r, int P, double total, int hi, double f_first,
                                   const ob_work *w)
{
    int n = 2 * P;
    ob_wf_bracket b = { hi - 1, hi, f_first, ob_wf_sum(r, P, ob_unkey(w->key[hi])) };

    if (b.f_hi < total) {
        b.lo = hi;
        b.f_lo = b.f_hi;
        b.hi = n - 1;
        b.f_hi = ob_wf_sum(r, P, ob_unkey(w->key[b.hi]));
    } else {
        double f_below = ob_wf_sum(r, P, ob_unkey(w->key[b.lo]));

        if (f_below >= total) {
            b.hi = b.lo;
            b.f_hi = f_below;
            b.lo = 0;
        } else {
            b.f_lo = f_below;
        }
    }
    return b;
}

/* Narrow a bracket with f_lo < total <= f_hi to adjacent breakpoints by
 * bisection on fresh sums, then interpolate on that segment, where the sum
 * is exactly linear. */
static double ob_wf_interpolate(const ob_wf_rank *r, int P, double total, ob_wf_bracket b,
                                const ob_work *w)
{
    double t_lo, t_hi, level;

    while (b.hi - b.lo > 1) {
        int mid = b.lo + (b.hi - b.lo) / 2;
        double fm = ob_wf_sum(r, P, ob_unkey(w->key[mid]));

        if (fm < total) {
            b.lo = mid;
            b.f_lo = fm;
        } else {
            b.hi = mid;
            b.f_hi = fm;
        }
    }
    /* f_lo < total <= f_hi, hence key[lo] < key[hi]. */
    t_lo = ob_unkey(w->key[b.lo]);
    t_hi = ob_unkey(w->key[b.hi]);
    level = t_lo + (total - b.f_lo) * ((t_hi - t_lo) / (b.f_hi - b.f_lo));
    return level < t_lo ? t_lo : (level > t_hi ? t_hi : level);
}

static double ob_wf_solve(const ob_wf_rank *r, int P, double total, double *x, ob_work *w)
{
    int n = 2 * P;
    double f_first, level;

    ob_wf_sort_breakpoints(r, P, w);
    f_first = ob_wf_sum(r, P, ob_unkey(w->key[0]));
    if (total <= f_first) {
        level = ob_unkey(w->key[0]);
    } else {
        ob_wf_bracket b = ob_wf_confirm(r, P, total, ob_wf_sweep(r, n, total, f_first, w), f_first, w);

        level = b.f_hi < total ? ob_unkey(w->key[n - 1]) : ob_wf_interpolate(r, P, total, b, w);
    }
    if (NULL != x) {
        for (int i = 0; i < P; i++) {
            x[i] = ob_wf_x(&r[i], level);
        }
    }
    return level;
}

/* ------------------------------------------------------------------ */
/* Validation                                                           */

static long ob_bound_high(const ob_rank_model *m, long B)
{
    return m->hi < B ? m->hi : B;
}

static int ob_check_shape(int P, long B)
{
    if (P < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "number of ranks %d: expected >= 1", P);
    }
    if (B < 1 || B > OB_PLAN_MAX_BATCH) {
        return ob_fail(OMNIBATCH_ERR_ARG, "global batch %ld: expected an integer in [1, %ld]",
                       B, (long) OB_PLAN_MAX_BATCH);
    }
    return OMNIBATCH_SUCCESS;
}

static int ob_check_granularity(long g)
{
    if (g < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "granularity %ld: expected an integer >= 1", g);
    }
    return OMNIBATCH_SUCCESS;
}

static int ob_check_models(const ob_rank_model *m, int P)
{
    for (int i = 0; i < P; i++) {
        if (!(m[i].alpha >= 0.0 && m[i].alpha <= OB_PLAN_MAX_ALPHA)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "rank %d: alpha = %g s: expected a finite number in [0, %g]",
                           i, m[i].alpha, OB_PLAN_MAX_ALPHA);
        }
        if (!(m[i].beta >= OB_PLAN_MIN_BETA && m[i].beta <= OB_PLAN_MAX_BETA)) {
            return ob_fail(OMNIBATCH_ERR_ARG,
                           "rank %d: beta = %g s/sample: expected a finite number in [%g, %g]",
                           i, m[i].beta, OB_PLAN_MIN_BETA, OB_PLAN_MAX_BETA);
        }
    }
    return OMNIBATCH_SUCCESS;
}

static long long ob_sat_add(long long s, long v)
{
    return s >= OB_PLAN_SUM_CAP ? s : s + v;
}

/* Each bound on its own, then whether their sums can hold B. */
static int ob_check_bounds(const ob_rank_model *m, int P, long B)
{
    long long slo = 0;
    long long shi = 0;
    double dlo = 0.0;
    double dhi = 0.0;
    int same_lo = 1;
    int same_hi = 1;

    for (int i = 0; i < P; i++) {
        if (m[i].lo < 0) {
            return ob_fail(OMNIBATCH_ERR_ARG, "rank %d: lower bound %ld is negative", i, m[i].lo);
        }
        if (m[i].hi < m[i].lo) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "rank %d: lower bound %ld exceeds upper bound %ld",
                           i, m[i].lo, m[i].hi);
        }
        if (m[i].lo > B) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "rank %d: lower bound %ld exceeds the global batch %ld",
                           i, m[i].lo, B);
        }
        slo = ob_sat_add(slo, m[i].lo);
        shi = ob_sat_add(shi, ob_bound_high(&m[i], B));
        dlo += (double) m[i].lo;
        dhi += (double) ob_bound_high(&m[i], B);
        same_lo = same_lo && m[i].lo == m[0].lo;
        same_hi = same_hi && m[i].hi == m[0].hi;
    }
    if (slo > B) {
        if (same_lo) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                           "global batch %ld is smaller than the sum of the lower bounds %.0f (%d ranks x %ld)",
                           B, dlo, P, m[0].lo);
        }
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                       "global batch %ld is smaller than the sum of the lower bounds %.0f", B, dlo);
    }
    if (shi < B) {
        if (same_hi) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                           "global batch %ld exceeds the sum of the upper bounds %.0f (%d ranks x %ld)",
                           B, dhi, P, m[0].hi);
        }
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                       "global batch %ld exceeds the sum of the upper bounds %.0f", B, dhi);
    }
    return OMNIBATCH_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Granularity                                                          */

static long ob_ceil_div(long a, long g)
{
    return a <= 0 ? 0 : a / g + (0 != a % g);
}

/* A rank's bounds in granules, as an ordinary rank or as the carrier of r.
 * *H < *L when the role is impossible. */
static void ob_granule_bounds(const ob_rank_model *m, long B, const ob_granules *gr, int carrier,
                              long *L, long *H)
{
    long shift = carrier ? gr->r : 0;
    long lo = m->lo - shift;
    long hi = ob_bound_high(m, B) - shift;

    *L = ob_ceil_div(lo, gr->g);
    *H = hi < 0 ? -1 : hi / gr->g;
}

/* Whether rank j can carry r with every other rank in multiples of g. */
static int ob_carrier_feasible(const ob_rank_model *m, long B, const ob_granules *gr, int j)
{
    long L, H, Lr, Hr;

    if (gr->forced >= 0 && gr->forced != j) {
        return 0;
    }
    ob_granule_bounds(&m[j], B, gr, 0, &L, &H);
    ob_granule_bounds(&m[j], B, gr, 1, &Lr, &Hr);
    return Lr <= Hr && gr->sum_low - L + Lr <= gr->Q && gr->Q <= gr->sum_high - H + Hr;
}

/* Whether the bounds admit a plan that follows the granularity rule; the
 * detail line says why not. */
static int ob_granules_setup(const ob_rank_model *m, int P, long B, long g, ob_granules *gr)
{
    int bad[2] = { -1, -1 };
    int nbad = 0;

    gr->g = g;
    gr->r = B % g;
    gr->Q = B / g;
    gr->sum_low = 0;
    gr->sum_high = 0;
    gr->forced = -1;
    for (int i = 0; i < P; i++) {
        long L, H;

        ob_granule_bounds(&m[i], B, gr, 0, &L, &H);
        if (L > H) {
            if (nbad < 2) {
                bad[nbad] = i;
            }
            nbad++;
            /* Count a rank that must carry r by what it can hold as such,
             * so that the sums below stay meaningful. */
            H = L;
        }
        gr->sum_low = ob_sat_add(gr->sum_low, L);
        gr->sum_high = ob_sat_add(gr->sum_high, H);
    }
    if (1 == g) {
        return OMNIBATCH_SUCCESS;
    }
    if (nbad > 0 && 0 == gr->r) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                       "granularity %ld: rank %d's bounds [%ld, %ld] hold no multiple of %ld, and the global batch %ld "
                       "leaves no remainder for it", g, bad[0], m[bad[0]].lo, m[bad[0]].hi, g, B);
    }
    if (nbad > 1) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                       "granularity %ld: ranks %d [%ld, %ld] and %d [%ld, %ld] hold no multiple of %ld, and only one "
                       "rank may carry the remainder %ld of the global batch %ld",
                       g, bad[0], m[bad[0]].lo, m[bad[0]].hi, bad[1], m[bad[1]].lo, m[bad[1]].hi, g, gr->r, B);
    }
    if (0 == gr->r) {
        if (gr->sum_low > gr->Q) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                           "granularity %ld: the lower bounds rounded up to multiples of %ld sum to %.0f, more than "
                           "the global batch %ld", g, g, (double) gr->sum_low * (double) g, B);
        }
        if (gr->sum_high < gr->Q) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                           "granularity %ld: the upper bounds rounded down to multiples of %ld sum to %.0f, less than "
                           "the global batch %ld", g, g, (double) gr->sum_high * (double) g, B);
        }
        return OMNIBATCH_SUCCESS;
    }
    if (1 == nbad) {
        /* Undo the placeholder: the forced rank's own bounds enter through
         * its carrier role in ob_carrier_feasible(). */
        long L, H;

        gr->forced = bad[0];
        ob_granule_bounds(&m[bad[0]], B, gr, 0, &L, &H);
        gr->sum_high -= L - H;
    }
    for (int j = 0; j < P; j++) {
        if (ob_carrier_feasible(m, B, gr, j)) {
            return OMNIBATCH_SUCCESS;
        }
    }
    return ob_fail(OMNIBATCH_ERR_INFEASIBLE,
                   "granularity %ld: no plan of the global batch %ld fits the bounds with every batch a multiple "
                   "of %ld but one that also carries the remainder %ld", g, B, g, gr->r);
}

/* The rank that carries r: among those that can, one whose target fits its
 * carrier bounds, then the largest target (the fastest rank: r costs it
 * least), then the lowest index.  -1 when r == 0. */
static int ob_pick_carrier(const ob_rank_model *m, int P, long B, const ob_granules *gr, const double *target)
{
    int best = -1;
    int best_fits = 0;

    if (0 == gr->r) {
        return -1;
    }
    for (int j = 0; j < P; j++) {
        long Lr, Hr;
        int fits;

        if (!ob_carrier_feasible(m, B, gr, j)) {
            continue;
        }
        ob_granule_bounds(&m[j], B, gr, 1, &Lr, &Hr);
        fits = target[j] >= (double) (Lr * gr->g + gr->r) && target[j] <= (double) (Hr * gr->g + gr->r);
        if (best < 0 || fits > best_fits || (fits == best_fits && target[j] > target[best])) {
            best = j;
            best_fits = fits;
        }
    }
    return best;
}

/* ------------------------------------------------------------------ */
/* Rounding                                                             */

/*
 * The integer plan nearest \p target with carrier j: in granules, shift
 * every target by one common amount so that they fit the granule bounds
 * and sum to Q (water-filling with unit slopes; no shift when they already
 * fit the bounds: a sum a hair off is absorbed below), take the floors, then give the missing granules one each to the
 * largest fractional parts, or, \p by_time, to the ranks whose step time
 * with one granule more is least (with the targets of a water-filling
 * optimum that gives the least step time an integer plan can have, where
 * the largest fractions would give the extra granules to slow ranks as
 * readily as to fast ones).  Each result is within one granule of its
 * shifted target.  \p target is read in full before the scratch is
 * written, so it may be w->x.
 */
/* One rounding problem: the ranks, the global batch in granules, the
 * carrier of the remainder, and the order of the extra granules. */
typedef struct ob_rounding {
    const ob_rank_model *m;
    int P;
    long B;
    const ob_granules *gr;
    int carrier;                 /* the rank that also carries gr->r samples */
    int by_time;                 /* extra granules by least step time, not largest fraction */
} ob_rounding;

/* The targets in granules, shifted by one common amount so that they fit
 * the granule bounds and sum to Q: w->wf holds the bounds, w->x the result. */
static void ob_round_shift(const ob_rounding *rd, const double *target, ob_work *w)
{
    const ob_granules *gr = rd->gr;
    double g = (double) gr->g;
    int fit = 1;

    for (int i = 0; i < rd->P; i++) {
        long L, H;

        ob_granule_bounds(&rd->m[i], rd->B, gr, i == rd->carrier, &L, &H);
        w->wf[i].a = -(target[i] - (i == rd->carrier ? (double) gr->r : 0.0)) / g;
        w->wf[i].b = 1.0;
        w->wf[i].lo = (double) L;
        w->wf[i].hi = (double) H;
        fit = fit && -w->wf[i].a >= w->wf[i].lo && -w->wf[i].a <= w->wf[i].hi;
    }
    if (fit) {
        /* No shift: an exact target comes back exactly. */
        for (int i = 0; i < rd->P; i++) {
            w->x[i] = -w->wf[i].a;
        }
    } else {
        ob_wf_solve(w->wf, rd->P, (double) gr->Q, w->x, w);
    }
}

/* The floors of the shifted targets, within bounds, and the order in which
 * ranks get (or give back) a granule, sorted into w->tag.  The granules
 * still missing (negative: too many). */
static long long ob_round_floor(const ob_rounding *rd, long *plan, ob_work *w)
{
    long long deficit = rd->gr->Q;
    double g = (double) rd->gr->g;

    for (int i = 0; i < rd->P; i++) {
        double k = floor(w->x[i]);

        k = k < w->wf[i].lo ? w->wf[i].lo : (k > w->wf[i].hi ? w->wf[i].hi : k);
        plan[i] = (long) k;
        deficit -= plan[i];
        /* Larger fraction (or shorter time) first; equal ones in rank order
         * (the sort is stable), so the plan depends on nothing but the input. */
        if (rd->by_time) {
            double b = (k + 1.0) * g + (i == rd->carrier ? (double) rd->gr->r : 0.0);

            w->key[i] = ob_key(rd->m[i].alpha + rd->m[i].beta * b);
        } else {
            w->key[i] = ~ob_key(w->x[i] - k);
        }
        w->tag[i] = (uint32_t) i;
    }
    ob_radix_sort(w->key, w->tag, w->key2, w->tag2, (size_t) rd->P);
    return deficit;
}

/* Hand out the missing granules one each in w->tag's order, then take back
 * any surplus in the reverse order.  One pass suffices when the shifted
 * targets sum to Q exactly; the loops absorb the last ulp of a sum that is
 * a hair off. */
static int ob_round_settle(int P, long long deficit, long *plan, const ob_work *w)
{
    while (deficit > 0) {
        long long before = deficit;

        for (int n = 0; n < P && deficit > 0; n++) {
            int i = (int) w->tag[n];

            if ((double) plan[i] < w->wf[i].hi) {
                plan[i]++;
                deficit--;
            }
        }
        if (deficit == before) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "planner: no room left for %lld granules", deficit);
        }
    }
    while (deficit < 0) {
        long long before = deficit;

        for (int n = P - 1; n >= 0 && deficit < 0; n--) {
            int i = (int) w->tag[n];

            if ((double) plan[i] > w->wf[i].lo) {
                plan[i]--;
                deficit++;
            }
        }
        if (deficit == before) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "planner: %lld granules too many", -deficit);
        }
    }
    return OMNIBATCH_SUCCESS;
}

static int ob_round_carrier(const ob_rounding *rd, const double *target, long *plan, ob_work *w)
{
    int rc;

    ob_round_shift(rd, target, w);
    rc = ob_round_settle(rd->P, ob_round_floor(rd, plan, w), plan, w);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    for (int i = 0; i < rd->P; i++) {
        plan[i] = plan[i] * rd->gr->g + (i == rd->carrier ? rd->gr->r : 0);
    }
    return OMNIBATCH_SUCCESS;
}

/* Carrier by the targets, then round. */
static int ob_round_targets(const ob_rank_model *m, int P, long B, const ob_granules *gr,
                            const double *target, long *plan, ob_work *w)
{
    ob_rounding rd = { m, P, B, gr, ob_pick_carrier(m, P, B, gr, target), 0 };

    return ob_round_carrier(&rd, target, plan, w);
}

/* Shape, bounds and granularity of a call, in the order a user would fix them. */
static int ob_check_problem(const ob_rank_model *m, int P, long B, long g, ob_granules *gr)
{
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_check_shape(P, B)) || OMNIBATCH_SUCCESS != (rc = ob_check_granularity(g))) {
        return rc;
    }
    if (NULL == m) {
        return ob_fail(OMNIBATCH_ERR_ARG, "planner: no rank models given");
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_check_bounds(m, P, B))) {
        return rc;
    }
    return ob_granules_setup(m, P, B, g, gr);
}

/* ------------------------------------------------------------------ */
/* Public                                                               */

int ob_plan_check_models(const ob_rank_model *m, int P)
{
    if (NULL == m || P < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "planner: no rank models given");
    }
    return ob_check_models(m, P);
}

int ob_plan_check_bounds(const ob_rank_model *m, int P, long B, long granularity)
{
    ob_granules gr;

    return ob_check_problem(m, P, B, granularity, &gr);
}

static void ob_wf_from_models(const ob_rank_model *m, int P, long B, ob_wf_rank *wf)
{
    for (int i = 0; i < P; i++) {
        wf[i].a = m[i].alpha;
        wf[i].b = m[i].beta;
        wf[i].lo = (double) m[i].lo;
        wf[i].hi = (double) ob_bound_high(&m[i], B);
    }
}

static double ob_wf_step_time(const ob_wf_rank *wf, int P, const double *x)
{
    double t = 0.0;

    for (int i = 0; i < P; i++) {
        double ti = wf[i].a + wf[i].b * x[i];

        t = ti > t ? ti : t;
    }
    return t;
}

int ob_plan_optimum(const ob_rank_model *m, int P, long B, double *b, double *T)
{
    ob_granules gr;
    ob_work w;
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_check_problem(m, P, B, 1, &gr))
        || OMNIBATCH_SUCCESS != (rc = ob_check_models(m, P))
        || OMNIBATCH_SUCCESS != (rc = ob_work_alloc(&w, P))) {
        return rc;
    }
    ob_wf_from_models(m, P, B, w.wf);
    ob_wf_solve(w.wf, P, (double) B, w.x, &w);
    if (NULL != T) {
        *T = ob_wf_step_time(w.wf, P, w.x);
    }
    if (NULL != b) {
        memcpy(b, w.x, (size_t) P * sizeof *b);
    }
    ob_work_free(&w);
    return OMNIBATCH_SUCCESS;
}

double ob_plan_step_time(const ob_rank_model *m, int P, const long *plan)
{
    double t = 0.0;

    for (int i = 0; i < P; i++) {
        /* A rank given no sample (a parked one, lo = 0) does not compute. */
        double ti = 0 == plan[i] ? 0.0 : m[i].alpha + m[i].beta * (double) plan[i];

        t = ti > t ? ti : t;
    }
    return t;
}

int ob_plan_check(const ob_rank_model *m, int P, long B, const long *plan)
{
    long long sum = 0;
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_check_shape(P, B))) {
        return rc;
    }
    if (NULL == m || NULL == plan) {
        return ob_fail(OMNIBATCH_ERR_ARG, "planner: no %s given", NULL == m ? "rank models" : "plan");
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_check_bounds(m, P, B))) {
        return rc;
    }
    for (int i = 0; i < P; i++) {
        if (plan[i] < m[i].lo || plan[i] > m[i].hi) {
            return ob_fail(OMNIBATCH_ERR_ARG, "plan: rank %d has batch %ld outside its bounds [%ld, %ld]",
                           i, plan[i], m[i].lo, m[i].hi);
        }
        if (plan[i] > B) {
            return ob_fail(OMNIBATCH_ERR_ARG, "plan: rank %d has batch %ld, more than the global batch %ld",
                           i, plan[i], B);
        }
        sum = ob_sat_add(sum, plan[i]);
    }
    if (sum != B) {
        return ob_fail(OMNIBATCH_ERR_ARG, "plan: batches sum to %lld, expected the global batch %ld", sum, B);
    }
    return OMNIBATCH_SUCCESS;
}

int ob_plan_round(const ob_rank_model *m, int P, long B, long granularity, const double *target, long *plan)
{
    ob_granules gr;
    ob_work w;
    double tol, sum = 0.0;
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_check_problem(m, P, B, granularity, &gr))) {
        return rc;
    }
    tol = OB_PLAN_TARGET_TOL * (double) B;
    for (int i = 0; i < P; i++) {
        if (!(target[i] >= (double) m[i].lo - tol && target[i] <= (double) ob_bound_high(&m[i], B) + tol)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "target of rank %d = %g: expected a finite number in [%ld, %ld]",
                           i, target[i], m[i].lo, ob_bound_high(&m[i], B));
        }
        sum += target[i];
    }
    if (!(fabs(sum - (double) B) <= tol)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "targets sum to %.17g: expected the global batch %ld", sum, B);
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_work_alloc(&w, P))) {
        return rc;
    }
    rc = ob_round_targets(m, P, B, &gr, target, plan, &w);
    ob_work_free(&w);
    return rc;
}

/* Targets proportional to the weights (all 1 when NULL) within the bounds,
 * then rounded. */
static int ob_plan_weighted(const ob_rank_model *m, int P, long B, long granularity,
                            const double *weights, long *plan)
{
    ob_granules gr;
    ob_work w;
    double wmax = 1.0;
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_check_problem(m, P, B, granularity, &gr))) {
        return rc;
    }
    if (NULL != weights) {
        wmax = 0.0;
        for (int i = 0; i < P; i++) {
            if (!(weights[i] > 0.0 && isfinite(weights[i]))) {
                return ob_fail(OMNIBATCH_ERR_ARG, "weight of rank %d = %g: expected a finite number > 0",
                               i, weights[i]);
            }
            wmax = weights[i] > wmax ? weights[i] : wmax;
        }
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_work_alloc(&w, P))) {
        return rc;
    }
    for (int i = 0; i < P; i++) {
        double ratio = NULL == weights ? 1.0 : weights[i] / wmax;

        w.wf[i].a = 0.0;
        w.wf[i].b = 1.0 / (ratio > OB_PLAN_MIN_WEIGHT_RATIO ? ratio : OB_PLAN_MIN_WEIGHT_RATIO);
        w.wf[i].lo = (double) m[i].lo;
        w.wf[i].hi = (double) ob_bound_high(&m[i], B);
    }
    ob_wf_solve(w.wf, P, (double) B, w.x, &w);
    rc = ob_round_targets(m, P, B, &gr, w.x, plan, &w);
    ob_work_free(&w);
    return rc;
}

int ob_plan_equal(const ob_rank_model *m, int P, long B, long granularity, long *plan)
{
    return ob_plan_weighted(m, P, B, granularity, NULL, plan);
}

int ob_plan_proportional(const ob_rank_model *m, int P, long B, long granularity,
                         const double *weights, long *plan)
{
    if (NULL == weights) {
        return ob_fail(OMNIBATCH_ERR_ARG, "proportional plan: no weights given");
    }
    return ob_plan_weighted(m, P, B, granularity, weights, plan);
}

int ob_plan_check_params(const ob_planner_params *p)
{
    if (NULL == p) {
        return ob_fail(OMNIBATCH_ERR_ARG, "planner: no parameters given");
    }
    if (!(p->gain > OB_GAIN_LO && p->gain <= OB_GAIN_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "gain %g: expected %s", p->gain, ob_config_allowed("OMNIBATCH_GAIN"));
    }
    if (!(p->deadband >= OB_DEADBAND_LO && p->deadband <= OB_DEADBAND_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "dead-band %g: expected %s", p->deadband,
                       ob_config_allowed("OMNIBATCH_DEADBAND"));
    }
    return ob_check_granularity(p->granularity);
}

int ob_plan_decide(const ob_planner_params *p, const ob_rank_model *m, int P, long B,
                   const long *current, long *next, ob_decision *d)
{
    ob_granules gr;
    ob_work w;
    double t_opt, t_cur, t_cand;
    int carrier, changed, rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_plan_check_params(p))
        || OMNIBATCH_SUCCESS != (rc = ob_check_problem(m, P, B, p->granularity, &gr))
        || OMNIBATCH_SUCCESS != (rc = ob_check_models(m, P))
        || OMNIBATCH_SUCCESS != (rc = ob_plan_check(m, P, B, current))
        || OMNIBATCH_SUCCESS != (rc = ob_work_alloc(&w, P))) {
        return rc;
    }
    /* The oracle, on the bounds as given. */
    ob_wf_from_models(m, P, B, w.wf);
    ob_wf_solve(w.wf, P, (double) B, w.x, &w);
    t_opt = ob_wf_step_time(w.wf, P, w.x);
    /* The target, on the bounds the granularity leaves: each rank's range
     * rounded inward, the carrier's to values congruent to r (granularity 1
     * leaves them as they are: the oracle is the target). */
    carrier = ob_pick_carrier(m, P, B, &gr, w.x);
    if (gr.g > 1) {
        for (int i = 0; i < P; i++) {
            long L, H, shift = i == carrier ? gr.r : 0;

            ob_granule_bounds(&m[i], B, &gr, i == carrier, &L, &H);
            w.wf[i].lo = (double) (L * gr.g + shift);
            w.wf[i].hi = (double) (H * gr.g + shift);
        }
        ob_wf_solve(w.wf, P, (double) B, w.x, &w);
    }
    /* The proportional step toward it. */
    for (int i = 0; i < P; i++) {
        w.x[i] = (double) current[i] + p->gain * (w.x[i] - (double) current[i]);
    }
    {
        ob_rounding rd = { m, P, B, &gr, carrier, 1 };

        rc = ob_round_carrier(&rd, w.x, w.cand, &w);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        ob_work_free(&w);
        return rc;
    }
    t_cur = ob_plan_step_time(m, P, current);
    t_cand = ob_plan_step_time(m, P, w.cand);
    changed = 0 != memcmp(w.cand, current, (size_t) P * sizeof *current)
              && t_cur - t_cand > p->deadband * t_cur;
    if (changed) {
        memcpy(next, w.cand, (size_t) P * sizeof *next);
    } else if (next != current) {
        memcpy(next, current, (size_t) P * sizeof *next);
    }
    if (NULL != d) {
        d->t_current = t_cur;
        d->t_optimum = t_opt;
        d->t_next = changed ? t_cand : t_cur;
        d->t_candidate = t_cand;
        d->changed = changed;
    }
    ob_work_free(&w);
    return OMNIBATCH_SUCCESS;
}
