/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The planner against independent references: bisection on the water level
 * in long double for the continuous optimum, and the exact integer minimax
 * by greedy unit-by-unit assignment for small cases; every invariant on
 * thousands of random rank sets; every refusal with its detail line.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "ob_planner.h"
#include "ob_rng.h"

#define MAXP 64

/* ------------------------------------------------------------------ */
/* Seeded randomness                                                   */

/* The project's generator (ob_rng.h): splitmix64 for a seeded stream. */
static uint64_t rng_next(uint64_t *s)
{
    return ob_rng_splitmix64(s);
}

static double rng_uniform(uint64_t *s)
{
    return ob_rng_unit(ob_rng_splitmix64(s));
}

static long rng_range(uint64_t *s, long lo, long hi)
{
    return lo + (long) (rng_next(s) % (uint64_t) (hi - lo + 1));
}

/* ------------------------------------------------------------------ */
/* References                                                           */

static long high_of(const ob_rank_model *m, long B)
{
    return m->hi < B ? m->hi : B;
}

static long double ref_x(const ob_rank_model *m, long B, long double T)
{
    long double x = (T - (long double) m->alpha) / (long double) m->beta;
    long double lo = (long double) m->lo;
    long double hi = (long double) high_of(m, B);

    return x < lo ? lo : (x > hi ? hi : x);
}

static long double ref_sum(const ob_rank_model *m, int P, long B, long double T)
{
    long double s = 0.0L;

    for (int i = 0; i < P; i++) {
        s += ref_x(&m[i], B, T);
    }
    return s;
}

/* The least water level with sum >= B by bisection in long double until
 * the bracket is 1e-15 relative (or cannot shrink), then the step time of
 * that split.  Shares nothing with the planner's breakpoint search. */
