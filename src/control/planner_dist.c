/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The distributed decision (see ob_planner_dist.h): the water level from
 * rounds of candidate levels, the integer plan from a threshold search and
 * one exclusive scan, and the controller's decision on top of both.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_maths.h"
#include "ob_planner_dist.h"
#include "ob_starve.h"

__extension__ typedef unsigned __int128 ob_u128;

/* Fixed point of the sums of reals: x * 2^OB_FIX_BITS, x in [0, 2^50]. */
#define OB_FIX_BITS 46
#define OB_FIX_LIMBS 3
/* Slopes sum_i 1 / b_i, 1 / b_i <= 1 / OB_PLAN_MIN_BETA < 2^40, at 2^-56. */
#define OB_SLOPE_BITS 56
/* Payload of one collective, at most. */
#define OB_MSG_SUMS 3072
#define OB_MSG_MAXS 2560
/* The first threshold round: OB_DIST_FINE_BINS even bins (in the order of
 * the doubles) from OB_DIST_WINDOW_BELOW below the level to
 * OB_DIST_WINDOW_ABOVE above it, where the keys t_i(floor + 1 granule) of a
 * step near the optimum lie (the level plus up to one granule's time), and
 * beyond each side one bin per power of two of the distance from the
 * window. */
#define OB_DIST_FINE_BINS 1024
#define OB_DIST_WINDOW_BELOW 0.015625
#define OB_DIST_WINDOW_ABOVE 0.0625
#define OB_DIST_SIDE_BINS 64
/* Relative steps of the first round's ladder around a hint: 2^(-e/2), e = 2 .. OB_DIST_LADDER. */
#define OB_DIST_LADDER 37
/* The controller's first level only places each rank's error (where the
 * optimum puts its batch): a bracket within 1/8 of it is interpolated. */
#define OB_DIST_PLACE_TOL 0.125
/* Without a hint the first round's levels are 2^e s for e from OB_DIST_COLD_LOW on. */
#define OB_DIST_COLD_LOW (-40)

/* One collective's payload. */
typedef struct ob_msg {
    int64_t sums[OB_MSG_SUMS];
    double maxs[OB_MSG_MAXS];
    int nsum;
    int nmax;
} ob_msg;

/* One rank of a water-filling problem: x = clamp((level - a) / b, lo, hi). */
typedef struct ob_dwf {
    double a;
    double b;
    double lo;
    double hi;
} ob_dwf;

/* ------------------------------------------------------------------ */
/* Collectives and fixed point                                          */

static int ob_msg_sum_at(ob_msg *msg, int n)
{
    int at = msg->nsum;

    memset(&msg->sums[at], 0, (size_t) n * sizeof msg->sums[0]);
    msg->nsum += n;
    return at;
}

static int ob_msg_max_at(ob_msg *msg, int n)
{
    int at = msg->nmax;

    for (int k = 0; k < n; k++) {
        msg->maxs[at + k] = -HUGE_VAL;
    }
    msg->nmax += n;
    return at;
}

static int ob_msg_reduce(ob_dist_comm *comm, ob_msg *msg)
{
    comm->collectives++;
    comm->bytes += (long) ((size_t) msg->nsum * sizeof(int64_t) + (size_t) msg->nmax * sizeof(double));
    return comm->allreduce(comm->ctx, msg->sums, msg->nsum, msg->maxs, msg->nmax);
}

static void ob_max_into(double *slot, double v)
{
    *slot = v > *slot ? v : *slot;
}

/* A rank's time at batch b from its fixed and per-sample costs: none at 0,
 * where a parked rank does not compute (as ob_plan_step_time() and the
 * controller's expected step take it). */
static double ob_time_at(double alpha, double beta, double b)
{
    return 0.0 == b ? 0.0 : alpha + beta * b;
}

/* x * 2^bits in [0, 2^96) into three 32-bit limbs of its floor: exact bit
 * extraction, so the sum over any number of ranks (< 2^31) is exact. */
static void ob_fix_add_scaled(int64_t *limbs, double x, int bits)
{
    double high;
    double rest;
    uint64_t low;

    /* A model the check of the same collective rejects may give anything. */
    x = x >= 0.0 ? x : 0.0;
    x = x < ldexp(1.0, 96 - bits) ? x : ldexp(1.0, 96 - bits) - ldexp(1.0, 43 - bits);
    high = floor(ldexp(x, bits - 64));
    rest = x - ldexp(high, 64 - bits);
    low = (uint64_t) ldexp(rest, bits);

    limbs[0] += (int64_t) (low & 0xffffffffu);
    limbs[1] += (int64_t) (low >> 32);
    limbs[2] += (int64_t) high;
}

/* Samples (or any x in [0, 2^50]) at 2^-46. */
static void ob_fix_add(int64_t *limbs, double x)
{
    ob_fix_add_scaled(limbs, x, OB_FIX_BITS);
}

static ob_u128 ob_fix_value(const int64_t *limbs)
{
    return ((ob_u128) (uint64_t) limbs[2] << 64) + ((ob_u128) (uint64_t) limbs[1] << 32) + (uint64_t) limbs[0];
}

static ob_u128 ob_fix_of_long(long v)
{
    return (ob_u128) (uint64_t) v << OB_FIX_BITS;
}

static double ob_fix_double(ob_u128 v)
{
    return ldexp((double) v, -OB_FIX_BITS);
}

/* Two 32-bit limbs of a count or batch in [0, 2^62], summed exactly. */
static void ob_long_add(int64_t *limbs, long v)
{
    limbs[0] += (int64_t) ((uint64_t) v & 0xffffffffu);
    limbs[1] += (int64_t) ((uint64_t) v >> 32);
}

static ob_u128 ob_long_value(const int64_t *limbs)
{
    return ((ob_u128) (uint64_t) limbs[1] << 32) + (uint64_t) limbs[0];
}

