/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The simulator's own arithmetic: its random numbers, speed distributions,
 * OmniLearn's rule, the integer oracle and the convergence measures.  A
 * mistake in any of them would misstate every figure bench/simulate prints.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "omnibatch.h"
#include "sim_metrics.h"
#include "sim_omnilearn.h"
#include "sim_oracle.h"
#include "sim_random.h"
#include "sim_speeds.h"

/* ---- random ---------------------------------------------------------- */

START_TEST(test_same_seed_same_stream)
{
    ob_sim_rng a, b, c;
    ob_sim_rng_seed(&a, 42);
    ob_sim_rng_seed(&b, 42);
    ob_sim_rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        const uint64_t x = ob_sim_rng_next(&a);
        ck_assert_uint_eq(x, ob_sim_rng_next(&b));
        differ += x != ob_sim_rng_next(&c);
    }
    ck_assert_int_gt(differ, 95);
}
END_TEST

START_TEST(test_uniform_and_below_stay_in_range)
{
    ob_sim_rng r;
    ob_sim_rng_seed(&r, 7);
    long hist[5] = { 0 };
    for (int i = 0; i < 50000; i++) {
        const double u = ob_sim_rng_uniform(&r);
        ck_assert(u >= 0.0 && u < 1.0);
        const long k = ob_sim_rng_below(&r, 5);
        ck_assert(k >= 0 && k < 5);
        hist[k]++;
    }
    /* 10000 expected each; 5 standard deviations is about 450 */
    for (int k = 0; k < 5; k++) {
        ck_assert_int_lt(labs(hist[k] - 10000), 450);
    }
    ck_assert_int_eq(ob_sim_rng_below(&r, 1), 0);
}
END_TEST

START_TEST(test_noise_has_mean_one_spread_sigma_and_is_clipped)
{
    ob_sim_rng r;
    ob_sim_rng_seed(&r, 11);
    const int n = 200000;
    const double sigma = 0.1;
    double sum = 0.0, sum2 = 0.0, lo = 2.0, hi = 0.0;
    for (int i = 0; i < n; i++) {
        const double f = ob_sim_noise(&r, sigma);
        sum += f;
        sum2 += f * f;
        lo = f < lo ? f : lo;
        hi = f > hi ? f : hi;
    }
    const double mean = sum / n;
    const double sd = sqrt(sum2 / n - mean * mean);
    ck_assert_double_eq_tol(mean, 1.0, 0.002);
    ck_assert_double_eq_tol(sd, sigma, 0.002);
    ck_assert(lo >= 1.0 - 3.0 * sigma - 1e-12);
    ck_assert(hi <= 1.0 + 3.0 * sigma + 1e-12);
    ck_assert_double_eq(ob_sim_noise(&r, 0.0), 1.0);
}
END_TEST

START_TEST(test_uniform_noise_fills_its_interval)
{
    ob_sim_rng r;
    ob_sim_rng_seed(&r, 13);
    const int n = 200000;
    double sum = 0.0, sum2 = 0.0, lo = 2.0, hi = 0.0;
    for (int i = 0; i < n; i++) {
        const double f = ob_sim_noise_uniform(&r, 0.1);
        sum += f;
        sum2 += f * f;
        lo = f < lo ? f : lo;
        hi = f > hi ? f : hi;
    }
    const double mean = sum / n;
    ck_assert_double_eq_tol(mean, 1.0, 0.001);
    ck_assert_double_eq_tol(sqrt(sum2 / n - mean * mean), 0.1 / sqrt(3.0), 0.001);
    ck_assert(lo >= 0.9 && lo < 0.901);
    ck_assert(hi <= 1.1 && hi > 1.099);
}
END_TEST

static Suite *make_sim_random_suite(void)
{
    Suite *s = suite_create("sim_random");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_same_seed_same_stream);
    tcase_add_test(tc, test_uniform_and_below_stay_in_range);
    tcase_add_test(tc, test_noise_has_mean_one_spread_sigma_and_is_clipped);
    tcase_add_test(tc, test_uniform_noise_fills_its_interval);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- speeds ---------------------------------------------------------- */

