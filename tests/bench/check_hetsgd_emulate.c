/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The heterogeneity emulation's arithmetic and clocks.  No assertion on
 * how long anything took: only on order and on what the formulas give.
 */
#include "config.h"

#include <check.h>
#include <math.h>

#include "ob_check_run.h"
#include "emulate.h"
#include "ob_timing.h"

START_TEST(test_emulated_length)
{
    /* 10 ms of compute at a quarter speed, everyone slowed 1.5x, 2 ms fixed. */
    ck_assert_double_eq_tol(hetsgd_emulated_seconds(0.010, 0.25, 1.5, 0.002), 0.062, 1e-12);
    ck_assert_double_eq_tol(hetsgd_emulated_seconds(0.010, 1.0, 1.0, 0.0), 0.010, 1e-12);
}
END_TEST

START_TEST(test_auto_slowdown_fits_demand_to_cores)
{
    /* Speeds 1, 1, 0.5, 0.25 on 2 cores demand 2.75 cores: 1.375, with headroom. */
    ck_assert_double_eq_tol(hetsgd_auto_slowdown(2.75, 2), 1.375 * HETSGD_SLOWDOWN_HEADROOM, 1e-12);
    /* Nothing to fit: never below 1. */
    ck_assert_double_eq(hetsgd_auto_slowdown(0.5, 2), 1.0);
    ck_assert_double_eq_tol(hetsgd_auto_slowdown(4.0, 0), HETSGD_SLOWDOWN_HEADROOM, 1e-12);
}
END_TEST

START_TEST(test_crowded_slowdown_is_a_whole_number_above_contention)
{
    /* Ranks that ran 3 times slower than their CPU time when all computed at once. */
    ck_assert_double_eq(hetsgd_crowded_slowdown(3.0), ceil(3.0 * HETSGD_SLOWDOWN_HEADROOM));
    ck_assert_double_ge(hetsgd_crowded_slowdown(3.0), 3.0 * HETSGD_SLOWDOWN_HEADROOM);
    ck_assert_double_eq(hetsgd_crowded_slowdown(0.2), 1.0);
}
END_TEST

START_TEST(test_sleep_until_never_returns_early)
{
    for (int k = 0; k < 5; k++) {
        double deadline = ob_now() + 0.001 * k;

        hetsgd_sleep_until(deadline);
        ck_assert_double_ge(ob_now(), deadline);
    }
    /* A deadline in the past returns at once (and does not hang). */
    hetsgd_sleep_until(ob_now() - 1.0);
}
END_TEST

START_TEST(test_thread_cpu_time_counts_work_not_sleep)
{
    volatile double sink = 0.0;
    double c0 = hetsgd_thread_cpu_seconds();
    double c1, c2;

    for (long i = 0; i < 20000000L; i++) {
        sink += (double) i * 1e-9;
    }
    c1 = hetsgd_thread_cpu_seconds();
    ck_assert_double_gt(c1, c0);
    /* Sleeping 100 ms adds to the wall clock but (almost) nothing to the CPU
     * time: compared with the work just done, not with a fixed threshold. */
    hetsgd_sleep_until(ob_now() + 0.1 + 10.0 * (c1 - c0));
    c2 = hetsgd_thread_cpu_seconds();
    ck_assert_double_lt(c2 - c1, c1 - c0);
}
END_TEST

START_TEST(test_true_models_of_emulated_ranks)
{
    const double speeds[2] = { 1.0, 0.25 };
    const double alpha0[2] = { 0.001, 0.001 };
    const double beta0[2] = { 1e-5, 0.0 };
    ob_rank_model m[2];

    hetsgd_emulated_models(2, speeds, alpha0, beta0, 2.0, 0.003, 1, 64, m);
    /* t_0(b) = 2 (0.001 + 1e-5 b) / 1 + 0.003 */
    ck_assert_double_eq_tol(m[0].alpha, 0.005, 1e-15);
    ck_assert_double_eq_tol(m[0].beta, 2e-5, 1e-18);
    /* A quarter speed: four times both costs; a zero beta stays positive. */
    ck_assert_double_eq_tol(m[1].alpha, 0.011, 1e-15);
    ck_assert_double_gt(m[1].beta, 0.0);
    ck_assert_int_eq(m[1].lo, 1);
    ck_assert_int_eq(m[1].hi, 64);
}
END_TEST

/* A chunk's cost is the intercept of the line through two warm passes: the
 * sweep of a calibration on a 2-core VM, 608 us for 16 samples and 8960 us
 * for 256, is 51 us beside 34.8 us a sample, whatever the slope of the cold
 * passes (52.3 us a sample there, which made it 0). */
START_TEST(test_chunk_cost_from_warm_passes)
{
    ck_assert_double_eq_tol(hetsgd_chunk_cost(16, 608e-6, 256, 8960e-6), 608e-6 - 16 * (8352e-6 / 240), 1e-12);
    ck_assert_double_eq_tol(hetsgd_chunk_cost(4, 0.5, 8, 0.9), 0.1, 1e-12);
    /* A line through the origin or below it: no cost. */
    ck_assert_double_eq(hetsgd_chunk_cost(16, 16e-6, 256, 256e-6), 0.0);
    ck_assert_double_eq(hetsgd_chunk_cost(16, 10e-6, 256, 400e-6), 0.0);
    /* No second size: none. */
    ck_assert_double_eq(hetsgd_chunk_cost(16, 1e-3, 16, 2e-3), 0.0);
    ck_assert_double_eq(hetsgd_chunk_cost(16, 1e-3, 8, 2e-3), 0.0);
}
END_TEST

static Suite *make_hetsgd_emulate_suite(void)
{
    Suite *s = suite_create("hetsgd_emulate");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_emulated_length);
    tcase_add_test(tc, test_chunk_cost_from_warm_passes);
    tcase_add_test(tc, test_auto_slowdown_fits_demand_to_cores);
    tcase_add_test(tc, test_crowded_slowdown_is_a_whole_number_above_contention);
    tcase_add_test(tc, test_sleep_until_never_returns_early);
    tcase_add_test(tc, test_thread_cpu_time_counts_work_not_sleep);
    tcase_add_test(tc, test_true_models_of_emulated_ranks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_emulate_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