/* The order of the doubles as unsigned keys (IEEE 754), and back. */
static uint64_t ob_dkey(double v)
{
    uint64_t u;

    memcpy(&u, &v, sizeof u);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static double ob_dunkey(uint64_t k)
{
    uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
    double v;

    memcpy(&v, &u, sizeof v);
    return v;
}

static uint64_t ob_digest_add(uint64_t h, uint64_t v)
{
    for (int k = 0; k < 8; k++) {
        h ^= (v >> (8 * k)) & 0xffu;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static uint64_t ob_digest_double(uint64_t h, double v)
{
    uint64_t u;

    memcpy(&u, &v, sizeof u);
    return ob_digest_add(h, u);
}

/* ------------------------------------------------------------------ */
/* The water level                                                      */

static double ob_dwf_x(const ob_dwf *r, double level)
{
    double x = (level - r->a) / r->b;

    return x < r->lo ? r->lo : (x > r->hi ? r->hi : x);
}

/* What the ranks know in common about sum_i x_i(level) = total. */
typedef struct ob_level {
    ob_u128 total;               /* fixed point */
    int round;
    double cand[OB_DIST_CANDIDATES + 2];
    int ncand;
    int at_f;                    /* payload offsets of this round */
    int at_count;
    int at_slope;
    int at_max;
    int at_kink;
    double lo, hi;               /* bracket: f(lo) < total <= f(hi) */
    ob_u128 f_lo, f_hi;
    int done;
    double level;                /* the answer once done */
    double tol;                  /* 0: exact; else a bracket this narrow (relative) is interpolated */
} ob_level;

/* 2^(e/2). */
static double ob_half_octave(int e)
{
    return 0 == e % 2 ? ldexp(1.0, e / 2) : ldexp(M_SQRT2, (e - 1) / 2);
}

static int ob_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return x < y ? -1 : (x > y ? 1 : 0);
}

/* Sorted, without duplicates, only inside [lo, hi]. */
static void ob_level_tidy(ob_level *s, double lo, double hi)
{
    int n = 0;

    qsort(s->cand, (size_t) s->ncand, sizeof s->cand[0], ob_cmp_double);
    for (int k = 0; k < s->ncand; k++) {
        double c = s->cand[k];

        if (c >= lo && c <= hi && (0 == n || c > s->cand[n - 1])) {
            s->cand[n++] = c;
        }
    }
    s->ncand = n;
}

/* First round: a ladder around the hint, 1 -+ 2^(-e/2) for e = 2 ..
 * OB_DIST_LADDER (half-octave steps from 1/2 down to ~2^-18.5), then
 * 2^(-e/2) below down to 1/16 and 2^(e/2) above up to 256 (the planner's
 * level after the trust region can lie several times above the hint), or
 * powers of two of seconds without one. */
static void ob_level_first(ob_level *s, double hint)
{
    s->ncand = 0;
    if (hint > 0.0 && isfinite(hint)) {
        s->cand[s->ncand++] = hint;
        for (int e = 2; e <= OB_DIST_LADDER; e++) {
            double r = ob_half_octave(-e);

            s->cand[s->ncand++] = hint * (1.0 - r);
            s->cand[s->ncand++] = hint * (1.0 + r);
        }
        for (int e = 3; e <= 8; e++) {
            s->cand[s->ncand++] = hint * ob_half_octave(-e);
        }
        for (int e = 2; e <= 16; e++) {
            s->cand[s->ncand++] = hint * ob_half_octave(e);
        }
    } else {
        for (int k = 0; k < OB_DIST_CANDIDATES - 1; k++) {
            s->cand[s->ncand++] = ldexp(1.0, OB_DIST_COLD_LOW + k);
        }
        s->cand[s->ncand++] = 0.0;
    }
    ob_level_tidy(s, 0.0, HUGE_VAL);
}

/* Where the chord across the bracket meets the total. */
static double ob_level_chord(const ob_level *s)
{
    return s->lo + (s->hi - s->lo) * ((double) (s->total - s->f_lo) / (double) (s->f_hi - s->f_lo));
}

/* Later rounds: the bracket's ends, half the levels evenly spaced in the
 * order of the doubles inside it (every round narrows it at least that much)
 * and half clustered around the linear interpolation (where the answer is
 * when few breakpoints remain inside). */
static void ob_level_next(ob_level *s)
{
    uint64_t ka = ob_dkey(s->lo), kb = ob_dkey(s->hi);
    int half = OB_DIST_CANDIDATES / 2;
    double w = s->hi - s->lo;
    double guess = ob_level_chord(s);

    s->ncand = 0;
    s->cand[s->ncand++] = s->lo;
    s->cand[s->ncand++] = s->hi;
    for (int j = 1; j < half; j++) {
        ob_u128 step = (ob_u128) (kb - ka) * (ob_u128) j / (ob_u128) half;

        s->cand[s->ncand++] = ob_dunkey(ka + (uint64_t) step);
    }
    s->cand[s->ncand++] = guess;
    for (int j = 1; j < half / 2; j++) {
        double d = ldexp(w, -2 * j);

        s->cand[s->ncand++] = guess - d;
        s->cand[s->ncand++] = guess + d;
    }
    ob_level_tidy(s, s->lo, s->hi);
}

static void ob_level_init(ob_level *s, long total, double hint, double tol)
{
    memset(s, 0, sizeof *s);
    s->total = ob_fix_of_long(total);
    s->tol = tol;
    ob_level_first(s, hint);
}

/* This block's share of the round: at every level, sum_i x_i and the
 * slopes of the sum just right and just left of it (sum of 1 / b of the
 * ranks active there); between neighbouring levels, the number of
 * breakpoints strictly inside and the least and largest of them; in the
 * first round also the sums of the bounds and the extreme breakpoints. */
static void ob_level_rank(ob_level *s, const ob_dwf *r, ob_msg *msg)
{
    int K = s->ncand;
    double bp[2] = { r->a + r->b * r->lo, r->a + r->b * r->hi };
    double inv = 1.0 / r->b;

    for (int k = 0; k < K; k++) {
        double c = s->cand[k];

        ob_fix_add(&msg->sums[s->at_f + OB_FIX_LIMBS * k], ob_dwf_x(r, c));
        if (bp[0] <= c && c < bp[1]) {
            ob_fix_add_scaled(&msg->sums[s->at_slope + 2 * OB_FIX_LIMBS * k], inv, OB_SLOPE_BITS);
        }
        if (bp[0] < c && c <= bp[1]) {
            ob_fix_add_scaled(&msg->sums[s->at_slope + 2 * OB_FIX_LIMBS * k + OB_FIX_LIMBS], inv, OB_SLOPE_BITS);
        }
    }
    ob_fix_add(&msg->sums[s->at_f + OB_FIX_LIMBS * K], r->lo);
    ob_fix_add(&msg->sums[s->at_f + OB_FIX_LIMBS * (K + 1)], r->hi);
    ob_max_into(&msg->maxs[s->at_max], -bp[0]);
    ob_max_into(&msg->maxs[s->at_max + 1], bp[1]);
    for (int e = 0; e < 2; e++) {
        /* The interval (cand[lo], cand[lo + 1]) that holds bp strictly. */
        int lo = 0, hi = K - 1;

        if (K < 2 || !(bp[e] > s->cand[0] && bp[e] < s->cand[K - 1])) {
            continue;
        }
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;

            if (s->cand[mid] < bp[e]) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if (bp[e] < s->cand[hi]) {
            msg->sums[s->at_count + lo]++;
            ob_max_into(&msg->maxs[s->at_kink + 2 * lo], -bp[e]);
            ob_max_into(&msg->maxs[s->at_kink + 2 * lo + 1], bp[e]);
        }
    }
}

static void ob_level_contribute(ob_level *s, const ob_dwf *r, int n, ob_msg *msg)
{
    int K = s->ncand;

    s->at_f = ob_msg_sum_at(msg, OB_FIX_LIMBS * (K + 2));
    s->at_slope = ob_msg_sum_at(msg, 2 * OB_FIX_LIMBS * K);
    s->at_count = ob_msg_sum_at(msg, K > 1 ? K - 1 : 1);
    s->at_max = ob_msg_max_at(msg, 2);
    s->at_kink = ob_msg_max_at(msg, K > 1 ? 2 * (K - 1) : 2);
    for (int i = 0; i < n; i++) {
        ob_level_rank(s, &r[i], msg);
    }
}

/* The slope just right (side 0) or just left (side 1) of level k. */
static double ob_level_slope(const ob_level *s, const ob_msg *msg, int k, int side)
{
    const int64_t *limbs = &msg->sums[s->at_slope + 2 * OB_FIX_LIMBS * k + OB_FIX_LIMBS * side];

    return ldexp((double) ob_fix_value(limbs), -OB_SLOPE_BITS);
}

static void ob_level_finish(ob_level *s, double level)
{
    s->level = level < s->lo ? s->lo : (level > s->hi ? s->hi : level);
    s->done = 1;
}

/* The bracket is two levels of this round, j - 1 and j, with breakpoints
 * inside: the sum is linear from the left end to the least of them and
 * from the largest to the right end, with the slopes at the ends.  If it
 * crosses the total on one of those stretches, solve there (exact, as on a
 * segment without breakpoints); else narrow to the breakpoints. */
static void ob_level_kinks(ob_level *s, const ob_msg *msg, int j)
{
    double kmin = -msg->maxs[s->at_kink + 2 * (j - 1)], kmax = msg->maxs[s->at_kink + 2 * (j - 1) + 1];
    double right = ob_level_slope(s, msg, j - 1, 0), left = ob_level_slope(s, msg, j, 1);
    double need = ob_fix_double(s->total - s->f_lo);
    double spare = ob_fix_double(s->f_hi - s->total);

    if (right > 0.0 && s->lo + need / right <= kmin) {
        ob_level_finish(s, s->lo + need / right);
    } else if (left > 0.0 && s->hi - spare / left >= kmax) {
        ob_level_finish(s, s->hi - spare / left);
    } else if (kmin > s->lo && kmax < s->hi) {
        /* Between the breakpoints: their sums are not known yet, only bounds on them. */
        s->lo = kmin;
        s->hi = kmax;
    }
}

/* Approximate (s->tol > 0): is the bracket narrow enough to interpolate? */
static int ob_level_close_enough(const ob_level *s)
{
    return s->tol > 0.0 && s->hi - s->lo <= s->tol * s->hi;
}

/* Approximate (s->tol): the level on the chord between the breakpoints
 * kmin and kmax of this round's bracket (lo0, hi0), where the sum is known
 * from the linear stretches at both ends. */
static double ob_level_between_kinks(const ob_level *s, const ob_msg *msg, int j, double lo0, double hi0)
{
    double kmin = -msg->maxs[s->at_kink + 2 * (j - 1)], kmax = msg->maxs[s->at_kink + 2 * (j - 1) + 1];
    double need = ob_fix_double(s->total - s->f_lo) - ob_level_slope(s, msg, j - 1, 0) * (kmin - lo0);
    double spare = ob_fix_double(s->f_hi - s->total) - ob_level_slope(s, msg, j, 1) * (hi0 - kmax);

    return need > 0.0 && spare > 0.0 ? kmin + (kmax - kmin) * (need / (need + spare)) : 0.5 * (kmin + kmax);
}

/* The reduced round: the new bracket, and the level when it is linear on
 * it (no breakpoint inside: interpolate exactly, as the central planner
 * does on its segment), linear where it crosses, or only two adjacent
 * doubles wide. */
static void ob_level_absorb(ob_level *s, const ob_msg *msg)
{
    int K = s->ncand;
    double min_bp = -msg->maxs[s->at_max], max_bp = msg->maxs[s->at_max + 1];
    ob_u128 f_min = ob_fix_value(&msg->sums[s->at_f + OB_FIX_LIMBS * K]);
    ob_u128 f_max = ob_fix_value(&msg->sums[s->at_f + OB_FIX_LIMBS * (K + 1)]);
    int j = 0;
    int both;

    if (0 == s->round) {
        if (f_min >= s->total) {
            /* Every rank at its lower bound already holds the total. */
            s->done = 1;
            s->level = min_bp;
            return;
        }
        s->lo = min_bp;
        s->f_lo = f_min;
        s->hi = max_bp;
        s->f_hi = f_max;
    }
    s->round++;
    while (j < K && ob_fix_value(&msg->sums[s->at_f + OB_FIX_LIMBS * j]) < s->total) {
        j++;
    }
    if (j > 0 && s->cand[j - 1] >= s->lo) {
        s->lo = s->cand[j - 1];
        s->f_lo = ob_fix_value(&msg->sums[s->at_f + OB_FIX_LIMBS * (j - 1)]);
    }
    if (j < K && s->cand[j] <= s->hi) {
        s->hi = s->cand[j];
        s->f_hi = ob_fix_value(&msg->sums[s->at_f + OB_FIX_LIMBS * j]);
    }
    /* Breakpoints inside are known only between two levels of this round. */
    both = j > 0 && j < K && s->lo == s->cand[j - 1] && s->hi == s->cand[j];
    if ((both && 0 == msg->sums[s->at_count + j - 1]) || s->round >= OB_DIST_MAX_ROUNDS
        || (!both && ob_level_close_enough(s))) {
        ob_level_finish(s, ob_level_chord(s));
        return;
    }
    if (both) {
        double lo0 = s->lo, hi0 = s->hi;

        ob_level_kinks(s, msg, j);
        if (!s->done && ob_level_close_enough(s)) {
            ob_level_finish(s, ob_level_between_kinks(s, msg, j, lo0, hi0));
        }
    }
    if (s->done) {
        return;
    }
    if (ob_dkey(s->hi) - ob_dkey(s->lo) <= 1) {
        s->level = s->hi;
        s->done = 1;
    } else {
        ob_level_next(s);
    }
}

/* Extra payload carried by a collective of a search: add before, read after. */
typedef struct ob_extra {
    void (*add)(void *ctx, ob_msg *msg);
    void (*read)(void *ctx, const ob_msg *msg);
    int (*verdict)(void *ctx);   /* may be NULL; else, after read: anything but success stops the search */
    void *ctx;
} ob_extra;

/* The level of \p r summing to \p total; \p extra rides on the first round.
 * When every rank's bounds are read from \p r and their sums miss the total
 * the search cannot start: *feasible = 0 (the caller decides what that is). */
static int ob_level_solve(ob_dist_comm *comm, const ob_dwf *r, int n, long total, double hint, double tol,
                          const ob_extra *extra, double *level)
{
    ob_level s;
    ob_msg msg;
    int rc;

    ob_level_init(&s, total, hint, tol);
    while (!s.done) {
        msg.nsum = 0;
        msg.nmax = 0;
        if (0 == s.round && NULL != extra) {
            extra->add(extra->ctx, &msg);
        }
        ob_level_contribute(&s, r, n, &msg);
        if (OMNIBATCH_SUCCESS != (rc = ob_msg_reduce(comm, &msg))) {
            return rc;
        }
        if (0 == s.round && NULL != extra) {
            extra->read(extra->ctx, &msg);
            if (NULL != extra->verdict && OMNIBATCH_SUCCESS != (rc = extra->verdict(extra->ctx))) {
                return rc;
            }
        }
        if (0 == s.round && ob_fix_value(&msg.sums[s.at_f + OB_FIX_LIMBS * (s.ncand + 1)]) < s.total) {
            return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "global batch %ld is larger than the sum of the upper "
                           "bounds %.0f", total, ob_fix_double(ob_fix_value(&msg.sums[s.at_f + OB_FIX_LIMBS
                           * (s.ncand + 1)])));
        }
        ob_level_absorb(&s, &msg);
    }
    *level = s.level;
    return OMNIBATCH_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Validation of a block, in the first collective                       */

typedef struct ob_check {
    ob_dist_block blk;
    const ob_rank_model *m;
    const long *current;         /* may be NULL */
    long B;
    long g;
    int at;
    int at_max;
    long bad_rank;               /* lowest rank at fault, -1: none */
    long bad_current;
    ob_u128 sum_current;
    ob_u128 sum_lo;
    ob_u128 sum_hi;
} ob_check;

static int ob_model_ok(const ob_rank_model *m, long B, long g)
{
    long hi = m->hi < B ? m->hi : B;

    return m->alpha >= 0.0 && m->alpha <= OB_PLAN_MAX_ALPHA && m->beta >= OB_PLAN_MIN_BETA
           && m->beta <= OB_PLAN_MAX_BETA && m->lo >= 0 && m->lo <= m->hi
           && (m->lo + g - 1) / g <= hi / g;
}

static void ob_check_add(void *ctx, ob_msg *msg)
{
    ob_check *c = ctx;

    c->at = ob_msg_sum_at(msg, 6);
    c->at_max = ob_msg_max_at(msg, 2);
    for (int i = 0; i < c->blk.n; i++) {
        const ob_rank_model *m = &c->m[i];
        double rank = (double) (c->blk.first + i);

        if (!ob_model_ok(m, c->B, c->g)) {
            ob_max_into(&msg->maxs[c->at_max], -rank);
        }
        if (NULL != c->current) {
            if (c->current[i] < m->lo || c->current[i] > m->hi || c->current[i] > c->B) {
                ob_max_into(&msg->maxs[c->at_max + 1], -rank);
            }
            ob_long_add(&msg->sums[c->at], c->current[i] < 0 ? 0 : c->current[i]);
        }
        if (ob_model_ok(m, c->B, c->g)) {
            long hi = m->hi < c->B ? m->hi : c->B;

            ob_long_add(&msg->sums[c->at + 2], (m->lo + c->g - 1) / c->g * c->g);
            ob_long_add(&msg->sums[c->at + 4], hi / c->g * c->g);
        }
    }
}

static void ob_check_read(void *ctx, const ob_msg *msg)
{
    ob_check *c = ctx;

    c->bad_rank = isfinite(msg->maxs[c->at_max]) ? (long) -msg->maxs[c->at_max] : -1;
    c->bad_current = isfinite(msg->maxs[c->at_max + 1]) ? (long) -msg->maxs[c->at_max + 1] : -1;
    c->sum_current = ob_long_value(&msg->sums[c->at]);
    c->sum_lo = ob_long_value(&msg->sums[c->at + 2]);
    c->sum_hi = ob_long_value(&msg->sums[c->at + 4]);
}

static int ob_check_verdict(void *ctx)
{
    const ob_check *c = ctx;

    if (c->bad_rank >= 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "distributed planner: rank %ld: model or bounds invalid (alpha in "
                       "[0, %g], beta in [%g, %g], 0 <= lo <= hi, a multiple of the granularity %ld between)",
                       c->bad_rank, OB_PLAN_MAX_ALPHA, OB_PLAN_MIN_BETA, OB_PLAN_MAX_BETA, c->g);
    }
    if (c->sum_lo > (ob_u128) c->B || c->sum_hi < (ob_u128) c->B) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "distributed planner: the bounds (rounded to the granularity "
                       "%ld) sum to [%.0f, %.0f], which does not hold the global batch %ld", c->g,
                       (double) c->sum_lo, (double) c->sum_hi, c->B);
    }
    if (NULL != c->current && (c->bad_current >= 0 || c->sum_current != (ob_u128) c->B)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "plan: rank %ld is outside its bounds or the batches sum to %.0f, "
                       "expected the global batch %ld", c->bad_current, (double) c->sum_current, c->B);
    }
    return OMNIBATCH_SUCCESS;
}

