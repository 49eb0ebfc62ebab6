/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OmniLearn's published rule as the training benchmark applies it, worked
 * by hand on small cases, and its mapping onto a fixed global batch.
 */
#include "config.h"

#include <check.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "omnilearn.h"

static long sum_of(const long *b, int P)
{
    long s = 0;

    for (int i = 0; i < P; i++) {
        s += b[i];
    }
    return s;
}

START_TEST(test_within_deadband_nothing_moves)
{
    /* mean 1.05: the largest deviation is 0.15 / 1.05 = 14% < 20%. */
    const long b[4] = { 64, 64, 64, 64 };
    const double t[4] = { 0.9, 1.0, 1.1, 1.2 };
    long out[4];

    ck_assert_int_eq(hetsgd_omnilearn_published(b, t, 4, 256, HETSGD_OMNILEARN_DEADBAND, 1, 256, out),
                     OMNIBATCH_SUCCESS);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(out[i], 64);
    }
}
END_TEST

START_TEST(test_proportional_step_and_equal_share)
{
    /* mean 2: ranks 0, 1 (50% fast) double to 128, rank 2 is at the mean,
     * rank 3 (100% slow) halves to 32.  Sum 352; share (256 - 352) / 4 = -24. */
    const long b[4] = { 64, 64, 64, 64 };
    const double t[4] = { 1.0, 1.0, 2.0, 4.0 };
    const long expected[4] = { 104, 104, 40, 8 };
    long out[4];

    ck_assert_int_eq(hetsgd_omnilearn_published(b, t, 4, 256, HETSGD_OMNILEARN_DEADBAND, 1, 256, out),
                     OMNIBATCH_SUCCESS);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(out[i], expected[i]);
    }
}
END_TEST

START_TEST(test_deadband_is_per_rank_and_ceil_overfills)
{
    /* mean 1.1: ranks 0-2 deviate 9% (kept at 64); rank 3 deviates 27% and
     * becomes floor(64 * 1.1 / 1.4) = floor(50.29) = 50.  Sum 242; the share
     * ceil(14 / 4) = ceil(3.5) = 4 goes to every rank: 68, 68, 68, 54, which
     * sum to 258 > B. */
    const long b[4] = { 64, 64, 64, 64 };
    const double t[4] = { 1.0, 1.0, 1.0, 1.4 };
    long out[4];

    ck_assert_int_eq(hetsgd_omnilearn_published(b, t, 4, 256, HETSGD_OMNILEARN_DEADBAND, 1, 256, out),
                     OMNIBATCH_SUCCESS);
    ck_assert_int_eq(out[0], 68);
    ck_assert_int_eq(out[1], 68);
    ck_assert_int_eq(out[2], 68);
    ck_assert_int_eq(out[3], 54);
    ck_assert_int_eq(sum_of(out, 4), 258);
    /* The input plan is left alone. */
    ck_assert_int_eq(b[3], 64);
}
END_TEST

START_TEST(test_share_after_bounds_can_break_them)
{
    /* As in the proportional case, but with bounds [60, 100]: the moved ranks
     * 128, 128 and 32 are clamped to 100, 100 and 60 (rank 2, at the mean,
     * keeps 64; sum 324); the share ceil(-68 / 4) = -17 then takes ranks 2
     * and 3 to 47 and 43, below the lower bound of 60. */
    const long b[4] = { 64, 64, 64, 64 };
    const double t[4] = { 1.0, 1.0, 2.0, 4.0 };
    const long expected[4] = { 83, 83, 47, 43 };
    long out[4];

    ck_assert_int_eq(hetsgd_omnilearn_published(b, t, 4, 256, HETSGD_OMNILEARN_DEADBAND, 60, 100, out),
                     OMNIBATCH_SUCCESS);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(out[i], expected[i]);
    }
}
END_TEST