static long double ref_optimum(const ob_rank_model *m, int P, long B)
{
    long double lo = INFINITY, hi = -INFINITY, t = 0.0L;

    for (int i = 0; i < P; i++) {
        long double a = (long double) m[i].alpha + (long double) m[i].beta * (long double) m[i].lo;
        long double b = (long double) m[i].alpha + (long double) m[i].beta * (long double) high_of(&m[i], B);

        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    if (ref_sum(m, P, B, lo) < (long double) B) {
        while (hi - lo > 1e-15L * hi) {
            long double mid = 0.5L * (lo + hi);

            if (mid <= lo || mid >= hi) {
                break;
            }
            if (ref_sum(m, P, B, mid) < (long double) B) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo = hi;
    }
    for (int i = 0; i < P; i++) {
        long double ti = (long double) m[i].alpha + (long double) m[i].beta * ref_x(&m[i], B, lo);

        t = ti > t ? ti : t;
    }
    return t;
}

/* A rank's granule bounds, as an ordinary rank or as the carrier of r. */
static void ref_granules(const ob_rank_model *m, long B, long g, long shift, long *L, long *H)
{
    long lo = m->lo - shift;
    long hi = high_of(m, B) - shift;

    *L = lo <= 0 ? 0 : (lo + g - 1) / g;
    *H = hi < 0 ? -1 : hi / g;
}

/*
 * The exact integer minimax under the granularity rule: for each choice of
 * the rank that carries r = B mod g, start every rank at its lower bound in
 * granules and give the remaining granules one at a time to the rank whose
 * time after taking it is least.  For a max of nondecreasing functions
 * under a sum constraint this greedy order is optimal (any value it reaches
 * is reachable by an optimal plan's level set).  Returns INFINITY when no
 * plan exists.
 */
static double ref_integer_optimum(const ob_rank_model *m, int P, long B, long g)
{
    long r = B % g, Q = B / g;
    double best = INFINITY;

    for (int c = (0 == r ? -1 : 0); c < (0 == r ? 0 : P); c++) {
        long k[MAXP], L[MAXP], H[MAXP], left = Q;
        double t = 0.0;
        int ok = 1;

        for (int i = 0; i < P; i++) {
            ref_granules(&m[i], B, g, i == c ? r : 0, &L[i], &H[i]);
            ok = ok && L[i] <= H[i];
            k[i] = L[i];
            left -= L[i];
        }
        if (!ok || left < 0) {
            continue;
        }
        for (; left > 0; left--) {
            int pick = -1;
            double tp = INFINITY;

            for (int i = 0; i < P; i++) {
                double ti = m[i].alpha + m[i].beta * (double) (g * (k[i] + 1) + (i == c ? r : 0));

                if (k[i] < H[i] && ti < tp) {
                    tp = ti;
                    pick = i;
                }
            }
            if (pick < 0) {
                break;
            }
            k[pick]++;
        }
        if (left > 0) {
            continue;
        }
        for (int i = 0; i < P; i++) {
            double ti = m[i].alpha + m[i].beta * (double) (g * k[i] + (i == c ? r : 0));

            t = ti > t ? ti : t;
        }
        best = t < best ? t : best;
    }
    return best;
}

/* Whether any plan follows the granularity rule: for some choice of the
 * carrier, every rank's granule range is non-empty and their sums bracket
 * B div g. */
static int ref_feasible(const ob_rank_model *m, int P, long B, long g)
{
    long r = B % g, Q = B / g;

    for (int c = (0 == r ? -1 : 0); c < (0 == r ? 0 : P); c++) {
        long long sl = 0, sh = 0;
        int ok = 1;

        for (int i = 0; i < P; i++) {
            long L, H;

            ref_granules(&m[i], B, g, i == c ? r : 0, &L, &H);
            ok = ok && L <= H;
            sl += L;
            sh += H;
        }
        if (ok && sl <= Q && Q <= sh) {
            return 1;
        }
    }
    return 0;
}

/* Sum, bounds, and the granularity rule: multiples of g except exactly one
 * rank holding a multiple plus B mod g when that is not 0. */
static void assert_plan_valid(const ob_rank_model *m, int P, long B, long g, const long *plan)
{
    long long sum = 0;
    int carriers = 0;

    for (int i = 0; i < P; i++) {
        ck_assert_int_ge(plan[i], m[i].lo);
        ck_assert_int_le(plan[i], m[i].hi);
        sum += plan[i];
        if (0 != plan[i] % g) {
            carriers++;
            ck_assert_int_eq(plan[i] % g, B % g);
        }
    }
    ck_assert_int_eq(sum, B);
    ck_assert_int_eq(carriers, 0 == B % g ? 0 : 1);
}

/* ------------------------------------------------------------------ */
/* Random rank sets                                                     */

/* alpha: 0 or 1e-4..1 s; beta: 1e-7..1e-1 s/sample; lower bounds 0, 1 or
 * up to 40; upper bounds none or lo + up to 400; B feasible for the bounds
 * (not necessarily for the granularity). */
static long random_case(uint64_t *s, ob_rank_model *m, int P, long max_spread)
{
    long long slo = 0;
    long B;

    for (int i = 0; i < P; i++) {
        double u = rng_uniform(s);

        m[i].alpha = u < 0.2 ? 0.0 : pow(10.0, -4.0 + 4.0 * rng_uniform(s));
        m[i].beta = pow(10.0, -7.0 + 6.0 * rng_uniform(s));
        u = rng_uniform(s);
        m[i].lo = u < 0.4 ? 1 : (u < 0.6 ? 0 : rng_range(s, 0, 40));
        m[i].hi = rng_uniform(s) < 0.4 ? LONG_MAX : m[i].lo + rng_range(s, 0, 400);
        slo += m[i].lo;
    }
    for (;;) {
        long long shi = 0;

        B = (long) slo + rng_range(s, 0, max_spread);
        B = B < 1 ? 1 : B;
        for (int i = 0; i < P; i++) {
            shi += high_of(&m[i], B);
        }
        if (shi >= B) {
            return B;
        }
        /* Too many tight upper bounds: loosen one and try again. */
        m[rng_range(s, 0, P - 1)].hi = LONG_MAX;
    }
}

/* A valid but poor plan: lower bounds, then the rest piled on the slowest
 * ranks first. */
static void poor_plan(const ob_rank_model *m, int P, long B, long *plan)
{
    long left = B;
    int done[MAXP] = { 0 };

    for (int i = 0; i < P; i++) {
        plan[i] = m[i].lo;
        left -= m[i].lo;
    }
    for (int n = 0; n < P && left > 0; n++) {
        int slow = -1;

        for (int i = 0; i < P; i++) {
            if (!done[i] && (slow < 0 || m[i].beta > m[slow].beta)) {
                slow = i;
            }
        }
        done[slow] = 1;
        {
            long add = high_of(&m[slow], B) - plan[slow];

            add = add < left ? add : left;
            plan[slow] += add;
            left -= add;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Continuous optimum                                                   */

START_TEST(test_a_rank_with_lower_bound_zero_can_be_parked)
{
    /* OMNIBATCH_MIN_BATCH=0: the last rank's fixed cost alone (50 ms)
     * exceeds what the others need for the whole batch, so the optimum
     * gives it nothing; a rank planned 0 samples computes nothing, and its
     * fixed cost is not the step time. */
    ob_rank_model m[3] = { { 0.0, 1e-3, 0, 100 }, { 0.0, 1e-3, 0, 100 }, { 0.05, 1e-3, 0, 100 } };
    long plan[3] = { 0 };
    double x[3], T;

    ck_assert_int_eq(ob_plan_optimum(m, 3, 64, x, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(x[2], 0.0, 1e-12);
    ck_assert_double_eq_tol(x[0], 32.0, 1e-9);
    ck_assert_int_eq(ob_plan_round(m, 3, 64, 1, x, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 32);
    ck_assert_int_eq(plan[1], 32);
    ck_assert_int_eq(plan[2], 0);
    ck_assert_int_eq(ob_plan_check(m, 3, 64, plan), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(ob_plan_step_time(m, 3, plan), 0.032, 1e-12);
    /* Given one sample it pays its fixed cost. */
    plan[1] = 31;
    plan[2] = 1;
    ck_assert_double_eq_tol(ob_plan_step_time(m, 3, plan), 0.051, 1e-12);
}
END_TEST

START_TEST(test_optimum_matches_reference_on_random_sets)
{
    uint64_t s = 0x5eed0001;
    ob_rank_model m[MAXP];
    double b[MAXP], T;
    double worst = 0.0;

    for (int n = 0; n < 4000; n++) {
        int P = (int) rng_range(&s, 1, MAXP);
        long B = random_case(&s, m, P, n % 2 ? 200 : 20000);
        long double ref = ref_optimum(m, P, B);
        long double tb = 0.0L, sum = 0.0L;
        double rel;

        ck_assert_int_eq(ob_plan_optimum(m, P, B, b, &T), OMNIBATCH_SUCCESS);
        for (int i = 0; i < P; i++) {
            long double ti = (long double) m[i].alpha + (long double) m[i].beta * (long double) b[i];

            ck_assert(b[i] >= (double) m[i].lo && b[i] <= (double) high_of(&m[i], B));
            tb = ti > tb ? ti : tb;
            sum += b[i];
        }
        ck_assert(fabsl(sum - (long double) B) <= 1e-9L * (long double) B);
        rel = (double) fabsl(((long double) T - ref) / ref);
        worst = rel > worst ? rel : worst;
        ck_assert_msg(rel <= 1e-9, "case %d: P=%d B=%ld T=%.17g reference %.17Lg", n, P, B, T, ref);
        /* The split itself achieves the reported time. */
        ck_assert(fabsl(tb - ref) <= 1e-9L * ref);
    }
    ck_assert(worst <= 1e-9);
}
END_TEST

START_TEST(test_optimum_equalises_unclamped_ranks)
{
    /* Two ranks, alpha 1 and 0, beta 1 and 1, B = 9: 1 + b0 = b1, b0 + b1 = 9. */
    ob_rank_model m[2] = { { 1.0, 1.0, 0, 100 }, { 0.0, 1.0, 0, 100 } };
    double b[2], T;

    ck_assert_int_eq(ob_plan_optimum(m, 2, 9, b, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(b[0], 4.0, 1e-12);
    ck_assert_double_eq_tol(b[1], 5.0, 1e-12);
    ck_assert_double_eq_tol(T, 5.0, 1e-12);
}
END_TEST

START_TEST(test_optimum_reports_lower_bound_time)
{
    /* Rank 0 at its lower bound already takes longer than the water level. */
    ob_rank_model m[2] = { { 0.0, 10.0, 5, 100 }, { 0.0, 1.0, 0, 100 } };
    double b[2], T;

    ck_assert_int_eq(ob_plan_optimum(m, 2, 20, b, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(b[0], 5.0, 1e-12);
    ck_assert_double_eq_tol(b[1], 15.0, 1e-12);
    ck_assert_double_eq_tol(T, 50.0, 1e-12);
}
END_TEST

START_TEST(test_optimum_at_65536_ranks)
{
    enum { BIG = 65536 };
    uint64_t s = 0x5eed0002;
    ob_rank_model *m = malloc(BIG * sizeof *m);
    double *b = malloc(BIG * sizeof *b);
    long *cur = malloc(BIG * sizeof *cur);
    long *next = malloc(BIG * sizeof *next);
    long B = 8L * BIG * 64;
    ob_planner_params p = { 1.0, 0.0, 8 };
    ob_decision d;
    double T;

    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(cur);
    ck_assert_ptr_nonnull(next);
    for (int i = 0; i < BIG; i++) {
        m[i].alpha = 0.001 * rng_uniform(&s);
        m[i].beta = pow(10.0, -6.0 + 3.0 * rng_uniform(&s));
        m[i].lo = 8;
        m[i].hi = i % 7 ? LONG_MAX : 2048;
    }
    ck_assert_int_eq(ob_plan_optimum(m, BIG, B, b, &T), OMNIBATCH_SUCCESS);
    ck_assert(fabsl(((long double) T - ref_optimum(m, BIG, B)) / (long double) T) <= 1e-9L);
    ck_assert_int_eq(ob_plan_equal(m, BIG, B, 8, cur), OMNIBATCH_SUCCESS);
    assert_plan_valid(m, BIG, B, 8, cur);
    ck_assert_int_eq(ob_plan_decide(&p, m, BIG, B, cur, next, &d), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(d.changed, 1);
    assert_plan_valid(m, BIG, B, 8, next);
    /* One granule of the slowest rank is the most rounding can add. */
    ck_assert(d.t_next <= T + 8.0 * 1e-3 * (1.0 + 1e-12));
    free(m);
    free(b);
    free(cur);
    free(next);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Integer plans                                                        */

/*
 * With gain 1 and no dead-band, a decision from a poor plan adopts the
 * rounded optimum.  Each rank of it is within one granule of a continuous
 * optimum on the granule-rounded bounds, and that continuous optimum is no
 * worse than the exact integer one (its plans are among the continuous
 * ones), so the step time is at most the exact integer optimum plus
 * g * max beta: one granule on the slowest rank.
 */
static void check_integer_quality(uint64_t seed, int maxP, long spread, int cases, int *planned)
{
    static const long grains[3] = { 1, 2, 8 };
    uint64_t s = seed;
    ob_rank_model m[MAXP];
    long cur[MAXP], next[MAXP];

    for (int n = 0; n < cases; n++) {
        int P = (int) rng_range(&s, 1, maxP);
        long B = random_case(&s, m, P, spread);
        long g = grains[n % 3];
        ob_planner_params p = { 1.0, 0.0, g };
        double ref = ref_integer_optimum(m, P, B, g);
        double bmax = 0.0;
        ob_decision d;
        int rc;

        for (int i = 0; i < P; i++) {
            bmax = m[i].beta > bmax ? m[i].beta : bmax;
        }
        poor_plan(m, P, B, cur);
        ob_clear_error();
        rc = ob_plan_decide(&p, m, P, B, cur, next, &d);
        ck_assert_int_eq(isinf(ref), !ref_feasible(m, P, B, g));
        if (isinf(ref)) {
            /* No plan follows the rule: the planner must refuse, and say why. */
            ck_assert_int_eq(rc, OMNIBATCH_ERR_INFEASIBLE);
            ck_assert_ptr_nonnull(strstr(ob_last_error(), "granularity"));
            ck_assert_int_eq(ob_plan_check_bounds(m, P, B, g), OMNIBATCH_ERR_INFEASIBLE);
            continue;
        }
        ck_assert_msg(OMNIBATCH_SUCCESS == rc, "case %d: %s", n, ob_last_error());
        (*planned)++;
        if (d.changed) {
            assert_plan_valid(m, P, B, g, next);
        } else {
            ck_assert_mem_eq(next, cur, (size_t) P * sizeof *cur);
        }
        ck_assert_double_eq_tol(d.t_next, ob_plan_step_time(m, P, next), 1e-12 * d.t_next);
        ck_assert_msg(d.t_next <= (ref + (double) g * bmax) * (1.0 + 1e-12),
                      "case %d: P=%d B=%ld g=%ld step %.17g, integer optimum %.17g", n, P, B, g, d.t_next, ref);
        ck_assert(d.t_optimum <= ref * (1.0 + 1e-12));
        /* The public rounding of the continuous optimum keeps every invariant too. */
        {
            double target[MAXP];
            long plan[MAXP];

            ck_assert_int_eq(ob_plan_optimum(m, P, B, target, NULL), OMNIBATCH_SUCCESS);
            ck_assert_int_eq(ob_plan_round(m, P, B, g, target, plan), OMNIBATCH_SUCCESS);
            assert_plan_valid(m, P, B, g, plan);
        }
    }
}

START_TEST(test_integer_plan_small_against_exact_minimax)
{
    int planned = 0;

    check_integer_quality(0x5eed0003, 6, 120, 3000, &planned);
    /* Most random cases admit a plan; the refusals were checked above. */
    ck_assert_int_gt(planned, 1500);
}
END_TEST

START_TEST(test_integer_plan_larger_against_exact_minimax)
{
    int planned = 0;

    check_integer_quality(0x5eed0004, 24, 3000, 600, &planned);
    ck_assert_int_gt(planned, 300);
}
END_TEST

START_TEST(test_integer_plan_without_granularity_is_within_one_sample)
{
    /* g = 1: each rank within one sample of the continuous optimum. */
    uint64_t s = 0x5eed0005;
    ob_rank_model m[MAXP];
    long cur[MAXP], next[MAXP];
    ob_planner_params p = { 1.0, 0.0, 1 };

    for (int n = 0; n < 2000; n++) {
        int P = (int) rng_range(&s, 1, MAXP);
        long B = random_case(&s, m, P, 5000);
        double T, bmax = 0.0;
        ob_decision d;

        for (int i = 0; i < P; i++) {
            bmax = m[i].beta > bmax ? m[i].beta : bmax;
        }
        poor_plan(m, P, B, cur);
        ck_assert_int_eq(ob_plan_decide(&p, m, P, B, cur, next, &d), OMNIBATCH_SUCCESS);
        ck_assert_int_eq(ob_plan_optimum(m, P, B, NULL, &T), OMNIBATCH_SUCCESS);
        assert_plan_valid(m, P, B, 1, next);
        ck_assert(d.t_next <= (T + bmax) * (1.0 + 1e-12));
    }
}
END_TEST

START_TEST(test_decision_gives_spare_samples_where_they_cost_least)
{
    /* Two fast ranks (t = 0.8 + b) and two slow ones (t = 2 b), B = 302:
     * the water level is 101.2 with the fast ranks at 100.4 and the slow at
     * 50.6.  After the floors two samples are left.  The largest fractions
     * (.6) would give them to the slow ranks, 102 s; a decision gives them
     * to the ranks whose time grows least, the fast ones, 101.8 s, the
     * least step time of any integer plan. */
    ob_rank_model m[4] = { { 0.8, 1.0, 1, 302 }, { 0.8, 1.0, 1, 302 }, { 0.0, 2.0, 1, 302 }, { 0.0, 2.0, 1, 302 } };
    ob_planner_params p = { 1.0, 0.0, 1 };
    long cur[4] = { 75, 75, 76, 76 }, next[4], rounded[4];
    double target[4], T;
    ob_decision d;

    ck_assert_int_eq(ob_plan_optimum(m, 4, 302, target, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(T, 101.2, 1e-12);
    ck_assert_int_eq(ob_plan_decide(&p, m, 4, 302, cur, next, &d), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(d.changed, 1);
    ck_assert_int_eq(next[0], 101);
    ck_assert_int_eq(next[1], 101);
    ck_assert_int_eq(next[2], 50);
    ck_assert_int_eq(next[3], 50);
    ck_assert_double_eq_tol(d.t_next, 101.8, 1e-12);
    ck_assert_double_eq_tol(d.t_next, ref_integer_optimum(m, 4, 302, 1), 1e-12);
    /* Rounding targets alone, without speeds, takes the largest fractions. */
    ck_assert_int_eq(ob_plan_round(m, 4, 302, 1, target, rounded), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(rounded[0], 100);
    ck_assert_int_eq(rounded[2], 51);
    ck_assert_double_eq_tol(ob_plan_step_time(m, 4, rounded), 102.0, 1e-12);
}
END_TEST

START_TEST(test_equal_and_proportional_plans)
{
    ob_rank_model m[4] = { { 0, 0, 1, LONG_MAX }, { 0, 0, 1, LONG_MAX }, { 0, 0, 1, LONG_MAX },
                           { 0, 0, 1, LONG_MAX } };
    double cores[4] = { 12, 12, 8, 16 };
    long plan[4];

    ck_assert_int_eq(ob_plan_equal(m, 4, 10, 1, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 3);
    ck_assert_int_eq(plan[1], 3);
    ck_assert_int_eq(plan[2], 2);
    ck_assert_int_eq(plan[3], 2);
    ck_assert_int_eq(ob_plan_proportional(m, 4, 480, 1, cores, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 120);
    ck_assert_int_eq(plan[1], 120);
    ck_assert_int_eq(plan[2], 80);
    ck_assert_int_eq(plan[3], 160);
    /* 100 = 12 granules of 8 + 4: equal granules, the remainder on rank 0. */
    ck_assert_int_eq(ob_plan_equal(m, 4, 100, 8, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 28);
    ck_assert_int_eq(plan[1], 24);
    ck_assert_int_eq(plan[2], 24);
    ck_assert_int_eq(plan[3], 24);
    /* An upper bound moves the excess to the others, evenly. */
    m[3].hi = 10;
    ck_assert_int_eq(ob_plan_equal(m, 4, 40, 1, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[3], 10);
    ck_assert_int_eq(plan[0] + plan[1] + plan[2], 30);
    ck_assert_int_eq(plan[0], 10);
}
END_TEST

START_TEST(test_random_proportional_plans_keep_invariants)
{
    uint64_t s = 0x5eed0006;
    ob_rank_model m[MAXP];
    double w[MAXP];
    long plan[MAXP];
    static const long grains[3] = { 1, 2, 8 };

    for (int n = 0; n < 3000; n++) {
        int P = (int) rng_range(&s, 1, MAXP);
        long B = random_case(&s, m, P, 3000);
        long g = grains[n % 3];
        int rc;

        for (int i = 0; i < P; i++) {
            w[i] = pow(10.0, 3.0 * rng_uniform(&s));
        }
        rc = ob_plan_proportional(m, P, B, g, w, plan);
        if (OMNIBATCH_SUCCESS != rc) {
            ck_assert_int_eq(rc, OMNIBATCH_ERR_INFEASIBLE);
            ck_assert(!ref_feasible(m, P, B, g));
            continue;
        }
        ck_assert(ref_feasible(m, P, B, g));
        assert_plan_valid(m, P, B, g, plan);
    }
}
END_TEST

START_TEST(test_round_follows_targets)
{
    ob_rank_model m[3] = { { 0, 0, 1, 100 }, { 0, 0, 1, 100 }, { 0, 0, 1, 100 } };
    double t1[3] = { 10.4, 10.35, 9.25 };
    double t2[3] = { 20.0, 7.0, 3.0 };
    long plan[3];

    /* Floors 10, 10, 9; the missing unit to the largest remainder (rank 0). */
    ck_assert_int_eq(ob_plan_round(m, 3, 30, 1, t1, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 11);
    ck_assert_int_eq(plan[1], 10);
    ck_assert_int_eq(plan[2], 9);
    /* Integer targets come back unchanged. */
    ck_assert_int_eq(ob_plan_round(m, 3, 30, 1, t2, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 20);
    ck_assert_int_eq(plan[1], 7);
    ck_assert_int_eq(plan[2], 3);
    /* Granularity 4: 30 = 7 * 4 + 2; 20 is a multiple, 7 -> 4 or 8, the carrier is rank 0 (largest). */
    ck_assert_int_eq(ob_plan_round(m, 3, 30, 4, t2, plan), OMNIBATCH_SUCCESS);
    assert_plan_valid(m, 3, 30, 4, plan);
    ck_assert_int_eq(plan[0] % 4, 2);
}
END_TEST

START_TEST(test_plans_are_deterministic)
{
    uint64_t s = 0x5eed0007;
    ob_rank_model m[MAXP];
    long cur[MAXP], a[MAXP], b[MAXP];
    ob_planner_params p = { 0.7, 0.01, 2 };

    for (int n = 0; n < 500; n++) {
        int P = (int) rng_range(&s, 1, MAXP);
        long B = random_case(&s, m, P, 3000);
        int rc;

        poor_plan(m, P, B, cur);
        rc = ob_plan_decide(&p, m, P, B, cur, a, NULL);
        ck_assert_int_eq(ob_plan_decide(&p, m, P, B, cur, b, NULL), rc);
        if (OMNIBATCH_SUCCESS == rc) {
            ck_assert_mem_eq(a, b, (size_t) P * sizeof *a);
        }
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Decisions and the dead-band                                          */

START_TEST(test_deadband_holds_small_gains)
{
    /* Two equal ranks, t = b: the optimum is 50/50; from 52/48 the gain is
     * (52 - 50) / 52 = 3.8%. */
    ob_rank_model m[2] = { { 0.0, 1.0, 1, 100 }, { 0.0, 1.0, 1, 100 } };
    long cur[2] = { 52, 48 }, next[2];
    ob_planner_params p = { 1.0, 0.05, 1 };
    ob_decision d;

    ck_assert_int_eq(ob_plan_decide(&p, m, 2, 100, cur, next, &d), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(d.changed, 0);
    ck_assert_int_eq(next[0], 52);
    ck_assert_int_eq(next[1], 48);
    ck_assert_double_eq_tol(d.t_current, 52.0, 1e-12);
    ck_assert_double_eq_tol(d.t_next, 52.0, 1e-12);
    ck_assert_double_eq_tol(d.t_optimum, 50.0, 1e-12);

    p.deadband = 0.03;
    ck_assert_int_eq(ob_plan_decide(&p, m, 2, 100, cur, next, &d), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(d.changed, 1);
    ck_assert_int_eq(next[0], 50);
    ck_assert_int_eq(next[1], 50);
    ck_assert_double_eq_tol(d.t_next, 50.0, 1e-12);

    /* Half the way: 51/49, a gain of 1.9%: inside a 2% band, outside 1.5%. */
    p.gain = 0.5;
    p.deadband = 0.02;
    ck_assert_int_eq(ob_plan_decide(&p, m, 2, 100, cur, next, &d), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(d.changed, 0);
    p.deadband = 0.015;
    ck_assert_int_eq(ob_plan_decide(&p, m, 2, 100, cur, cur, &d), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(d.changed, 1);
    ck_assert_int_eq(cur[0], 51);
    ck_assert_int_eq(cur[1], 49);
}
END_TEST

START_TEST(test_decision_at_optimum_keeps_plan)
{
    ob_rank_model m[3] = { { 0.005, 1.0 / 12, 1, 1000 }, { 0.005, 1.0 / 8, 1, 1000 },
                           { 0.005, 1.0 / 16, 1, 1000 } };
    double x[3];
    long plan[3], next[3];
    ob_planner_params p = { 1.0, 0.0, 1 };
    ob_decision d;

    ck_assert_int_eq(ob_plan_optimum(m, 3, 360, x, NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_plan_round(m, 3, 360, 1, x, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_plan_decide(&p, m, 3, 360, plan, next, &d), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(d.changed, 0);
    ck_assert_mem_eq(plan, next, sizeof plan);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Refusals                                                             */

#define ASSERT_FAILS(call, code, text) \
    do { \
        ob_clear_error(); \
        ck_assert_int_eq((call), (code)); \
        ck_assert_str_eq(ob_last_error(), (text)); \
    } while (0)

START_TEST(test_infeasible_bounds_are_refused)
{
    ob_rank_model m[4] = { { 0, 1, 1, LONG_MAX }, { 0, 1, 1, LONG_MAX }, { 0, 1, 1, LONG_MAX },
                           { 0, 1, 1, LONG_MAX } };
    double x[4];
    long plan[4];

    ASSERT_FAILS(ob_plan_optimum(m, 4, 3, x, NULL), OMNIBATCH_ERR_INFEASIBLE,
                 "global batch 3 is smaller than the sum of the lower bounds 4 (4 ranks x 1)");
    ASSERT_FAILS(ob_plan_equal(m, 4, 3, 1, plan), OMNIBATCH_ERR_INFEASIBLE,
                 "global batch 3 is smaller than the sum of the lower bounds 4 (4 ranks x 1)");
    m[2].lo = 5;
    ASSERT_FAILS(ob_plan_optimum(m, 4, 7, x, NULL), OMNIBATCH_ERR_INFEASIBLE,
                 "global batch 7 is smaller than the sum of the lower bounds 8");
    m[2].lo = 1;
    for (int i = 0; i < 4; i++) {
        m[i].hi = 10;
    }
    ASSERT_FAILS(ob_plan_optimum(m, 4, 41, x, NULL), OMNIBATCH_ERR_INFEASIBLE,
                 "global batch 41 exceeds the sum of the upper bounds 40 (4 ranks x 10)");
    m[1].hi = 20;
    ASSERT_FAILS(ob_plan_optimum(m, 4, 51, x, NULL), OMNIBATCH_ERR_INFEASIBLE,
                 "global batch 51 exceeds the sum of the upper bounds 50");
    m[1].lo = 30;
    ASSERT_FAILS(ob_plan_optimum(m, 4, 40, x, NULL), OMNIBATCH_ERR_INFEASIBLE,
                 "rank 1: lower bound 30 exceeds upper bound 20");
    m[1].lo = -1;
    ASSERT_FAILS(ob_plan_optimum(m, 4, 40, x, NULL), OMNIBATCH_ERR_ARG, "rank 1: lower bound -1 is negative");
    m[1].lo = 1;
    m[1].hi = LONG_MAX;
    m[1].lo = 50;
    ASSERT_FAILS(ob_plan_optimum(m, 4, 40, x, NULL), OMNIBATCH_ERR_INFEASIBLE,
                 "rank 1: lower bound 50 exceeds the global batch 40");
}
END_TEST

START_TEST(test_bad_shapes_are_refused)
{
    ob_rank_model m[2] = { { 0, 1, 1, 100 }, { 0, 1, 1, 100 } };
    ob_planner_params p = { 0.5, 0.02, 1 };
    double x[2];
    long plan[2] = { 5, 5 }, next[2];

    ASSERT_FAILS(ob_plan_optimum(m, 0, 10, x, NULL), OMNIBATCH_ERR_ARG, "number of ranks 0: expected >= 1");
    ASSERT_FAILS(ob_plan_optimum(m, -3, 10, x, NULL), OMNIBATCH_ERR_ARG, "number of ranks -3: expected >= 1");
    ASSERT_FAILS(ob_plan_optimum(m, 2, 0, x, NULL), OMNIBATCH_ERR_ARG,
                 "global batch 0: expected an integer in [1, 1125899906842624]");
    ASSERT_FAILS(ob_plan_equal(m, 2, -5, 1, plan), OMNIBATCH_ERR_ARG,
                 "global batch -5: expected an integer in [1, 1125899906842624]");
    ASSERT_FAILS(ob_plan_equal(m, 2, 10, 0, plan), OMNIBATCH_ERR_ARG, "granularity 0: expected an integer >= 1");
    p.gain = 0.0;
    ASSERT_FAILS(ob_plan_decide(&p, m, 2, 10, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "gain 0: expected a number in (0, 1]");
    p.gain = NAN;
    ASSERT_FAILS(ob_plan_decide(&p, m, 2, 10, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "gain nan: expected a number in (0, 1]");
    p.gain = 1.5;
    ASSERT_FAILS(ob_plan_decide(&p, m, 2, 10, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "gain 1.5: expected a number in (0, 1]");
    p.gain = 0.5;
    p.deadband = -0.1;
    ASSERT_FAILS(ob_plan_decide(&p, m, 2, 10, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "dead-band -0.1: expected a number in [0, 0.5]");
    /* The planner allows what OMNIBATCH_DEADBAND allows, no more. */
    p.deadband = 0.6;
    ASSERT_FAILS(ob_plan_decide(&p, m, 2, 10, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "dead-band 0.6: expected a number in [0, 0.5]");
    p.deadband = 0.02;
    p.granularity = -8;
    ASSERT_FAILS(ob_plan_decide(&p, m, 2, 10, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "granularity -8: expected an integer >= 1");
}
END_TEST

START_TEST(test_bad_models_are_refused)
{
    ob_rank_model m[3] = { { 0.01, 0.001, 1, 100 }, { 0.01, 0.001, 1, 100 }, { 0.01, 0.001, 1, 100 } };
    ob_planner_params p = { 0.5, 0.02, 1 };
    long plan[3] = { 10, 10, 10 }, next[3];
    double x[3];

    m[2].beta = NAN;
    ASSERT_FAILS(ob_plan_optimum(m, 3, 30, x, NULL), OMNIBATCH_ERR_ARG,
                 "rank 2: beta = nan s/sample: expected a finite number in [1e-12, 1e+06]");
    m[2].beta = 0.0;
    ASSERT_FAILS(ob_plan_decide(&p, m, 3, 30, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "rank 2: beta = 0 s/sample: expected a finite number in [1e-12, 1e+06]");
    m[2].beta = -0.001;
    ASSERT_FAILS(ob_plan_decide(&p, m, 3, 30, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "rank 2: beta = -0.001 s/sample: expected a finite number in [1e-12, 1e+06]");
    m[2].beta = INFINITY;
    ASSERT_FAILS(ob_plan_decide(&p, m, 3, 30, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "rank 2: beta = inf s/sample: expected a finite number in [1e-12, 1e+06]");
    m[2].beta = 2e6;
    ASSERT_FAILS(ob_plan_decide(&p, m, 3, 30, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "rank 2: beta = 2e+06 s/sample: expected a finite number in [1e-12, 1e+06]");
    m[2].beta = 0.001;
    m[0].alpha = -0.5;
    ASSERT_FAILS(ob_plan_decide(&p, m, 3, 30, plan, next, NULL), OMNIBATCH_ERR_ARG,
                 "rank 0: alpha = -0.5 s: expected a finite number in [0, 1e+06]");
    m[0].alpha = 3e6;
    ASSERT_FAILS(ob_plan_optimum(m, 3, 30, x, NULL), OMNIBATCH_ERR_ARG,
                 "rank 0: alpha = 3e+06 s: expected a finite number in [0, 1e+06]");
    m[0].alpha = -INFINITY;
    ASSERT_FAILS(ob_plan_optimum(m, 3, 30, x, NULL), OMNIBATCH_ERR_ARG,
                 "rank 0: alpha = -inf s: expected a finite number in [0, 1e+06]");
    ASSERT_FAILS(ob_plan_check_models(m, 3), OMNIBATCH_ERR_ARG,
                 "rank 0: alpha = -inf s: expected a finite number in [0, 1e+06]");
    ASSERT_FAILS(ob_plan_check_models(NULL, 3), OMNIBATCH_ERR_ARG, "planner: no rank models given");
    m[0].alpha = 0.0;
    ck_assert_int_eq(ob_plan_check_models(m, 3), OMNIBATCH_SUCCESS);
    /* Nothing was written on a refusal. */
    memcpy(next, plan, sizeof plan);
    m[0].alpha = NAN;
    ck_assert_int_eq(ob_plan_decide(&p, m, 3, 30, plan, next, NULL), OMNIBATCH_ERR_ARG);
    ck_assert_mem_eq(next, plan, sizeof plan);
}
END_TEST

START_TEST(test_bad_plans_targets_and_weights_are_refused)
{
    ob_rank_model m[2] = { { 0, 1, 1, 10 }, { 0, 1, 1, 10 } };
    ob_planner_params p = { 0.5, 0.02, 1 };
    long low[2] = { 0, 10 }, short_sum[2] = { 4, 5 }, next[2];
    double nan_target[2] = { NAN, 5 }, short_target[2] = { 4, 5 };
    double w[2] = { 1, 0 };
    long plan[2];

    ASSERT_FAILS(ob_plan_check(m, 2, 10, low), OMNIBATCH_ERR_ARG, "plan: rank 0 has batch 0 outside its bounds [1, 10]");
    ASSERT_FAILS(ob_plan_decide(&p, m, 2, 10, short_sum, next, NULL), OMNIBATCH_ERR_ARG,
                 "plan: batches sum to 9, expected the global batch 10");
    ASSERT_FAILS(ob_plan_round(m, 2, 10, 1, nan_target, plan), OMNIBATCH_ERR_ARG,
                 "target of rank 0 = nan: expected a finite number in [1, 10]");
    ASSERT_FAILS(ob_plan_round(m, 2, 10, 1, short_target, plan), OMNIBATCH_ERR_ARG,
                 "targets sum to 9: expected the global batch 10");
    ASSERT_FAILS(ob_plan_proportional(m, 2, 10, 1, w, plan), OMNIBATCH_ERR_ARG,
                 "weight of rank 1 = 0: expected a finite number > 0");
    w[1] = INFINITY;
    ASSERT_FAILS(ob_plan_proportional(m, 2, 10, 1, w, plan), OMNIBATCH_ERR_ARG,
                 "weight of rank 1 = inf: expected a finite number > 0");
}
END_TEST

START_TEST(test_granularity_infeasible_is_refused)
{
    ob_rank_model one_bad[2] = { { 0, 1, 0, 100 }, { 0, 1, 3, 5 } };
    ob_rank_model two_bad[3] = { { 0, 1, 3, 5 }, { 0, 1, 9, 15 }, { 0, 1, 0, 100 } };
    ob_rank_model tight_hi[2] = { { 0, 1, 1, 12 }, { 0, 1, 1, 12 } };
    ob_rank_model tight_lo[2] = { { 0, 1, 9, 100 }, { 0, 1, 9, 100 } };
    ob_rank_model small[2] = { { 0, 1, 0, 4 }, { 0, 1, 0, 4 } };
    long plan[3];

    ASSERT_FAILS(ob_plan_equal(one_bad, 2, 64, 8, plan), OMNIBATCH_ERR_INFEASIBLE,
                 "granularity 8: rank 1's bounds [3, 5] hold no multiple of 8, and the global batch 64 leaves no "
                 "remainder for it");
    /* With a remainder the same rank can carry it: 61 = 7 * 8 + 5. */
    ck_assert_int_eq(ob_plan_equal(one_bad, 2, 61, 8, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 56);
    ck_assert_int_eq(plan[1], 5);
    ASSERT_FAILS(ob_plan_equal(two_bad, 3, 70, 8, plan), OMNIBATCH_ERR_INFEASIBLE,
                 "granularity 8: ranks 0 [3, 5] and 1 [9, 15] hold no multiple of 8, and only one rank may carry "
                 "the remainder 6 of the global batch 70");
    ASSERT_FAILS(ob_plan_equal(tight_hi, 2, 24, 8, plan), OMNIBATCH_ERR_INFEASIBLE,
                 "granularity 8: the upper bounds rounded down to multiples of 8 sum to 16, less than the global "
                 "batch 24");
    ASSERT_FAILS(ob_plan_equal(tight_lo, 2, 24, 8, plan), OMNIBATCH_ERR_INFEASIBLE,
                 "granularity 8: the lower bounds rounded up to multiples of 8 sum to 32, more than the global "
                 "batch 24");
    ASSERT_FAILS(ob_plan_equal(small, 2, 7, 8, plan), OMNIBATCH_ERR_INFEASIBLE,
                 "granularity 8: no plan of the global batch 7 fits the bounds with every batch a multiple of 8 "
                 "but one that also carries the remainder 7");
    /* The same bounds without granularity are fine. */
    ck_assert_int_eq(ob_plan_equal(small, 2, 7, 1, plan), OMNIBATCH_SUCCESS);
}
END_TEST

static Suite *make_planner_suite(void)
{
    Suite *s = suite_create("planner");
    TCase *opt = tcase_create("optimum");
    TCase *integer = tcase_create("integer");
    TCase *decide = tcase_create("decide");
    TCase *refuse = tcase_create("refusals");

    tcase_set_timeout(opt, 60);
    tcase_set_timeout(integer, 60);
    tcase_add_test(opt, test_optimum_matches_reference_on_random_sets);
    tcase_add_test(opt, test_a_rank_with_lower_bound_zero_can_be_parked);
    tcase_add_test(opt, test_optimum_equalises_unclamped_ranks);
    tcase_add_test(opt, test_optimum_reports_lower_bound_time);
    tcase_add_test(opt, test_optimum_at_65536_ranks);
    tcase_add_test(integer, test_integer_plan_small_against_exact_minimax);
    tcase_add_test(integer, test_integer_plan_larger_against_exact_minimax);
    tcase_add_test(integer, test_integer_plan_without_granularity_is_within_one_sample);
    tcase_add_test(integer, test_decision_gives_spare_samples_where_they_cost_least);
    tcase_add_test(integer, test_equal_and_proportional_plans);
    tcase_add_test(integer, test_random_proportional_plans_keep_invariants);
    tcase_add_test(integer, test_round_follows_targets);
    tcase_add_test(integer, test_plans_are_deterministic);
    tcase_add_test(decide, test_deadband_holds_small_gains);
    tcase_add_test(decide, test_decision_at_optimum_keeps_plan);
    tcase_add_test(refuse, test_infeasible_bounds_are_refused);
    tcase_add_test(refuse, test_bad_shapes_are_refused);
    tcase_add_test(refuse, test_bad_models_are_refused);
    tcase_add_test(refuse, test_bad_plans_targets_and_weights_are_refused);
    tcase_add_test(refuse, test_granularity_infeasible_is_refused);
    suite_add_tcase(s, opt);
    suite_add_tcase(s, integer);
    suite_add_tcase(s, decide);
    suite_add_tcase(s, refuse);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_planner_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