static int ob_check_shape(long P, long B, long g)
{
    if (P < 1 || P > INT32_MAX) {
        return ob_fail(OMNIBATCH_ERR_ARG, "number of ranks %ld: expected an integer in [1, %ld]", P,
                       (long) INT32_MAX);
    }
    if (B < 1 || B > OB_PLAN_MAX_BATCH) {
        return ob_fail(OMNIBATCH_ERR_ARG, "global batch %ld: expected an integer in [1, %ld]", B,
                       (long) OB_PLAN_MAX_BATCH);
    }
    if (g < 1 || 0 != B % g) {
        return ob_fail(OMNIBATCH_ERR_ARG, "distributed planner: granularity %ld: expected a divisor of the "
                       "global batch %ld (the central planner handles a remainder)", g, B);
    }
    return OMNIBATCH_SUCCESS;
}

static void ob_dwf_from_models(const ob_rank_model *m, int n, long B, long g, ob_dwf *r)
{
    for (int i = 0; i < n; i++) {
        long hi = m[i].hi < B ? m[i].hi : B;

        r[i].a = m[i].alpha;
        r[i].b = m[i].beta;
        r[i].lo = (double) ((m[i].lo + g - 1) / g * g);
        r[i].hi = (double) (hi / g * g);
    }
}

int ob_dist_optimum(ob_dist_comm *comm, ob_dist_block blk, const ob_rank_model *m, long P, long B,
                    double hint, double *T)
{
    ob_check chk = { blk, m, NULL, B, 1, 0, 0, -1, -1, 0, 0, 0 };
    ob_extra extra = { ob_check_add, ob_check_read, ob_check_verdict, &chk };
    ob_dwf *r;
    ob_msg msg;
    double level = 0.0;
    int rc, at;

    if (OMNIBATCH_SUCCESS != (rc = ob_check_shape(P, B, 1))) {
        return rc;
    }
    if (NULL == (r = malloc((size_t) blk.n * sizeof *r))) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "distributed planner: no memory for %d ranks", blk.n);
    }
    ob_dwf_from_models(m, blk.n, B, 1, r);
    rc = ob_level_solve(comm, r, blk.n, B, hint, 0.0, &extra, &level);
    if (OMNIBATCH_SUCCESS == rc && NULL != T) {
        /* The step time: the level, or more where a lower bound alone takes longer. */
        msg.nsum = 0;
        msg.nmax = 0;
        at = ob_msg_max_at(&msg, 1);
        for (int i = 0; i < blk.n; i++) {
            ob_max_into(&msg.maxs[at], r[i].a + r[i].b * ob_dwf_x(&r[i], level));
        }
        rc = ob_msg_reduce(comm, &msg);
        *T = msg.maxs[at];
    }
    free(r);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The integer plan: threshold search and the scan                      */

