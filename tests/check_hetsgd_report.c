/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The benchmark's trace file and recovery figures.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_error.h"
#include "report.h"

START_TEST(test_recovery_counts_steps_to_tolerance)
{
    /* Start converges after 2 steps; a change at 5 recovers after 1 step; a
     * change at 8 never does before the end.  Step 6 is not judged. */
    const double ratio[10] = { 1.5, 1.2, 1.04, 1.0, 1.0, 1.3, -1.0, 1.05, 1.4, 1.2 };
    const unsigned char change[10] = { 1, 0, 0, 0, 0, 1, 0, 0, 1, 0 };
    hetsgd_recovery_stats s;

    hetsgd_recovery(ratio, change, 10, 1.05, &s);
    ck_assert_int_eq(s.initial, 2);
    ck_assert_int_eq(s.changes, 2);
    ck_assert_int_eq(s.worst, 2);
    ck_assert_double_eq(s.mean, 2.0);
    ck_assert_int_eq(s.unrecovered, 1);
}
END_TEST

START_TEST(test_recovery_stops_at_the_next_change)
{
    /* The first change (step 2) is overtaken by the second (step 4) before
     * it recovers; the second recovers at once. */
    const double ratio[6] = { 1.0, 1.0, 1.3, 1.2, 1.01, 1.0 };
    const unsigned char change[6] = { 1, 0, 1, 0, 1, 0 };
    hetsgd_recovery_stats s;

    hetsgd_recovery(ratio, change, 6, 1.05, &s);
    ck_assert_int_eq(s.initial, 0);
    ck_assert_int_eq(s.changes, 2);
    ck_assert_int_eq(s.unrecovered, 1);
    ck_assert_int_eq(s.worst, 0);
    ck_assert_double_eq(s.mean, 0.0);
}
END_TEST

START_TEST(test_mean_skips_unjudged_steps)
{
    const double x[5] = { 10.0, -1.0, 2.0, 4.0, -1.0 };

    ck_assert_double_eq(hetsgd_mean_judged(x, 0, 5), 16.0 / 3.0);
    ck_assert_double_eq(hetsgd_mean_judged(x, 1, 4), 3.0);
    ck_assert_double_eq(hetsgd_mean_judged(x, 4, 5), 0.0);
}
END_TEST

START_TEST(test_trace_rows_per_step_and_rank)
{
    char path[256];
    const char *base = getenv("TMPDIR");
    double rec[2 * 3 * HETSGD_TRACE_FIELDS];
    char line[256];
    FILE *f;
    int fd;
    int rows = 0;

    /* rank r, step k: batch 10r + k, compute 0.001k, step 0.01, speed 1/(r+1), cpu 0.0005 */
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 3; k++) {
            double *x = rec + (r * 3 + k) * HETSGD_TRACE_FIELDS;
            x[HETSGD_TRACE_BATCH] = 10 * r + k;
            x[HETSGD_TRACE_COMPUTE] = 0.001 * k;
            x[HETSGD_TRACE_STEP] = 0.01;
            x[HETSGD_TRACE_SPEED] = 1.0 / (r + 1);
            x[HETSGD_TRACE_CPU] = 0.0005;
        }
    }
    snprintf(path, sizeof path, "%s/hetsgd-trace-XXXXXX", NULL != base ? base : "/tmp");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(hetsgd_write_trace(path, "oracle", 3, 2, rec), OMNIBATCH_SUCCESS);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "step,rank,policy,batch,compute_s,step_s,speed,cpu_s\n");
    while (NULL != fgets(line, sizeof line, f)) {
        long step, batch;
        int rank;
        char policy[16];
        double compute, step_s, speed, cpu;

        ck_assert_int_eq(sscanf(line, "%ld,%d,%15[^,],%ld,%lf,%lf,%lf,%lf", &step, &rank, policy, &batch,
                                &compute, &step_s, &speed, &cpu), 8);
        /* Steps in order, ranks within each step. */
        ck_assert_int_eq(step, rows / 2);
        ck_assert_int_eq(rank, rows % 2);
        ck_assert_str_eq(policy, "oracle");
        ck_assert_int_eq(batch, 10 * rank + step);
        ck_assert_double_eq_tol(compute, 0.001 * step, 1e-12);
        ck_assert_double_eq_tol(speed, 1.0 / (rank + 1), 1e-6);
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 6);
    unlink(path);
    ck_assert_int_eq(hetsgd_write_trace("/nonexistent-dir/t.csv", "static", 3, 2, rec), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "--trace /nonexistent-dir/t.csv: cannot create"));
}
END_TEST

START_TEST(test_overruns_judge_the_step_not_each_rank)
{
    /* Two ranks, slowdown 2, no alpha.  Rank 0 at speed 1 with 10 ms of CPU
     * should take 20 ms; rank 1 at speed 0.25 with 5 ms should take 40 ms. */
    double rec[2 * 3 * HETSGD_TRACE_FIELDS];
    const double compute[2][3] = {
        { 0.030, 0.020, 0.020 },   /* step 0: rank 0 overran, but rank 1 still set the step */
        { 0.040, 0.040, 0.050 }    /* step 2: rank 1 overran its 40 ms by 25% */
    };

    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 3; k++) {
            double *x = rec + (r * 3 + k) * HETSGD_TRACE_FIELDS;
            x[HETSGD_TRACE_CPU] = 0 == r ? 0.010 : 0.005;
            x[HETSGD_TRACE_SPEED] = 0 == r ? 1.0 : 0.25;
            x[HETSGD_TRACE_COMPUTE] = compute[r][k];
        }
    }
    ck_assert_int_eq(hetsgd_overrun_steps(rec, 3, 2, 2.0, 0.0), 1);
    /* With 15 ms of alpha the longest emulated step is 55 ms: no overrun. */
    ck_assert_int_eq(hetsgd_overrun_steps(rec, 3, 2, 2.0, 0.015), 0);
}
END_TEST

static Suite *make_hetsgd_report_suite(void)
{
    Suite *s = suite_create("hetsgd_report");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_recovery_counts_steps_to_tolerance);
    tcase_add_test(tc, test_recovery_stops_at_the_next_change);
    tcase_add_test(tc, test_mean_skips_unjudged_steps);
    tcase_add_test(tc, test_trace_rows_per_step_and_rank);
    tcase_add_test(tc, test_overruns_judge_the_step_not_each_rank);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_report_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
