/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The controller's statistics (src/control/maths.c) against libm and known
 * values: they avoid libm so that every rank computes the same bits, but
 * must agree with it to the accuracy each function promises.
 */
#include "config.h"

#include <check.h>
#include <math.h>

#include "ob_check_run.h"
#include "ob_maths.h"

START_TEST(test_exp_matches_libm)
{
    for (double x = -700.0; x <= 0.0; x += 0.37) {
        double want = exp(x);

        ck_assert_msg(fabs(ob_exp_nonpositive(x) - want) <= 3e-13 * want, "e^%g", x);
    }
    ck_assert(1.0 == ob_exp_nonpositive(0.0));
    ck_assert(0.0 == ob_exp_nonpositive(-746.0));
    ck_assert(0.0 == ob_exp_nonpositive((double) NAN));
}
END_TEST

START_TEST(test_normal_matches_erfc)
{
    for (double x = -8.0; x <= 8.0; x += 0.01) {
        double pdf, cdf;

        ob_normal_pdf_cdf(x, &pdf, &cdf);
        ck_assert_double_eq_tol(cdf, 0.5 * erfc(-x / sqrt(2.0)), 1.5e-7);
        ck_assert_double_eq_tol(pdf, exp(-0.5 * x * x) / sqrt(2.0 * M_PI), 1e-13);
    }
}
END_TEST

START_TEST(test_spread_of_the_maximum)
{
    /* One deviate: mean 0; two: 1/sqrt(pi); between powers of two, in between. */
    ck_assert_double_eq_tol(ob_max_normal_spread(1), 0.0, 1e-12);
    ck_assert_double_eq_tol(ob_max_normal_spread(2), 1.0 / sqrt(M_PI), 1e-9);
    ck_assert(ob_max_normal_spread(3) > ob_max_normal_spread(2));
    ck_assert(ob_max_normal_spread(3) < ob_max_normal_spread(4));
    ck_assert_double_eq_tol(ob_max_normal_spread(65536), 4.291129316, 1e-9);
}
END_TEST

START_TEST(test_fold_two_normals_exactly)
{
    /* max of two independent N(0, 1): mean 1/sqrt(pi), variance 1 - 1/pi. */
    ob_normal_max m = { 0.0, 1.0 };

    ob_normal_max_fold(&m, 0.0, 1.0);
    ck_assert_double_eq_tol(m.mean, 1.0 / sqrt(M_PI), 2e-7);
    ck_assert_double_eq_tol(m.var, 1.0 - 1.0 / M_PI, 2e-7);
}
END_TEST

START_TEST(test_fold_certain_and_degenerate)
{
    ob_normal_max m = { 10.0, 0.01 };

    /* Far below: nothing changes; far above: it takes over. */
    ob_normal_max_fold(&m, 1.0, 0.01);
    ck_assert(10.0 == m.mean && 0.01 == m.var);
    ob_normal_max_fold(&m, 20.0, 0.04);
    ck_assert(20.0 == m.mean && 0.04 == m.var);
    /* No spread at all: the plain maximum. */
    m.mean = 3.0;
    m.var = 0.0;
    ob_normal_max_fold(&m, 5.0, 0.0);
    ck_assert(5.0 == m.mean);
}
END_TEST

START_TEST(test_fold_many_equal_normals)
{
    /* Clark's fold of P equal standard normals is within 0.5% of the spread's table. */
    ob_normal_max m = { 0.0, 1.0 };

    for (int i = 1; i < 65536; i++) {
        ob_normal_max_fold(&m, 0.0, 1.0);
    }
    ck_assert_double_eq_tol(m.mean, 4.2, 0.2);
}
END_TEST

static Suite *make_maths_suite(void)
{
    Suite *s = suite_create("maths");
    TCase *tc = tcase_create("statistics");

    tcase_add_test(tc, test_exp_matches_libm);
    tcase_add_test(tc, test_normal_matches_erfc);
    tcase_add_test(tc, test_spread_of_the_maximum);
    tcase_add_test(tc, test_fold_two_normals_exactly);
    tcase_add_test(tc, test_fold_certain_and_degenerate);
    tcase_add_test(tc, test_fold_many_equal_normals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_maths_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