/* Which ranks take one granule more (or, removing, one less): those whose
 * key is below below_key, and of those on tie_key the first need_tie in
 * index order (the last, removing), as the central planner's stable sort. */
typedef struct ob_select {
    long long deficit;           /* granules to hand out (< 0: to take back) */
    long long want;              /* |deficit| */
    long long below;             /* ranks known to come before the range searched */
    uint64_t klo, khi;           /* key range searched: the window (first round), then a bin */
    int round;
    int at_count, at_max, nbins;
    int done;
    uint64_t below_key;
    uint64_t tie_key;
    long long need_tie;
    long long ties;              /* ranks on tie_key */
} ob_select;

/* Bits of the distance d >= 1: 1 .. 64. */
static int ob_bits(uint64_t d)
{
    return 64 - __builtin_clzll(d);
}

/* The bin of key q in this round, in the order of the keys. */
static int ob_select_bin(const ob_select *s, uint64_t q)
{
    if (0 == s->round) {
        if (q < s->klo) {
            return OB_DIST_SIDE_BINS - ob_bits(s->klo - q);
        }
        if (q > s->khi) {
            return OB_DIST_SIDE_BINS + OB_DIST_FINE_BINS + ob_bits(q - s->khi) - 1;
        }
        return OB_DIST_SIDE_BINS
               + (int) ((ob_u128) (q - s->klo) * OB_DIST_FINE_BINS / ((ob_u128) (s->khi - s->klo) + 1));
    }
    if (q < s->klo || q > s->khi) {
        return -1;
    }
    return (int) ((ob_u128) (q - s->klo) * (ob_u128) s->nbins / ((ob_u128) (s->khi - s->klo) + 1));
}

/* The first round's window around the score of the level (negative when
 * removing: the window is mirrored with it). */
static void ob_select_window(ob_select *s, double score)
{
    double a = score - fabs(score) * OB_DIST_WINDOW_BELOW, b = score + fabs(score) * OB_DIST_WINDOW_ABOVE;

    if (score < 0.0) {
        a = score - fabs(score) * OB_DIST_WINDOW_ABOVE;
        b = score + fabs(score) * OB_DIST_WINDOW_BELOW;
    }
    s->klo = ob_dkey(a < b ? a : b);
    s->khi = ob_dkey(a < b ? b : a);
}

static void ob_select_prepare(ob_select *s, ob_msg *msg)
{
    s->nbins = 0 == s->round ? 2 * OB_DIST_SIDE_BINS + OB_DIST_FINE_BINS : OB_DIST_BINS;
    s->at_count = ob_msg_sum_at(msg, s->nbins);
    s->at_max = ob_msg_max_at(msg, 2 * s->nbins);
}

/* A rank's score: smaller goes first.  The key is the time with one
 * granule more, as the central planner's; removing, it is negated, so the
 * ranks with the largest keys give back first (its reverse pass). */
static void ob_select_add_key(const ob_select *s, ob_msg *msg, double score)
{
    int bin = ob_select_bin(s, ob_dkey(score));

    if (bin < 0) {
        return;
    }
    msg->sums[s->at_count + bin]++;
    ob_max_into(&msg->maxs[s->at_max + 2 * bin], -score);
    ob_max_into(&msg->maxs[s->at_max + 2 * bin + 1], score);
}

/* The reduced histogram: the bin the threshold falls in; done when all its
 * keys are equal (ties, ordered by index) or all of it is taken. */
static int ob_select_absorb(ob_select *s, const ob_msg *msg)
{
    long long before = s->below;
    int j;

    for (j = 0; j < s->nbins; j++) {
        long long cnt = msg->sums[s->at_count + j];

        if (before + cnt >= s->want) {
            break;
        }
        before += cnt;
    }
    if (j == s->nbins) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "planner: no room left for %lld granules",
                       s->want - before);
    }
    {
        long long cnt = msg->sums[s->at_count + j];
        double smin = -msg->maxs[s->at_max + 2 * j], smax = msg->maxs[s->at_max + 2 * j + 1];
        long long need = s->want - before;

        s->round++;
        if (need == cnt) {
            s->below_key = ob_dkey(smax) + 1;
            s->need_tie = 0;
            s->done = 1;
        } else if (smin == smax || s->round >= OB_DIST_MAX_ROUNDS) {
            s->below_key = ob_dkey(smin);
            s->tie_key = ob_dkey(smin);
            s->need_tie = need;
            s->ties = cnt;
            s->done = 1;
        } else {
            s->below = before;
            s->klo = ob_dkey(smin);
            s->khi = ob_dkey(smax);
        }
    }
    return OMNIBATCH_SUCCESS;
}

/* The block's part of one decision's integer plan. */
typedef struct ob_round_block {
    ob_dist_block blk;
    const ob_rank_model *m;      /* the models (keys) */
    const double *z;             /* targets in granules */
    const double *L, *H;         /* granule bounds */
    long *k;                     /* floors, then the plan in granules */
    long g;
    const long *current;         /* the plan held, whose offsets the same scan gives */
    long *cur_offset;
} ob_round_block;

static double ob_round_score(const ob_round_block *rb, const ob_select *s, int i)
{
    double t = rb->m[i].alpha + rb->m[i].beta * ((double) (rb->k[i] + 1) * (double) rb->g);

    return s->deficit >= 0 ? t : -t;
}

static int ob_round_eligible(const ob_round_block *rb, const ob_select *s, int i)
{
    return s->deficit >= 0 ? (double) rb->k[i] < rb->H[i] : (double) rb->k[i] > rb->L[i];
}

static void ob_round_histogram(const ob_round_block *rb, ob_select *s, ob_msg *msg)
{
    ob_select_prepare(s, msg);
    for (int i = 0; i < rb->blk.n; i++) {
        if (ob_round_eligible(rb, s, i)) {
            ob_select_add_key(s, msg, ob_round_score(rb, s, i));
        }
    }
}

/* Where rank i stands against the threshold: below it (moves for certain)
 * or on it (moves if early enough among the ties). */
static void ob_round_class(const ob_round_block *rb, const ob_select *s, int i, int *below, int *tie)
{
    int eligible = 0 != s->deficit && ob_round_eligible(rb, s, i);
    uint64_t q = eligible ? ob_dkey(ob_round_score(rb, s, i)) : 0;

    *below = eligible && q < s->below_key;
    *tie = eligible && s->need_tie > 0 && q == s->tie_key;
}

/* Of the ties before a rank, how many move: the first need_tie in index
 * order when adding, the last need_tie when removing (the central
 * planner's reverse pass). */
static long long ob_round_ties_moved(const ob_select *s, long long before)
{
    long long skipped = s->ties - s->need_tie;

    if (s->deficit >= 0) {
        return before < s->need_tie ? before : s->need_tie;
    }
    return before > skipped ? before - skipped : 0;
}