START_TEST(test_uniform_speeds_fill_the_interval)
{
    enum { P = 20000 };
    static double s[P];
    ob_sim_rng r;
    ob_sim_rng_seed(&r, 3);
    ck_assert_int_eq(ob_sim_speeds_uniform(&r, P, 0.25, 1.0, s), OMNIBATCH_SUCCESS);
    double sum = 0.0, lo = 2.0, hi = 0.0;
    for (int i = 0; i < P; i++) {
        ck_assert(s[i] >= 0.25 && s[i] <= 1.0);
        sum += s[i];
        lo = s[i] < lo ? s[i] : lo;
        hi = s[i] > hi ? s[i] : hi;
    }
    ck_assert_double_eq_tol(sum / P, 0.625, 0.01);
    ck_assert(lo < 0.26 && hi > 0.99);
    ck_assert_int_eq(ob_sim_speeds_uniform(&r, P, 0.0, 1.0, s), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_sim_speeds_uniform(&r, P, 1.0, 0.5, s), OMNIBATCH_ERR_ARG);
}
END_TEST

START_TEST(test_count_of_rounds_and_keeps_one)
{
    ck_assert_int_eq(ob_sim_count_of(0.1, 4), 1);      /* 0.4: at least one */
    ck_assert_int_eq(ob_sim_count_of(0.1, 16), 2);     /* 1.6 */
    ck_assert_int_eq(ob_sim_count_of(0.1, 256), 26);   /* 25.6 */
    ck_assert_int_eq(ob_sim_count_of(0.1, 65536), 6554);
    ck_assert_int_eq(ob_sim_count_of(0.0, 100), 0);
    ck_assert_int_eq(ob_sim_count_of(1.0, 7), 7);
}
END_TEST

START_TEST(test_bimodal_has_exactly_the_fast_count)
{
    const int Ps[] = { 1, 4, 16, 256, 4096 };
    for (size_t j = 0; j < sizeof Ps / sizeof Ps[0]; j++) {
        const int P = Ps[j];
        double *s = malloc((size_t) P * sizeof *s);
        ob_sim_rng r;
        ob_sim_rng_seed(&r, 100 + j);
        ck_assert_int_eq(ob_sim_speeds_bimodal(&r, P, 0.1, 20.0, s), OMNIBATCH_SUCCESS);
        int fast = 0;
        for (int i = 0; i < P; i++) {
            ck_assert(1.0 == s[i] || 20.0 == s[i]);
            fast += 20.0 == s[i];
        }
        ck_assert_int_eq(fast, ob_sim_count_of(0.1, P));
        free(s);
    }
}
END_TEST

START_TEST(test_bimodal_picks_every_rank_alike)
{
    /* One fast rank of 4, over many seeds: each rank about a quarter of the time. */
    int hits[4] = { 0 };
    double s[4];
    for (int seed = 0; seed < 4000; seed++) {
        ob_sim_rng r;
        ob_sim_rng_seed(&r, (uint64_t) seed);
        ob_sim_speeds_bimodal(&r, 4, 0.1, 20.0, s);
        for (int i = 0; i < 4; i++) {
            hits[i] += 20.0 == s[i];
        }
    }
    for (int i = 0; i < 4; i++) {
        ck_assert_int_lt(abs(hits[i] - 1000), 140);
    }
}
END_TEST

