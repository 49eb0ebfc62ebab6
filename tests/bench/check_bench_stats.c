/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The order statistics the benchmarks print: a wrong median or tail would
 * make every overhead ratio wrong without looking wrong.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "ob_check_run.h"
#include "stats.h"

START_TEST(test_quantile_interpolates_between_order_statistics)
{
    const double x[] = { 1.0, 2.0, 3.0, 4.0 };

    ck_assert_double_eq_tol(ob_bench_quantile(x, 4, 0.0), 1.0, 1e-12);
    ck_assert_double_eq_tol(ob_bench_quantile(x, 4, 1.0), 4.0, 1e-12);
    /* even count: the median is the mean of the two middle values */
    ck_assert_double_eq_tol(ob_bench_quantile(x, 4, 0.5), 2.5, 1e-12);
    /* position 0.25 * 3 = 0.75: three quarters of the way from 1 to 2 */
    ck_assert_double_eq_tol(ob_bench_quantile(x, 4, 0.25), 1.75, 1e-12);
    ck_assert_double_eq_tol(ob_bench_quantile(x, 4, 0.9), 3.7, 1e-12);
}
END_TEST

START_TEST(test_odd_median_is_the_middle_value)
{
    const double x[] = { -5.0, 0.5, 7.0, 8.0, 100.0 };

    ck_assert_double_eq_tol(ob_bench_quantile(x, 5, 0.5), 7.0, 1e-12);
    ck_assert_double_eq_tol(ob_bench_quantile(x, 1, 0.5), -5.0, 1e-12);
    ck_assert_double_eq_tol(ob_bench_quantile(x, 1, 0.99), -5.0, 1e-12);
}
END_TEST

START_TEST(test_quantile_rejects_empty_and_out_of_range)
{
    const double x[] = { 1.0, 2.0 };

    ck_assert(isnan(ob_bench_quantile(x, 0, 0.5)));
    ck_assert(isnan(ob_bench_quantile(x, 2, -0.01)));
    ck_assert(isnan(ob_bench_quantile(x, 2, 1.01)));
    ck_assert(isnan(ob_bench_quantile(x, 2, NAN)));
    ck_assert(isnan(ob_bench_mean(x, 0)));
}
END_TEST

START_TEST(test_sort_orders_and_keeps_the_values)
{
    enum { N = 1001 };
    double x[N];
    double sum = 0.0;
    unsigned s = 12345u;

    for (int i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        x[i] = (double) (s >> 8) / 65536.0 - 100.0;
        sum += x[i];
    }
    ob_bench_sort(x, N);
    for (int i = 1; i < N; i++) {
        ck_assert(x[i - 1] <= x[i]);
    }
    ck_assert_double_eq_tol(ob_bench_mean(x, N), sum / N, 1e-9);
    /* the 500th of 1001 sorted values has 500 below and 500 above */
    ck_assert_double_eq_tol(ob_bench_quantile(x, N, 0.5), x[500], 1e-12);
}
END_TEST

START_TEST(test_quantile_is_monotone_in_q)
{
    double x[37];
    for (int i = 0; i < 37; i++) {
        x[i] = (double) ((i * 17) % 37) * 0.3;
    }
    ob_bench_sort(x, 37);
    double prev = ob_bench_quantile(x, 37, 0.0);
    for (int k = 1; k <= 100; k++) {
        const double q = ob_bench_quantile(x, 37, k / 100.0);
        ck_assert(q >= prev);
        prev = q;
    }
}
END_TEST

static Suite *make_bench_stats_suite(void)
{
    Suite *s = suite_create("bench_stats");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_quantile_interpolates_between_order_statistics);
    tcase_add_test(tc, test_odd_median_is_the_middle_value);
    tcase_add_test(tc, test_quantile_rejects_empty_and_out_of_range);
    tcase_add_test(tc, test_sort_orders_and_keeps_the_values);
    tcase_add_test(tc, test_quantile_is_monotone_in_q);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_bench_stats_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