/* The granules each rank takes, and the offsets, from one scan. */
static int ob_round_scan(ob_dist_comm *comm, const ob_round_block *rb, const ob_select *s, long *next,
                         long *offset)
{
    int64_t v[4] = { 0, 0, 0, 0 };
    int64_t pre[4];
    long sign = s->deficit >= 0 ? 1 : -1;
    int below, tie, rc;

    for (int i = 0; i < rb->blk.n; i++) {
        ob_round_class(rb, s, i, &below, &tie);
        v[0] += rb->k[i];
        v[1] += below;
        v[2] += tie;
        v[3] += rb->current[i];
    }
    memcpy(pre, v, sizeof pre);
    comm->collectives++;
    comm->bytes += (long) sizeof v;
    if (OMNIBATCH_SUCCESS != (rc = comm->exscan(comm->ctx, pre, 4))) {
        return rc;
    }
    for (int i = 0; i < rb->blk.n; i++) {
        long long moved_before = pre[1] + ob_round_ties_moved(s, pre[2]);
        int moves;

        ob_round_class(rb, s, i, &below, &tie);
        moves = below || (tie && ob_round_ties_moved(s, pre[2] + 1) > ob_round_ties_moved(s, pre[2]));
        offset[i] = (long) ((pre[0] + sign * moved_before) * rb->g);
        next[i] = (rb->k[i] + sign * moves) * rb->g;
        pre[0] += rb->k[i];
        pre[1] += below;
        pre[2] += tie;
        rb->cur_offset[i] = (long) pre[3];
        pre[3] += rb->current[i];
    }
    return OMNIBATCH_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* ob_plan_decide, distributed                                          */

/* The first collective after the target: each rank's floor, the times of
 * the plan held, the oracle's step time, whether every target fits, and
 * the first histogram of the threshold search. */
typedef struct ob_decide_sums {
    int at;
    int at_max;
    long long floors;            /* sum of the floors, granules */
    double t_optimum;
    double t_current;
    int unfit;
} ob_decide_sums;

typedef struct ob_decider {
    ob_dist_comm *comm;
    const ob_planner_params *p;
    ob_dist_block blk;
    const ob_rank_model *m;
    long B;
    long Q;                      /* B / g */
    const long *current;
    ob_dwf *oracle;              /* n: the bounds as given */
    ob_dwf *shift;               /* n: granule problem of the shift, when needed */
    double *z;                   /* n: targets in granules */
    double *L, *H;               /* n: granule bounds */
    long *k;                     /* n */
    long *cur_offset;            /* n */
    double level_oracle;
    double level_plan;
    ob_select sel;
    ob_decide_sums ds;
    const ob_extra *floors_extra; /* rides on the collective of the floors (after them) */
    const ob_extra *final_extra; /* rides on the last collective */
    uint64_t digest;
} ob_decider;

static void ob_decider_floors(ob_decider *dc)
{
    for (int i = 0; i < dc->blk.n; i++) {
        double f = floor(dc->z[i]);

        f = f < dc->L[i] ? dc->L[i] : (f > dc->H[i] ? dc->H[i] : f);
        dc->k[i] = (long) f;
    }
}

/* One collective: floors, times, fit and the first histogram. */
static int ob_decider_first_round(ob_decider *dc, ob_round_block *rb, ob_msg *msg)
{
    ob_decide_sums *ds = &dc->ds;
    int rc;

    msg->nsum = 0;
    msg->nmax = 0;
    ds->at = ob_msg_sum_at(msg, 3);
    ds->at_max = ob_msg_max_at(msg, 2);
    ob_decider_floors(dc);
    if (NULL != dc->floors_extra) {
        dc->floors_extra->add(dc->floors_extra->ctx, msg);
    }
    for (int i = 0; i < dc->blk.n; i++) {
        const ob_dwf *r = &dc->oracle[i];
        int fits = dc->z[i] >= dc->L[i] && dc->z[i] <= dc->H[i];

        ob_long_add(&msg->sums[ds->at], dc->k[i]);
        msg->sums[ds->at + 2] += !fits;
        ob_max_into(&msg->maxs[ds->at_max], r->a + r->b * ob_dwf_x(r, dc->level_oracle));
        ob_max_into(&msg->maxs[ds->at_max + 1], ob_time_at(r->a, r->b, (double) dc->current[i]));
    }
    /* The histogram needs the deficit's sign, which this very collective
     * tells: both signs' histograms would double it, so adding (floors never
     * exceed the targets, which sum to Q) is assumed and checked below. */
    dc->sel.deficit = 1;
    dc->sel.round = 0;
    ob_select_window(&dc->sel, dc->level_plan);
    ob_round_histogram(rb, &dc->sel, msg);
    if (OMNIBATCH_SUCCESS != (rc = ob_msg_reduce(dc->comm, msg))) {
        return rc;
    }
    ds->floors = (long long) ob_long_value(&msg->sums[ds->at]);
    ds->unfit = 0 != msg->sums[ds->at + 2];
    ds->t_optimum = msg->maxs[ds->at_max];
    ds->t_current = msg->maxs[ds->at_max + 1];
    if (NULL != dc->floors_extra) {
        dc->floors_extra->read(dc->floors_extra->ctx, msg);
    }
    return OMNIBATCH_SUCCESS;
}

/* Where a target misses its granule bounds: shift all by one amount so
 * that they fit and sum to Q (water-filling with unit slopes), as the
 * central planner does. */
static int ob_decider_shift(ob_decider *dc)
{
    double level = 0.0;
    int rc;

    for (int i = 0; i < dc->blk.n; i++) {
        dc->shift[i].a = -dc->z[i];
        dc->shift[i].b = 1.0;
        dc->shift[i].lo = dc->L[i];
        dc->shift[i].hi = dc->H[i];
    }
    rc = ob_level_solve(dc->comm, dc->shift, dc->blk.n, dc->Q, 0.0, 0.0, NULL, &level);
    for (int i = 0; OMNIBATCH_SUCCESS == rc && i < dc->blk.n; i++) {
        dc->z[i] = ob_dwf_x(&dc->shift[i], level);
    }
    return rc;
}

/* The threshold: the first histogram rode with the floors; more rounds
 * until it is exact; a deficit below zero starts over with the other sign. */
static int ob_decider_select(ob_decider *dc, ob_round_block *rb, ob_msg *msg)
{
    ob_select *s = &dc->sel;
    long long deficit = (long long) dc->Q - dc->ds.floors;
    int rc;

    s->deficit = deficit;
    s->want = deficit >= 0 ? deficit : -deficit;
    s->below = 0;
    s->done = 0 == deficit;
    s->need_tie = 0;
    s->below_key = 0;
    if (deficit < 0) {
        s->round = 0;
        ob_select_window(s, -dc->level_plan);
        msg->nsum = 0;
        msg->nmax = 0;
        ob_round_histogram(rb, s, msg);
        if (OMNIBATCH_SUCCESS != (rc = ob_msg_reduce(dc->comm, msg))) {
            return rc;
        }
    }
    while (!s->done) {
        if (OMNIBATCH_SUCCESS != (rc = ob_select_absorb(s, msg))) {
            return rc;
        }
        if (s->done) {
            break;
        }
        msg->nsum = 0;
        msg->nmax = 0;
        ob_round_histogram(rb, s, msg);
        if (OMNIBATCH_SUCCESS != (rc = ob_msg_reduce(dc->comm, msg))) {
            return rc;
        }
    }
    return OMNIBATCH_SUCCESS;
}

/* Targets: the oracle on the bounds as given; with granularity, the level
 * again on the bounds rounded to it; then the proportional step. */
static int ob_decider_targets(ob_decider *dc, double hint, const ob_extra *first_extra)
{
    const ob_rank_model *m = dc->m;
    long g = dc->p->granularity;
    int rc;

    ob_dwf_from_models(m, dc->blk.n, dc->B, 1, dc->oracle);
    rc = ob_level_solve(dc->comm, dc->oracle, dc->blk.n, dc->B, hint, 0.0, first_extra, &dc->level_oracle);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    dc->level_plan = dc->level_oracle;
    if (g > 1) {
        ob_dwf_from_models(m, dc->blk.n, dc->B, g, dc->shift);
        rc = ob_level_solve(dc->comm, dc->shift, dc->blk.n, dc->B, dc->level_oracle, 0.0, NULL, &dc->level_plan);
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
    }
    for (int i = 0; i < dc->blk.n; i++) {
        const ob_dwf *r = g > 1 ? &dc->shift[i] : &dc->oracle[i];
        double target = ob_dwf_x(r, dc->level_plan);
        double cur = (double) dc->current[i];

        dc->z[i] = (cur + dc->p->gain * (target - cur)) / (double) g;
        dc->L[i] = r->lo / (double) g;
        dc->H[i] = r->hi / (double) g;
    }
    return OMNIBATCH_SUCCESS;
}

static int ob_decider_alloc(ob_decider *dc, int n)
{
    size_t bytes = (size_t) n * (2 * sizeof(ob_dwf) + 3 * sizeof(double) + 2 * sizeof(long));
    char *p = malloc(bytes);

    if (NULL == p) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "distributed planner: no memory for %d ranks", n);
    }
    dc->oracle = (ob_dwf *) (void *) p;
    dc->shift = dc->oracle + n;
    dc->z = (double *) (void *) (dc->shift + n);
    dc->L = dc->z + n;
    dc->H = dc->L + n;
    dc->k = (long *) (void *) (dc->H + n);
    dc->cur_offset = dc->k + n;
    return OMNIBATCH_SUCCESS;
}

/* The final collective: did anything change, and the candidate's step time. */
static int ob_decider_final(ob_decider *dc, const long *next, ob_decision *d)
{
    ob_msg msg;
    int at, at_max, rc;

    msg.nsum = 0;
    msg.nmax = 0;
    at = ob_msg_sum_at(&msg, 1);
    at_max = ob_msg_max_at(&msg, 1);
    if (NULL != dc->final_extra) {
        dc->final_extra->add(dc->final_extra->ctx, &msg);
    }
    for (int i = 0; i < dc->blk.n; i++) {
        msg.sums[at] += next[i] != dc->current[i];
        ob_max_into(&msg.maxs[at_max], ob_time_at(dc->m[i].alpha, dc->m[i].beta, (double) next[i]));
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_msg_reduce(dc->comm, &msg))) {
        return rc;
    }
    if (NULL != dc->final_extra) {
        dc->final_extra->read(dc->final_extra->ctx, &msg);
    }
    d->t_current = dc->ds.t_current;
    d->t_optimum = dc->ds.t_optimum;
    d->t_candidate = msg.maxs[at_max];
    d->changed = 0 != msg.sums[at] && d->t_current - d->t_candidate > dc->p->deadband * d->t_current;
    d->t_next = d->changed ? d->t_candidate : d->t_current;
    return OMNIBATCH_SUCCESS;
}

static void ob_decider_digest(ob_decider *dc, const ob_decision *d)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    h = ob_digest_double(h, dc->level_oracle);
    h = ob_digest_double(h, dc->level_plan);
    h = ob_digest_add(h, (uint64_t) dc->ds.floors);
    h = ob_digest_add(h, dc->sel.below_key);
    h = ob_digest_add(h, dc->sel.tie_key);
    h = ob_digest_add(h, (uint64_t) dc->sel.need_tie);
    h = ob_digest_double(h, d->t_current);
    h = ob_digest_double(h, d->t_candidate);
    h = ob_digest_double(h, d->t_optimum);
    dc->digest = ob_digest_add(h, (uint64_t) d->changed);
}

