/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Speeds that change inside a step (bench/hetsgd/profile.h): when work
 * ends, and the best split of a step that knows when the change comes.
 */
#include "config.h"

#include <check.h>

#include "ob_error.h"
#include "ob_planner.h"
#include "profile.h"

START_TEST(test_work_ends_at_the_speed_of_each_part)
{
    /* Full speed until 0.5 s, then 1/20 (the vanish). */
    const hetsgd_profile drop = { 1.0, 0.05, 0.5 };
    /* 1/20 until 1 s, then full speed (the vanished rank's return). */
    const hetsgd_profile rise = { 0.05, 1.0, 1.0 };
    /* No change inside the step: the speed after from the start. */
    const hetsgd_profile flat = { 1.0, 0.5, 0.0 };

    ck_assert_double_eq_tol(hetsgd_profile_finish(&drop, 0.0, 0.3), 0.3, 1e-12);
    ck_assert_double_eq_tol(hetsgd_profile_finish(&drop, 0.5, 0.0), 0.5, 1e-12);
    /* 0.1 s of work before the change, the other 0.2 at 1/20: 4 s. */
    ck_assert_double_eq_tol(hetsgd_profile_finish(&drop, 0.4, 0.3), 4.5, 1e-12);
    ck_assert_double_eq_tol(hetsgd_profile_finish(&drop, 0.6, 0.1), 2.6, 1e-12);
    ck_assert_double_eq_tol(hetsgd_profile_finish(&rise, 0.0, 0.1), 1.05, 1e-12);
    ck_assert_double_eq_tol(hetsgd_profile_finish(&rise, 0.0, 0.04), 0.8, 1e-12);
    ck_assert_double_eq_tol(hetsgd_profile_finish(&flat, 0.1, 0.2), 0.5, 1e-12);
    ck_assert_double_eq(hetsgd_profile_work(&drop, -1.0), 0.0);
    ck_assert_double_eq_tol(hetsgd_profile_work(&drop, 0.25), 0.25, 1e-12);
    ck_assert_double_eq_tol(hetsgd_profile_work(&drop, 1.0), 0.525, 1e-12);
    ck_assert_double_eq_tol(hetsgd_profile_work(&flat, 1.0), 0.5, 1e-12);
    /* The two agree: the work done by a step's end is what ends then. */
    ck_assert_double_eq_tol(hetsgd_profile_finish(&drop, 0.0, hetsgd_profile_work(&drop, 3.0)), 3.0, 1e-12);
}
END_TEST

/* Without a change inside the step it is the water-filling of the planner. */
START_TEST(test_without_a_change_the_optimum_is_water_filling)
{
    const double speeds[4] = { 1.0, 1.0, 0.5, 0.25 };
    hetsgd_profile p[4];
    hetsgd_work_model w[4];
    ob_rank_model m[4];
    double target[4], want[4], T = 0.0, want_T = 0.0;
    long plan[4] = { 256, 256, 256, 256 };

    for (int i = 0; i < 4; i++) {
        p[i] = (hetsgd_profile) { speeds[i], speeds[i], 0.0 };
        w[i] = (hetsgd_work_model) { 0.002, 1e-4, 0.001, 1, 1024 };
        m[i] = (ob_rank_model) { 0.002 / speeds[i] + 0.001, 1e-4 / speeds[i], 1, 1024 };
    }
    ck_assert_int_eq(hetsgd_profile_optimum(p, w, 4, 1024, target, &T), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_plan_optimum(m, 4, 1024, want, &want_T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(T, want_T, 1e-12);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq_tol(target[i], want[i], 1e-6);
    }
    ck_assert_double_eq_tol(hetsgd_profile_step_time(p, w, 4, plan), ob_plan_step_time(m, 4, plan), 1e-12);
}
END_TEST

/* The vanish with the change half-way into the step: 4 ranks of 1 s per
 * sample, B = 4, rank 3 at 1/20 from 0.5 s on.  The best split ends when
 * 3T + 0.5 + (T - 0.5) / 20 = 4: T = 3.525 / 3.05. */
START_TEST(test_the_optimum_knows_when_the_speed_drops)
{
    hetsgd_profile p[4];
    hetsgd_work_model w[4];
    double target[4], T = 0.0, sum = 0.0;
    const long equal[4] = { 1, 1, 1, 1 };

    for (int i = 0; i < 4; i++) {
        p[i] = (hetsgd_profile) { 1.0, 3 == i ? 0.05 : 1.0, 0.5 };
        w[i] = (hetsgd_work_model) { 0.0, 1.0, 0.0, 0, 4 };
    }
    ck_assert_int_eq(hetsgd_profile_optimum(p, w, 4, 4, target, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(T, 3.525 / 3.05, 1e-12);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq_tol(target[i], 3 == i ? 0.5 + (T - 0.5) * 0.05 : T, 1e-9);
        sum += target[i];
    }
    ck_assert_double_eq_tol(sum, 4.0, 1e-9);
    /* The equal split waits for rank 3's second half-sample at 1/20: 0.5 + 10 s. */
    ck_assert_double_eq_tol(hetsgd_profile_step_time(p, w, 4, equal), 10.5, 1e-12);
}
END_TEST

START_TEST(test_bounds_that_cannot_hold_the_batch)
{
    hetsgd_profile p[2] = { { 1.0, 1.0, 0.0 }, { 1.0, 1.0, 0.0 } };
    hetsgd_work_model w[2] = { { 0.0, 1.0, 0.0, 1, 10 }, { 0.0, 1.0, 0.0, 1, 10 } };
    double T = 0.0;

    ck_assert_int_eq(hetsgd_profile_optimum(p, w, 2, 21, NULL, &T), OMNIBATCH_ERR_INFEASIBLE);
    ck_assert_str_eq(ob_last_error(), "the bounds hold 2..20 samples: expected B = 21 within");
    ck_assert_int_eq(hetsgd_profile_optimum(p, w, 2, 1, NULL, &T), OMNIBATCH_ERR_INFEASIBLE);
    /* At the upper bounds exactly: both full. */
    ck_assert_int_eq(hetsgd_profile_optimum(p, w, 2, 20, NULL, &T), OMNIBATCH_SUCCESS);
    ck_assert_double_eq_tol(T, 10.0, 1e-9);
}
END_TEST

static Suite *make_hetsgd_profile_suite(void)
{
    Suite *s = suite_create("hetsgd_profile");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_work_ends_at_the_speed_of_each_part);
    tcase_add_test(tc, test_without_a_change_the_optimum_is_water_filling);
    tcase_add_test(tc, test_the_optimum_knows_when_the_speed_drops);
    tcase_add_test(tc, test_bounds_that_cannot_hold_the_batch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_profile_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