START_TEST(test_levels_tile_omnilearn_cores)
{
    double s[6];
    ck_assert_int_eq(ob_sim_speeds_level(4, 6, s), OMNIBATCH_SUCCESS);
    const double hl4[6] = { 9, 9, 6, 24, 9, 9 };
    for (int i = 0; i < 6; i++) {
        ck_assert_double_eq(s[i], hl4[i]);
    }
    /* the level is the ratio of fastest to slowest worker */
    const int levels[] = { 1, 2, 4, 8 };
    for (size_t j = 0; j < 4; j++) {
        double t[4];
        ck_assert_int_eq(ob_sim_speeds_level(levels[j], 4, t), OMNIBATCH_SUCCESS);
        double lo = t[0], hi = t[0], sum = 0.0;
        for (int i = 0; i < 4; i++) {
            lo = t[i] < lo ? t[i] : lo;
            hi = t[i] > hi ? t[i] : hi;
            sum += t[i];
        }
        ck_assert_double_eq_tol(hi / lo, levels[j], 1e-12);
        ck_assert_double_eq_tol(sum, 48.0, 1e-12);   /* every level has 48 cores */
    }
    ck_assert_int_eq(ob_sim_speeds_level(3, 4, s), OMNIBATCH_ERR_ARG);
}
END_TEST

START_TEST(test_choose_gives_distinct_ranks_and_slow_down_divides)
{
    enum { P = 50 };
    int idx[P], scratch[P];
    double s[P];
    ob_sim_rng r;
    ob_sim_rng_seed(&r, 5);
    ck_assert_int_eq(ob_sim_choose(&r, P, 10, idx, scratch), OMNIBATCH_SUCCESS);
    int seen[P] = { 0 };
    for (int j = 0; j < 10; j++) {
        ck_assert(idx[j] >= 0 && idx[j] < P);
        ck_assert_int_eq(seen[idx[j]], 0);
        seen[idx[j]] = 1;
    }
    for (int i = 0; i < P; i++) {
        s[i] = 1.0;
    }
    ob_sim_slow_down(s, idx, 10, 2.0);
    for (int i = 0; i < P; i++) {
        ck_assert_double_eq(s[i], (seen[i] ? 0.5 : 1.0));
    }
    ck_assert_int_eq(ob_sim_choose(&r, P, P, idx, scratch), OMNIBATCH_SUCCESS);
    memset(seen, 0, sizeof seen);
    for (int j = 0; j < P; j++) {
        seen[idx[j]]++;
    }
    for (int i = 0; i < P; i++) {
        ck_assert_int_eq(seen[i], 1);
    }
    ck_assert_int_eq(ob_sim_choose(&r, P, P + 1, idx, scratch), OMNIBATCH_ERR_ARG);
}
END_TEST

static Suite *make_sim_speeds_suite(void)
{
    Suite *s = suite_create("sim_speeds");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_uniform_speeds_fill_the_interval);
    tcase_add_test(tc, test_count_of_rounds_and_keeps_one);
    tcase_add_test(tc, test_bimodal_has_exactly_the_fast_count);
    tcase_add_test(tc, test_bimodal_picks_every_rank_alike);
    tcase_add_test(tc, test_levels_tile_omnilearn_cores);
    tcase_add_test(tc, test_choose_gives_distinct_ranks_and_slow_down_divides);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- OmniLearn's rule ------------------------------------------------ */