/* Targets, floors, threshold, scan, final: the decision on checked input. */
static int ob_decider_run(ob_decider *dc, double *hint, const ob_extra *first_extra, long *next, long *offset,
                          ob_decision *d)
{
    ob_round_block rb = { dc->blk, dc->m, dc->z, dc->L, dc->H, dc->k, dc->p->granularity, dc->current,
                          dc->cur_offset };
    ob_msg msg;
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_decider_targets(dc, *hint, first_extra))
        || OMNIBATCH_SUCCESS != (rc = ob_decider_first_round(dc, &rb, &msg))) {
        return rc;
    }
    if (dc->ds.unfit) {
        if (OMNIBATCH_SUCCESS != (rc = ob_decider_shift(dc))
            || OMNIBATCH_SUCCESS != (rc = ob_decider_first_round(dc, &rb, &msg))) {
            return rc;
        }
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_decider_select(dc, &rb, &msg))
        || OMNIBATCH_SUCCESS != (rc = ob_round_scan(dc->comm, &rb, &dc->sel, next, offset))
        || OMNIBATCH_SUCCESS != (rc = ob_decider_final(dc, next, d))) {
        return rc;
    }
    if (!d->changed) {
        memcpy(next, dc->current, (size_t) dc->blk.n * sizeof *next);
        memcpy(offset, dc->cur_offset, (size_t) dc->blk.n * sizeof *offset);
    }
    *hint = dc->level_oracle;
    ob_decider_digest(dc, d);
    return OMNIBATCH_SUCCESS;
}

