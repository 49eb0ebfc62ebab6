/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A worker's pushes counted: applied plus dropped is every push; the
 * staleness's mean, maximum and quantiles, exact, with the overflow bin.
 */
#include "config.h"

#include <check.h>

#include "ob_tally.h"

START_TEST(test_every_push_is_applied_or_dropped)
{
    ob_tally t;

    ob_tally_init(&t);
    ob_tally_add(&t, 0, 1, 16, 0.5);
    ob_tally_add(&t, 9, 0, 32, 1.0);
    ob_tally_add(&t, 2, 1, 8, -1.0);   /* an unknown compute counts as none */
    ck_assert_int_eq(t.pushes, 3);
    ck_assert_int_eq(t.applied, 2);
    ck_assert_int_eq(t.dropped, 1);
    ck_assert_int_eq(t.applied + t.dropped, t.pushes);
    ck_assert_int_eq(t.samples, 56);
    ck_assert_double_eq_tol(t.compute_s, 1.5, 1e-15);
    ck_assert_int_eq(t.stale_max, 9);
    ck_assert_double_eq_tol(ob_tally_mean(&t), 11.0 / 3.0, 1e-15);
}
END_TEST

START_TEST(test_quantiles)
{
    ob_tally t;

    ob_tally_init(&t);
    ck_assert_int_eq(ob_tally_quantile(&t, 0.99), 0);
    ck_assert_double_eq(ob_tally_mean(&t), 0.0);
    /* 100 pushes: staleness 0..98 once each, then one of 500. */
    for (long s = 0; s < 99; s++) {
        ob_tally_add(&t, s, 1, 1, 0.0);
    }
    ob_tally_add(&t, 500, 1, 1, 0.0);
    ck_assert_int_eq(ob_tally_quantile(&t, 0.5), 49);
    ck_assert_int_eq(ob_tally_quantile(&t, 0.99), 98);
    ck_assert_int_eq(ob_tally_quantile(&t, 1.0), 500);
    ck_assert_int_eq(t.stale_max, 500);
    /* Past the histogram: the last bin says "at least that". */
    ob_tally_add(&t, 100000, 0, 1, 0.0);
    ob_tally_add(&t, 100000, 0, 1, 0.0);
    ck_assert_int_eq(ob_tally_quantile(&t, 1.0), OB_TALLY_BINS - 1);
    ck_assert_int_eq(t.stale_max, 100000);
}
END_TEST

static Suite *make_tally_suite(void)
{
    Suite *s = suite_create("tally");
    TCase *tc = tcase_create("pushes");

    tcase_add_test(tc, test_every_push_is_applied_or_dropped);
    tcase_add_test(tc, test_quantiles);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_tally_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