START_TEST(test_omnilearn_keeps_batches_inside_the_deadband)
{
    long b[3] = { 10, 20, 30 };
    const double t[3] = { 1.0, 1.1, 1.15 };   /* mean 1.0833: all within 20% */
    long sum = 0;
    int moved = -1;
    ck_assert_int_eq(ob_sim_omnilearn_adjust(3, 60, t, 0.2, 1, 60, b, &sum, &moved), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(moved, 0);
    ck_assert_int_eq(b[0], 10);
    ck_assert_int_eq(b[1], 20);
    ck_assert_int_eq(b[2], 30);
    ck_assert_int_eq(sum, 60);
}
END_TEST

START_TEST(test_omnilearn_scales_truncates_and_shares_down)
{
    /* mean t = 2: rank 0 goes to 50 * 2 / 1 = 100, rank 1 to
     * floor(50 * 2 / 3) = 33; sum 133, share ceil(-33 / 2) = -16:
     * 84 and 17, whose sum 101 exceeds B = 100. */
    long b[2] = { 50, 50 };
    const double t[2] = { 1.0, 3.0 };
    long sum = 0;
    int moved = 0;
    ck_assert_int_eq(ob_sim_omnilearn_adjust(2, 100, t, 0.2, 1, 100, b, &sum, &moved), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(moved, 2);
    ck_assert_int_eq(b[0], 84);
    ck_assert_int_eq(b[1], 17);
    ck_assert_int_eq(sum, 101);
}
END_TEST

START_TEST(test_omnilearn_share_up_breaks_the_upper_bound)
{
    /* mean t = 2: rank 0 wants 20 but hi = 10 holds it; rank 1 is at the
     * mean; rank 2 goes to floor(20 / 3) = 6.  Sum 26, share ceil(4 / 3) = 2:
     * 12, 12, 8 = 32 > B, and 12 > hi. */
    long b[3] = { 10, 10, 10 };
    const double t[3] = { 1.0, 2.0, 3.0 };
    long sum = 0;
    ck_assert_int_eq(ob_sim_omnilearn_adjust(3, 30, t, 0.2, 1, 10, b, &sum, NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(b[0], 12);
    ck_assert_int_eq(b[1], 12);
    ck_assert_int_eq(b[2], 8);
    ck_assert_int_eq(sum, 32);
}
END_TEST

START_TEST(test_omnilearn_lifts_a_negative_batch_to_one)
{
    /* mean t = 2: 20, 20, floor(10 * 2 / 4) = 5; sum 45, share -5:
     * 15, 15, 0 -> 1; sum 31. */
    long b[3] = { 10, 10, 10 };
    const double t[3] = { 1.0, 1.0, 4.0 };
    long sum = 0;
    ck_assert_int_eq(ob_sim_omnilearn_adjust(3, 30, t, 0.2, 1, 30, b, &sum, NULL), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(b[0], 15);
    ck_assert_int_eq(b[1], 15);
    ck_assert_int_eq(b[2], 1);
    ck_assert_int_eq(sum, 31);
}
END_TEST

START_TEST(test_omnilearn_rejects_bad_times_and_leaves_batches)
{
    long b[2] = { 5, 7 };
    const double t[2] = { 1.0, 0.0 };
    ck_assert_int_eq(ob_sim_omnilearn_adjust(2, 12, t, 0.2, 1, 12, b, NULL, NULL), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(b[0], 5);
    ck_assert_int_eq(b[1], 7);
    const double u[2] = { 1.0, NAN };
    ck_assert_int_eq(ob_sim_omnilearn_adjust(2, 12, u, 0.2, 1, 12, b, NULL, NULL), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_sim_omnilearn_adjust(2, 12, t, -0.1, 1, 12, b, NULL, NULL), OMNIBATCH_ERR_ARG);
}
END_TEST

static Suite *make_sim_omnilearn_suite(void)
{
    Suite *s = suite_create("sim_omnilearn");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_omnilearn_keeps_batches_inside_the_deadband);
    tcase_add_test(tc, test_omnilearn_scales_truncates_and_shares_down);
    tcase_add_test(tc, test_omnilearn_share_up_breaks_the_upper_bound);
    tcase_add_test(tc, test_omnilearn_lifts_a_negative_batch_to_one);
    tcase_add_test(tc, test_omnilearn_rejects_bad_times_and_leaves_batches);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- the integer oracle ---------------------------------------------- */

/* Every plan of B over P ranks within bounds, by recursion: the least step time. */
static double brute_best(const ob_rank_model *m, int P, int i, long left, double worst)
{
    if (i == P - 1) {
        if (left < m[i].lo || left > m[i].hi) {
            return INFINITY;
        }
        const double t = m[i].alpha + m[i].beta * (double) left;
        return t > worst ? t : worst;
    }
    double best = INFINITY;
    for (long b = m[i].lo; b <= m[i].hi && b <= left; b++) {
        const double t = m[i].alpha + m[i].beta * (double) b;
        const double v = brute_best(m, P, i + 1, left - b, t > worst ? t : worst);
        best = v < best ? v : best;
    }
    return best;
}

START_TEST(test_oracle_matches_brute_force)
{
    ob_sim_rng r;
    ob_sim_rng_seed(&r, 2024);
    int solved = 0;
    for (int trial = 0; trial < 3000; trial++) {
        const int P = 1 + (int) ob_sim_rng_below(&r, 4);
        const long B = 1 + ob_sim_rng_below(&r, 14);
        ob_rank_model m[4];
        for (int i = 0; i < P; i++) {
            /* small integers and halves make exact ties common */
            m[i].alpha = 0.5 * (double) ob_sim_rng_below(&r, 4);
            m[i].beta = 0.25 + 0.25 * (double) ob_sim_rng_below(&r, 8);
            m[i].lo = ob_sim_rng_below(&r, 3);
            m[i].hi = m[i].lo + ob_sim_rng_below(&r, 12);
        }
        const double want = brute_best(m, P, 0, B, 0.0);
        long plan[4];
        double T = -1.0;
        const int rc = ob_sim_integer_optimum(m, P, B, plan, &T);
        if (isinf(want)) {
            ck_assert_int_eq(rc, OMNIBATCH_ERR_INFEASIBLE);
            continue;
        }
        ck_assert_int_eq(rc, OMNIBATCH_SUCCESS);
        ck_assert_double_eq_tol(T, want, 1e-12 * want + 1e-15);
        long sum = 0;
        double t = 0.0;
        for (int i = 0; i < P; i++) {
            ck_assert(plan[i] >= m[i].lo && plan[i] <= m[i].hi);
            sum += plan[i];
            const double ti = m[i].alpha + m[i].beta * (double) plan[i];
            t = ti > t ? ti : t;
        }
        ck_assert_int_eq(sum, B);
        ck_assert_double_eq(t, T);
        solved++;
    }
    ck_assert_int_gt(solved, 1000);
}
END_TEST

START_TEST(test_oracle_of_identical_ranks_is_the_ceiling_share)
{
    enum { P = 10000 };
    static ob_rank_model m[P];
    for (int i = 0; i < P; i++) {
        m[i] = (ob_rank_model) { 0.01, 0.001, 1, 1000000 };
    }
    double T = 0.0;
    /* 64 * P + 1 samples: one rank must take 65 */
    ck_assert_int_eq(ob_sim_integer_optimum(m, P, 64L * P + 1, NULL, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(T, 0.01 + 0.001 * 65, 1e-12);
    ck_assert_int_eq(ob_sim_integer_optimum(m, P, 64L * P, NULL, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(T, 0.01 + 0.001 * 64, 1e-12);
}
END_TEST

START_TEST(test_oracle_refuses_infeasible_bounds)
{
    ob_rank_model m[2] = { { 0.0, 1.0, 3, 5 }, { 0.0, 1.0, 3, 5 } };
    double T;
    ck_assert_int_eq(ob_sim_integer_optimum(m, 2, 5, NULL, &T), OMNIBATCH_ERR_INFEASIBLE);
    ck_assert_int_eq(ob_sim_integer_optimum(m, 2, 11, NULL, &T), OMNIBATCH_ERR_INFEASIBLE);
    ck_assert_int_eq(ob_sim_integer_optimum(m, 2, 10, NULL, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq(T, 5.0);
    m[1].beta = 0.0;
    ck_assert_int_eq(ob_sim_integer_optimum(m, 2, 8, NULL, &T), OMNIBATCH_ERR_ARG);
}
END_TEST

static Suite *make_sim_oracle_suite(void)
{
    Suite *s = suite_create("sim_oracle");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_oracle_matches_brute_force);
    tcase_add_test(tc, test_oracle_of_identical_ranks_is_the_ceiling_share);
    tcase_add_test(tc, test_oracle_refuses_infeasible_bounds);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- convergence measures -------------------------------------------- */

START_TEST(test_first_for_good)
{
    const double x[] = { 2.0, 1.0, 1.5, 1.0, 1.0 };
    ck_assert_int_eq(ob_sim_first_for_good(x, 0, 5, 1.2), 3);
    ck_assert_int_eq(ob_sim_first_for_good(x, 0, 5, 2.0), 0);
    ck_assert_int_eq(ob_sim_first_for_good(x, 4, 5, 1.2), 4);
    ck_assert_int_eq(ob_sim_first_for_good(x, 0, 3, 1.2), 3);   /* x[2] is out: never */
}
END_TEST

START_TEST(test_converged_needs_the_band_and_no_later_change)
{
    /* [0] the first plan, then decisions 1..5 */
    const double ratio[] = { 1.5, 1.2, 1.02, 1.01, 1.02, 1.01 };
    const int changed[] = { 0, 1, 1, 0, 1, 0 };
    long settle = -5;
    ck_assert_int_eq(ob_sim_converged(ratio, changed, 5, 1.03, &settle), 4);
    ck_assert_int_eq(settle, 2);
    const int quiet[] = { 0, 1, 1, 0, 0, 0 };
    ck_assert_int_eq(ob_sim_converged(ratio, quiet, 5, 1.03, &settle), 2);
    ck_assert_int_eq(settle, 2);
    /* within the band from the start, never changed: 0 decisions */
    const double good[] = { 1.0, 1.0 };
    const int none[] = { 0, 0 };
    ck_assert_int_eq(ob_sim_converged(good, none, 1, 1.03, &settle), 0);
    ck_assert_int_eq(settle, 0);
    /* the last plan outside the band: never */
    const double bad[] = { 1.0, 1.01, 1.04 };
    const int some[] = { 0, 0, 1 };
    ck_assert_int_eq(ob_sim_converged(bad, some, 2, 1.03, &settle), -1);
    ck_assert_int_eq(settle, -1);
}
END_TEST

START_TEST(test_expected_max_of_normals)
{
    /* Exact for 2 and 3: 1 / sqrt(pi), 3 / (2 sqrt(pi)); 1000: 3.2414 (tables). */
    ck_assert_double_eq(ob_sim_expected_max_normal(1), 0.0);
    ck_assert_double_eq_tol(ob_sim_expected_max_normal(2), 1.0 / sqrt(M_PI), 1e-6);
    ck_assert_double_eq_tol(ob_sim_expected_max_normal(3), 1.5 / sqrt(M_PI), 1e-6);
    ck_assert_double_eq_tol(ob_sim_expected_max_normal(1000), 3.2414, 1e-3);
    ck_assert_double_gt(ob_sim_expected_max_normal(65536), ob_sim_expected_max_normal(4096));
}
END_TEST

START_TEST(test_noise_floor_counts_forgotten_samples_less)
{
    /* Without forgetting: sd / sqrt(samples); with it, fewer effective samples, a higher floor. */
    ck_assert_double_eq_tol(ob_sim_noise_floor(4.0, 0.1, 1.0, 100), 1.04, 1e-12);
    ck_assert_double_gt(ob_sim_noise_floor(4.0, 0.1, 0.99, 100), 1.04);
    ck_assert_double_lt(ob_sim_noise_floor(4.0, 0.1, 0.99, 1000), ob_sim_noise_floor(4.0, 0.1, 0.99, 100));
    ck_assert(isinf(ob_sim_noise_floor(4.0, 0.1, 1.0, 0)));
}
END_TEST

static Suite *make_sim_metrics_suite(void)
{
    Suite *s = suite_create("sim_metrics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_first_for_good);
    tcase_add_test(tc, test_converged_needs_the_band_and_no_later_change);
    tcase_add_test(tc, test_expected_max_of_normals);
    tcase_add_test(tc, test_noise_floor_counts_forgotten_samples_less);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_sim_random_suite());
    srunner_add_suite(sr, make_sim_speeds_suite());
    srunner_add_suite(sr, make_sim_omnilearn_suite());
    srunner_add_suite(sr, make_sim_oracle_suite());
    srunner_add_suite(sr, make_sim_metrics_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