int ob_dist_plan_decide(ob_dist_comm *comm, const ob_planner_params *p, ob_dist_block blk,
                        const ob_rank_model *m, long P, long B, const long *current, long *next,
                        long *offset, double *hint, ob_decision *d)
{
    ob_decider dc;
    ob_check chk;
    ob_extra extra = { ob_check_add, ob_check_read, ob_check_verdict, &chk };
    ob_decision dec;
    int rc;

    memset(&dec, 0, sizeof dec);
    if (OMNIBATCH_SUCCESS != (rc = ob_plan_check_params(p))
        || OMNIBATCH_SUCCESS != (rc = ob_check_shape(P, B, p->granularity))) {
        return rc;
    }
    memset(&dc, 0, sizeof dc);
    memset(&chk, 0, sizeof chk);
    dc.comm = comm;
    dc.p = p;
    dc.blk = blk;
    dc.m = m;
    dc.B = B;
    dc.Q = B / p->granularity;
    dc.current = current;
    chk.blk = blk;
    chk.m = m;
    chk.current = current;
    chk.B = B;
    chk.g = p->granularity;
    if (OMNIBATCH_SUCCESS != (rc = ob_decider_alloc(&dc, blk.n))) {
        return rc;
    }
    /* The check rides on the first collective; its verdict stops the
     * search before anything computed from what it rejects is used. */
    rc = ob_decider_run(&dc, hint, &extra, next, offset, &dec);
    free(dc.oracle);
    if (OMNIBATCH_SUCCESS == rc && NULL != d) {
        *d = dec;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* The expected step time of a plan                                     */
/*
 * E[max_i t_i] with t_i normal around mu_i with deviation s_i (the model's
 * error at the rank's batch), as the controller judges a plan, from sums:
 * F(x) = P(max <= x) = prod_i Phi((x - mu_i) / s_i), so -log F(x) is a sum
 * over the ranks, which travels in fixed point at OB_EMAX_POINTS levels x;
 * E = L + integral from L to U of (1 - F), L = max_i (mu_i - 8 s_i) below
 * which F vanishes and U = max_i (mu_i + 8 s_i) above which it is 1.  The
 * levels crowd near M = max_i mu_i, where F rises (quartic spacing), so a
 * few ranks with large errors widen the range without blurring the rise.
 * Two collectives: the three maxima, then the sums.
 */

#define OB_EMAX_UP 96            /* levels from M to U */
#define OB_EMAX_DOWN 31          /* levels from L to M */
#define OB_EMAX_POINTS (OB_EMAX_UP + OB_EMAX_DOWN + 1)
#define OB_EMAX_TAIL 8.0         /* deviations beyond which a rank's time is never seen */
#define OB_EMAX_CAP 50.0         /* -log Phi is capped here: e^-50 is nothing */
#define OB_EMAX_BITS 40          /* fixed point of -log Phi */
/* Beyond these z, -log Phi(z) is below 2^-OB_EMAX_BITS (0 in fixed point) or above OB_EMAX_CAP:
 * no need to evaluate it, the sum is the same to the bit. */
#define OB_EMAX_Z_NONE 8.5
#define OB_EMAX_Z_ALL (-10.5)

typedef struct ob_emax {
    double M, L, U;
    int at;
    int at_sum;
    double value;
} ob_emax;

/* One rank's mean and the ends of its tails (mu -+ OB_EMAX_TAIL s). */
static void ob_emax_bounds_add(ob_emax *e, ob_msg *msg, double mu, double low, double high)
{
    ob_max_into(&msg->maxs[e->at], mu);
    ob_max_into(&msg->maxs[e->at + 1], low);
    ob_max_into(&msg->maxs[e->at + 2], high);
}

static void ob_emax_bounds_read(ob_emax *e, const ob_msg *msg)
{
    e->M = msg->maxs[e->at];
    e->L = msg->maxs[e->at + 1];
    e->U = msg->maxs[e->at + 2];
}

/* The levels, the same on every rank (IEEE operations on the same maxima). */
static double ob_emax_level(const ob_emax *e, int k)
{
    if (k < OB_EMAX_DOWN) {
        double f = (double) (OB_EMAX_DOWN - k) / (double) OB_EMAX_DOWN;

        return e->M - (e->M - e->L) * (f * f * f * f);
    }
    {
        double f = (double) (k - OB_EMAX_DOWN) / (double) OB_EMAX_UP;

        return e->M + (e->U - e->M) * (f * f * f * f);
    }
}

/* -log Phi((x - mu) / s), capped, in fixed point (local: only this rank computes its own). */
static int64_t ob_emax_term(double x, double mu, double s)
{
    double v;

    if (!(s > 0.0)) {
        v = x >= mu ? 0.0 : OB_EMAX_CAP;
    } else {
        double z = (x - mu) / s;

        if (z >= OB_EMAX_Z_NONE) {
            return 0;
        }
        if (z <= OB_EMAX_Z_ALL) {
            return (int64_t) ldexp(OB_EMAX_CAP, OB_EMAX_BITS);
        }
        v = z >= 0.0 ? -log1p(-0.5 * erfc(z * M_SQRT1_2)) : -log(0.5 * erfc(-z * M_SQRT1_2));
        v = v < OB_EMAX_CAP ? v : OB_EMAX_CAP;
    }
    return (int64_t) ldexp(v, OB_EMAX_BITS);
}

static void ob_emax_grid_add(const ob_emax *e, ob_msg *msg, double mu, double s)
{
    if (!(e->U > e->M)) {
        return;
    }
    for (int k = 0; k < OB_EMAX_POINTS; k++) {
        msg->sums[e->at_sum + k] += ob_emax_term(ob_emax_level(e, k), mu, s);
    }
}

/* The integral, by trapezoids, from the reduced sums. */
static void ob_emax_grid_read(ob_emax *e, const ob_msg *msg)
{
    double area = 0.0, x0 = 0.0, g0 = 0.0;

    if (!(e->U > e->M)) {
        e->value = e->M;
        return;
    }
    for (int k = 0; k < OB_EMAX_POINTS; k++) {
        double x = ob_emax_level(e, k);
        double g = 1.0 - ob_exp_nonpositive(-ldexp((double) msg->sums[e->at_sum + k], -OB_EMAX_BITS));

        if (k > 0) {
            area += 0.5 * (g + g0) * (x - x0);
        }
        x0 = x;
        g0 = g;
    }
    e->value = ob_emax_level(e, 0) + area;
}

/* ------------------------------------------------------------------ */
/* The controller's decision, distributed                               */

/* Not an error: some rank has no model yet (the warm-up), no decision. */
#define OB_DIST_WARMUP (-1000)

/* What rides on the first collective of a controller decision: the
 * records' checks, the warm-up, the mean error and the expected step time
 * of the plan held, besides the planner's checks. */
typedef struct ob_ctl_first {
    ob_check chk;
    ob_dist_state *st;           /* its reduction is set from the records */
    const ob_rank_record *rec;
    const long *plan;
    const double *err;           /* at the plan held */
    int at, at_max;
    long bad_record;             /* lowest rank with an unusable record, -1: none */
    int warmup;
    int broken;                  /* the plan breaks the bounds: replan */
    double mean_error;
    ob_emax now;                 /* expected step time of the plan held: bounds here, sums next */
    ob_msg *grid;                /* where the sums of the next collective go */
    const ob_rank_record *raw;   /* the records as measured, for the next histogram (NULL: none) */
    const ob_pool_seen *seen;    /* where each stood against its peers (ob_ctl_pool()) */
    int at_pool;
} ob_ctl_first;

static int ob_record_ok(const ob_rank_record *r)
{
    return r->samples >= 0 && r->rel_error >= 0.0 && r->rel_error <= 1e6 && r->level_error >= 0.0
           && r->level_error <= 1e6 && r->share_error >= 0.0 && r->share_error <= 1e6
           && r->blocked_mean >= 0.0 && r->blocked_mean <= OB_CTL_MAX_BLOCKED && r->mean_batch >= 0.0
           && r->mean_batch <= (double) OB_PLAN_MAX_BATCH && (long) r->lo == r->lo && (long) r->hi == r->hi
           && r->throttled_share <= 1.0;
}

/* A rank's time at batch b, its model's mean. */
static double ob_model_mean(const ob_rank_record *r, double b)
{
    return ob_time_at(r->alpha, r->beta, b);
}

/* The next histogram of pooled speeds (ob_pool.h), on the first
 * collective: from the records as measured, at the batches held. */
static void ob_ctl_pool_add(ob_ctl_first *f, ob_msg *msg)
{
    double bref = (double) f->chk.B / (double) f->st->nranks;

    f->at_pool = ob_msg_sum_at(msg, OB_POOL_SUMS);
    for (int i = 0; i < f->chk.blk.n; i++) {
        if (ob_record_ok(&f->raw[i])) {
            ob_pool_add(&msg->sums[f->at_pool], &f->raw[i], f->plan[i], bref, &f->seen[i]);
        }
    }
}

static void ob_ctl_pool_read(ob_ctl_first *f, const ob_msg *msg)
{
    memcpy(f->st->pool.sums, &msg->sums[f->at_pool], sizeof f->st->pool.sums);
    ob_pool_finish(&f->st->pool, (double) f->chk.B / (double) f->st->nranks);
}

static void ob_ctl_first_add(void *ctx, ob_msg *msg)
{
    ob_ctl_first *f = ctx;

    if (NULL != f->raw) {
        ob_ctl_pool_add(f, msg);
    }
    ob_check_add(&f->chk, msg);
    f->at = ob_msg_sum_at(msg, OB_FIX_LIMBS + 3);
    f->at_max = ob_msg_max_at(msg, 2);
    f->now.at = ob_msg_max_at(msg, 3);
    for (int i = 0; i < f->chk.blk.n; i++) {
        const ob_rank_record *r = &f->rec[i];
        long p = f->plan[i];

        if (!ob_record_ok(r)) {
            ob_max_into(&msg->maxs[f->at_max], -(double) (f->chk.blk.first + i));
        }
        /* A starved rank's stalls are not the transfer (ob_controller_reduction()). */
        ob_max_into(&msg->maxs[f->at_max + 1], -r->blocked_mean * (1.0 - ob_starved_record_share(r)));
        msg->sums[f->at + OB_FIX_LIMBS] += 0 == r->samples;
        msg->sums[f->at + OB_FIX_LIMBS + 1] += p < r->lo || p > r->hi || p > f->chk.B;
        msg->sums[f->at + OB_FIX_LIMBS + 2] += p;
        ob_fix_add(&msg->sums[f->at], f->err[i]);
        {
            double mu = ob_model_mean(r, (double) p);
            double s = OB_EMAX_TAIL * (f->err[i] * mu);

            ob_emax_bounds_add(&f->now, msg, mu, mu - s, mu + s);
        }
    }
}

static void ob_ctl_first_read(void *ctx, const ob_msg *msg)
{
    ob_ctl_first *f = ctx;

    if (NULL != f->raw) {
        ob_ctl_pool_read(f, msg);
    }
    ob_check_read(&f->chk, msg);
    f->bad_record = isfinite(msg->maxs[f->at_max]) ? (long) -msg->maxs[f->at_max] : -1;
    /* The least mean blocked time: what the reduction costs every rank (ob_controller_reduction()). */
    f->st->reduction = -msg->maxs[f->at_max + 1] > 0.0 ? -msg->maxs[f->at_max + 1] : 0.0;
    f->warmup = 0 != msg->sums[f->at + OB_FIX_LIMBS];
    f->broken = 0 != msg->sums[f->at + OB_FIX_LIMBS + 1] || f->chk.B != msg->sums[f->at + OB_FIX_LIMBS + 2];
    f->mean_error = ob_fix_double(ob_fix_value(&msg->sums[f->at])) / (double) f->st->nranks;
    ob_emax_bounds_read(&f->now, msg);
}

static int ob_ctl_first_verdict(void *ctx)
{
    const ob_ctl_first *f = ctx;

    if (f->bad_record >= 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %ld: samples, errors, mean batch or bounds out of "
                       "range (distributed decision)", f->bad_record);
    }
    if (f->warmup) {
        return OB_DIST_WARMUP;
    }
    return ob_check_verdict((void *) &f->chk);
}

/* The candidate's expected step time in the planner's last collective:
 * every rank's batch in it is its floor or one granule either side, so the
 * bounds of its grid ride on the floors' collective (from those three
 * batches: the least of the lower tails, the largest mean and upper tail)
 * and its sums on the last one, once the batches are known. */
typedef struct ob_ctl_final {
    ob_dist_block blk;
    const ob_rank_record *rec;
    const long *next;
    const long *floors;          /* granules */
    long g;
    ob_emax then;
} ob_ctl_final;

static void ob_ctl_floors_add(void *ctx, ob_msg *msg)
{
    ob_ctl_final *f = ctx;

    f->then.at = ob_msg_max_at(msg, 3);
    for (int i = 0; i < f->blk.n; i++) {
        double low = HUGE_VAL, high = -HUGE_VAL;

        for (long d = -1; d <= 1; d++) {
            double b = (double) ((f->floors[i] + d) * f->g);
            double mu, s;

            if (b < 0.0) {
                continue;
            }
            mu = ob_model_mean(&f->rec[i], b);
            s = OB_EMAX_TAIL * (ob_record_error_at(&f->rec[i], b) * mu);
            low = mu - s < low ? mu - s : low;
            high = mu + s > high ? mu + s : high;
        }
        ob_emax_bounds_add(&f->then, msg, ob_model_mean(&f->rec[i], (double) (f->floors[i] * f->g)), low, high);
    }
}

static void ob_ctl_floors_read(void *ctx, const ob_msg *msg)
{
    ob_emax_bounds_read(&((ob_ctl_final *) ctx)->then, msg);
}

static void ob_ctl_final_add(void *ctx, ob_msg *msg)
{
    ob_ctl_final *f = ctx;

    f->then.at_sum = ob_msg_sum_at(msg, OB_EMAX_POINTS);
    for (int i = 0; i < f->blk.n; i++) {
        double b = (double) f->next[i];
        double mu = ob_model_mean(&f->rec[i], b);

        ob_emax_grid_add(&f->then, msg, mu, ob_record_error_at(&f->rec[i], b) * mu);
    }
}

static void ob_ctl_final_read(void *ctx, const ob_msg *msg)
{
    ob_emax_grid_read(&((ob_ctl_final *) ctx)->then, msg);
}

/* The plan held's sums ride on the planner's first collective. */
static void ob_ctl_now_add(void *ctx, ob_msg *msg)
{
    ob_ctl_first *f = ctx;

    f->now.at_sum = ob_msg_sum_at(msg, OB_EMAX_POINTS);
    for (int i = 0; i < f->chk.blk.n; i++) {
        double mu = ob_model_mean(&f->rec[i], (double) f->plan[i]);

        ob_emax_grid_add(&f->now, msg, mu, f->err[i] * mu);
    }
}

static void ob_ctl_now_read(void *ctx, const ob_msg *msg)
{
    ob_emax_grid_read(&((ob_ctl_first *) ctx)->now, msg);
}

int ob_dist_init(ob_dist_state *st, long P, long B, const ob_planner_params *params)
{
    int rc;

    memset(st, 0, sizeof *st);
    if (OMNIBATCH_SUCCESS != (rc = ob_plan_check_params(params))
        || OMNIBATCH_SUCCESS != (rc = ob_check_shape(P, B, params->granularity))) {
        return rc;
    }
    st->nranks = P;
    st->global_batch = B;
    st->params = *params;
    st->spread = ob_max_normal_spread((int) P);
    st->refine_error = OB_CTL_MAX_ERROR;
    st->pooling = 1;
    return OMNIBATCH_SUCCESS;
}

/* Scratch of one controller decision. */
typedef struct ob_ctl_work {
    ob_rank_model *models;       /* n: hedged models with their bounds */
    double *err;                 /* n: at the targets */
    double *err_plan;            /* n: at the plan held */
    ob_dwf *wf;                  /* n */
    long *next;                  /* n */
    long *off;                   /* n */
    ob_rank_record *pooled;      /* n: the records planned on */
    ob_pool_seen *seen;          /* n: where each stood against its peers */
} ob_ctl_work;

static int ob_ctl_work_alloc(ob_ctl_work *w, int n)
{
    size_t bytes = (size_t) n * (sizeof(ob_rank_model) + sizeof(ob_dwf) + 2 * sizeof(double) + 2 * sizeof(long)
                                 + sizeof(ob_rank_record) + sizeof(ob_pool_seen));
    char *p = malloc(bytes);

    if (NULL == p) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "distributed decision: no memory for %d ranks", n);
    }
    w->pooled = (ob_rank_record *) (void *) p;
    w->models = (ob_rank_model *) (void *) (w->pooled + n);
    w->wf = (ob_dwf *) (void *) (w->models + n);
    w->err = (double *) (void *) (w->wf + n);
    w->err_plan = w->err + n;
    w->next = (long *) (void *) (w->err_plan + n);
    w->off = w->next + n;
    w->seen = (ob_pool_seen *) (void *) (w->off + n);
    return OMNIBATCH_SUCCESS;
}