START_TEST(test_a_custom_deadband_is_honoured)
{
    /* With no dead-band, the 7% ranks move too: every b_i * mean / t_i. */
    const long b[2] = { 50, 50 };
    const double t[2] = { 1.0, 1.1 };
    long out[2];

    /* mean 1.05: floor(50 * 1.05) = 52 and floor(50 * 1.05 / 1.1) = 47; sum
     * 99, share ceil(1 / 2) = 1: 53 and 48. */
    ck_assert_int_eq(hetsgd_omnilearn_published(b, t, 2, 100, 0.0, 1, 100, out), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(out[0], 53);
    ck_assert_int_eq(out[1], 48);
    ck_assert_int_eq(hetsgd_omnilearn_published(b, t, 2, 100, HETSGD_OMNILEARN_DEADBAND, 1, 100, out),
                     OMNIBATCH_SUCCESS);
    ck_assert_int_eq(out[0], 50);
    ck_assert_int_eq(out[1], 50);
}
END_TEST

START_TEST(test_fit_trims_the_largest_to_the_global_batch)
{
    const long published[4] = { 67, 67, 67, 56 };
    long plan[4];

    ck_assert_int_eq(hetsgd_omnilearn_fit(published, 4, 256, 1, 256, plan), OMNIBATCH_SUCCESS);
    /* One sample over: taken from the largest, the lowest rank on ties. */
    ck_assert_int_eq(plan[0], 66);
    ck_assert_int_eq(plan[1], 67);
    ck_assert_int_eq(plan[2], 67);
    ck_assert_int_eq(plan[3], 56);
}
END_TEST

START_TEST(test_fit_restores_bounds_then_the_sum)
{
    /* 83, 83, 47, 43 within [60, 100]: 47 and 43 rise to 60 (sum 286), then
     * 30 samples come off the largest, alternately, until 256. */
    const long published[4] = { 83, 83, 47, 43 };
    long plan[4];

    ck_assert_int_eq(hetsgd_omnilearn_fit(published, 4, 256, 60, 100, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 68);
    ck_assert_int_eq(plan[1], 68);
    ck_assert_int_eq(plan[2], 60);
    ck_assert_int_eq(plan[3], 60);
    ck_assert_int_eq(sum_of(plan, 4), 256);
}
END_TEST

START_TEST(test_fit_fills_a_shortfall_from_the_smallest)
{
    const long published[3] = { 0, 5, 20 };
    long plan[3];

    /* hi = 12 cuts 20 to 12; lo = 1 raises 0 to 1: sum 18, 2 short of 20.
     * They go to the smallest (rank 0), one at a time. */
    ck_assert_int_eq(hetsgd_omnilearn_fit(published, 3, 20, 1, 12, plan), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(plan[0], 3);
    ck_assert_int_eq(plan[1], 5);
    ck_assert_int_eq(plan[2], 12);
}
END_TEST

START_TEST(test_fit_refuses_infeasible_bounds)
{
    const long published[2] = { 5, 5 };
    long plan[2];

    ck_assert_int_eq(hetsgd_omnilearn_fit(published, 2, 10, 6, 10, plan), OMNIBATCH_ERR_INFEASIBLE);
    ck_assert_int_eq(hetsgd_omnilearn_fit(published, 2, 10, 1, 4, plan), OMNIBATCH_ERR_INFEASIBLE);
    ck_assert_int_eq(hetsgd_omnilearn_published(published, (const double[]) { 1, 1 }, 2, 10, 0.2, 5, 4, plan),
                     OMNIBATCH_ERR_ARG);
    /* A rank without a measured time cannot be judged. */
    ck_assert_int_eq(hetsgd_omnilearn_published(published, (const double[]) { 1, 0 }, 2, 10, 0.2, 1, 10, plan),
                     OMNIBATCH_ERR_ARG);
}
END_TEST

static Suite *make_hetsgd_omnilearn_suite(void)
{
    Suite *s = suite_create("hetsgd_omnilearn");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_within_deadband_nothing_moves);
    tcase_add_test(tc, test_proportional_step_and_equal_share);
    tcase_add_test(tc, test_deadband_is_per_rank_and_ceil_overfills);
    tcase_add_test(tc, test_share_after_bounds_can_break_them);
    tcase_add_test(tc, test_a_custom_deadband_is_honoured);
    tcase_add_test(tc, test_fit_trims_the_largest_to_the_global_batch);
    tcase_add_test(tc, test_fit_restores_bounds_then_the_sum);
    tcase_add_test(tc, test_fit_fills_a_shortfall_from_the_smallest);
    tcase_add_test(tc, test_fit_refuses_infeasible_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_omnilearn_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