/* Each model scaled by 1 + spread * err (ob_controller.h: the hedge), with the record's bounds. */
static void ob_ctl_hedge(const ob_dist_state *st, int n, const ob_rank_record *rec, const double *err,
                         ob_rank_model *m)
{
    for (int i = 0; i < n; i++) {
        double f = 1.0 + st->spread * err[i];

        m[i].alpha = rec[i].alpha * f < OB_PLAN_MAX_ALPHA ? rec[i].alpha * f : OB_PLAN_MAX_ALPHA;
        m[i].beta = rec[i].beta * f < OB_PLAN_MAX_BETA ? rec[i].beta * f : OB_PLAN_MAX_BETA;
        m[i].lo = (long) rec[i].lo;
        m[i].hi = (long) rec[i].hi;
    }
}

/* The trust region of ob_controller.h on the upper bounds. */
static void ob_ctl_trust(const ob_dist_state *st, int n, const long *plan, ob_rank_model *m)
{
    long g = st->params.granularity;
    double step = OB_CTL_GROWTH_SHARE * (double) st->global_batch / (double) st->nranks;

    for (int i = 0; i < n; i++) {
        double b = (double) plan[i];
        double cap = OB_CTL_MAX_GROWTH * b > b + step ? OB_CTL_MAX_GROWTH * b : b + step;
        double units = -floor(-cap / (double) g);

        if (units * (double) g < (double) m[i].hi) {
            m[i].hi = (long) units * g;
        }
    }
}

/* First collective(s): the checks and the optimum of the models hedged at
 * the plan held; then the models hedged where that optimum puts each rank. */
static int ob_ctl_prepare(ob_dist_state *st, ob_dist_comm *comm, ob_dist_block blk, const ob_rank_record *rec,
                          const ob_rank_record *raw, const long *plan, ob_ctl_work *w, ob_ctl_first *first,
                          double *level)
{
    ob_extra extra = { ob_ctl_first_add, ob_ctl_first_read, ob_ctl_first_verdict, first };
    int rc;

    for (int i = 0; i < blk.n; i++) {
        w->err_plan[i] = ob_record_ok(&rec[i]) ? ob_record_error_at(&rec[i], (double) plan[i]) : 0.0;
    }
    ob_ctl_hedge(st, blk.n, rec, w->err_plan, w->models);
    memset(first, 0, sizeof *first);
    first->chk.blk = blk;
    first->chk.m = w->models;
    first->chk.B = st->global_batch;
    first->chk.g = st->params.granularity;
    first->st = st;
    first->rec = rec;
    first->plan = plan;
    first->err = w->err_plan;
    first->raw = st->pooling ? raw : NULL;
    first->seen = w->seen;
    ob_dwf_from_models(w->models, blk.n, st->global_batch, 1, w->wf);
    rc = ob_level_solve(comm, w->wf, blk.n, st->global_batch, st->hint_oracle, OB_DIST_PLACE_TOL, &extra,
                        level);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    for (int i = 0; i < blk.n; i++) {
        w->err[i] = ob_record_error_at(&rec[i], ob_dwf_x(&w->wf[i], *level));
    }
    ob_ctl_hedge(st, blk.n, rec, w->err, w->models);
    if (!first->broken) {
        ob_ctl_trust(st, blk.n, plan, w->models);
    }
    return OMNIBATCH_SUCCESS;
}

/* The refining band of ob_controller.h. */
static double ob_ctl_band(ob_dist_state *st, double error)
{
    double deadband = st->params.deadband;

    st->refining = st->follow_up
                   || (error < OB_CTL_REFINE_PRECISION * st->refine_error
                       && st->spread * error > OB_CTL_REFINE_FLOOR * deadband);
    return st->refining ? OB_CTL_REFINE_BAND * deadband : deadband;
}

/* The planner's step on the models hedged at the targets, and the verdict on it. */
static int ob_ctl_decide(ob_dist_state *st, ob_dist_comm *comm, ob_dist_block blk, const ob_rank_record *rec,
                         long *plan, long *offset, ob_ctl_work *w, ob_ctl_first *first, ob_decision *d,
                         ob_dist_trace *trace)
{
    ob_planner_params p = st->params;
    ob_ctl_final fin;
    ob_extra extra = { ob_ctl_final_add, ob_ctl_final_read, NULL, &fin };
    ob_extra floors_extra = { ob_ctl_floors_add, ob_ctl_floors_read, NULL, &fin };
    ob_extra now_extra = { ob_ctl_now_add, ob_ctl_now_read, NULL, first };
    ob_decider dc;
    ob_decision inner;
    double band = ob_ctl_band(st, first->mean_error);
    int rc;

    memset(&fin, 0, sizeof fin);
    fin.blk = blk;
    fin.rec = rec;
    fin.next = w->next;
    p.deadband = 0.0;
    p.gain = first->broken ? 1.0 : p.gain;
    memset(&dc, 0, sizeof dc);
    memset(&inner, 0, sizeof inner);
    dc.comm = comm;
    dc.p = &p;
    dc.blk = blk;
    dc.m = w->models;
    dc.B = st->global_batch;
    dc.Q = st->global_batch / p.granularity;
    dc.current = plan;
    dc.final_extra = &extra;
    dc.floors_extra = &floors_extra;
    if (OMNIBATCH_SUCCESS != (rc = ob_decider_alloc(&dc, blk.n))) {
        return rc;
    }
    fin.floors = dc.k;
    fin.g = p.granularity;
    rc = ob_decider_run(&dc, &st->hint_plan, &now_extra, w->next, w->off, &inner);
    if (OMNIBATCH_SUCCESS == rc) {
        double now = first->now.value, then = inner.changed ? fin.then.value : now;

        d->changed = first->broken || (inner.changed && now - then > band * (now + st->reduction));
        d->t_current = now;
        d->t_candidate = then;
        d->t_next = d->changed ? then : now;
        d->t_optimum = inner.t_optimum;
        st->inner = inner;
        for (int i = 0; NULL != trace && i < blk.n; i++) {
            trace[i].model = w->models[i];
            trace[i].current = plan[i];
            trace[i].candidate = w->next[i];
        }
        if (d->changed) {
            memcpy(plan, w->next, (size_t) blk.n * sizeof *plan);
        }
        memcpy(offset, d->changed ? w->off : dc.cur_offset, (size_t) blk.n * sizeof *offset);
        st->digest = ob_digest_double(ob_digest_double(dc.digest, now), then);
        st->digest = ob_digest_add(st->digest, (uint64_t) d->changed);
        if (d->changed || st->refining) {
            st->refine_error = first->mean_error;
        }
        st->follow_up = d->changed;
    }
    free(dc.oracle);
    return rc;
}

/* The block's records pooled with their peers in the last decision's
 * histogram (ob_pool.h), at the batches held. */
static const ob_rank_record *ob_ctl_pool(ob_dist_state *st, ob_dist_block blk, const ob_rank_record *rec,
                                         const long *plan, ob_ctl_work *w)
{
    st->pooled = 0;
    for (int i = 0; i < blk.n; i++) {
        w->pooled[i] = rec[i];
        w->seen[i].known = 0;
        if (ob_record_ok(&rec[i])) {
            st->pooled += ob_pool_apply(&st->pool, &rec[i], plan[i], &w->pooled[i], &w->seen[i]);
        }
    }
    return w->pooled;
}

int ob_dist_update(ob_dist_state *st, ob_dist_comm *comm, ob_dist_block blk, const ob_rank_record *rec,
                   long *plan, long *offset, ob_decision *d, ob_dist_trace *trace)
{
    const ob_rank_record *raw;
    ob_ctl_work w;
    ob_ctl_first first;
    ob_decision dec;
    double level = 0.0;
    int rc;

    memset(&dec, 0, sizeof dec);
    memset(&w, 0, sizeof w);
    if (NULL != d) {
        *d = dec;
    }
    if (blk.n < 1 || NULL == rec || NULL == plan || NULL == offset) {
        return ob_fail(OMNIBATCH_ERR_ARG, "distributed decision: no ranks, records, plan or offsets given");
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_ctl_work_alloc(&w, blk.n))) {
        return rc;
    }
    raw = rec;
    if (st->pooling) {
        rec = ob_ctl_pool(st, blk, rec, plan, &w);
    }
    rc = ob_ctl_prepare(st, comm, blk, rec, raw, plan, &w, &first, &level);
    if (OMNIBATCH_SUCCESS == rc) {
        /* The planner's level moves with this one: the trust region and the
         * second hedge kept it at the last decision's ratio to it. */
        st->hint_plan = st->hint_oracle > 0.0 && st->hint_plan > 0.0 ? level * (st->hint_plan / st->hint_oracle)
                                                                      : level;
        st->hint_oracle = level;
        rc = ob_ctl_decide(st, comm, blk, rec, plan, offset, &w, &first, &dec, trace);
    }
    free(w.pooled);
    if (OB_DIST_WARMUP == rc) {
        return OMNIBATCH_SUCCESS;
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    st->digest = ob_digest_double(st->digest, level);
    st->decisions++;
    st->changes += dec.changed;
    st->last = dec;
    if (NULL != d) {
        *d = dec;
    }
    return OMNIBATCH_SUCCESS;
}
