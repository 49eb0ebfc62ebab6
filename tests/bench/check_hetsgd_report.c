/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The benchmark's trace file and recovery figures.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "report.h"

START_TEST(test_recovery_counts_steps_to_tolerance)
{
    /* Start converges after 2 steps; a change at 5 recovers after 1 step; a
     * change at 8 never does before the end.  Step 6 is not judged. */
    const double ratio[10] = { 1.5, 1.2, 1.04, 1.0, 1.0, 1.3, -1.0, 1.05, 1.4, 1.2 };
    const unsigned char change[10] = { 1, 0, 0, 0, 0, 1, 0, 0, 1, 0 };
    hetsgd_recovery_stats s;

    hetsgd_recovery(ratio, change, 10, 1.05, 1, &s);
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

    hetsgd_recovery(ratio, change, 6, 1.05, 1, &s);
    ck_assert_int_eq(s.initial, 0);
    ck_assert_int_eq(s.changes, 2);
    ck_assert_int_eq(s.unrecovered, 1);
    ck_assert_int_eq(s.worst, 0);
    ck_assert_double_eq(s.mean, 0.0);
}
END_TEST

START_TEST(test_recovery_holds_for_steps_in_a_row)
{
    /* Held for 3 judged steps: the start's 1.04 at step 1 is undone by step 2, so it recovers at
     * step 3 (steps 3, 4 and 6; step 5 is not judged).  The change at 7 recovers at 8, where
     * only 2 steps remain before the end. */
    const double ratio[10] = { 1.3, 1.04, 1.2, 1.03, 1.02, -1.0, 1.01, 1.5, 1.0, 1.0 };
    const unsigned char change[10] = { 1, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
    hetsgd_recovery_stats s;

    hetsgd_recovery(ratio, change, 10, 1.05, 3, &s);
    ck_assert_int_eq(s.initial, 3);
    ck_assert_int_eq(s.changes, 1);
    ck_assert_int_eq(s.worst, 1);
    ck_assert_int_eq(s.unrecovered, 0);
    /* One step within is enough with hold 1. */
    hetsgd_recovery(ratio, change, 10, 1.05, 1, &s);
    ck_assert_int_eq(s.initial, 1);
    /* A phase that ends on a step outside is never recovered, however long the hold. */
    {
        const double r2[4] = { 1.0, 1.0, 1.0, 1.2 };
        const unsigned char c2[4] = { 1, 0, 1, 0 };

        hetsgd_recovery(r2, c2, 4, 1.05, 2, &s);
        ck_assert_int_eq(s.initial, 0);
        ck_assert_int_eq(s.unrecovered, 1);
    }
}
END_TEST

/* One step of a trace of P ranks: batches b and compute times t. */
static void fill_step(double *rec, int P, const double *b, const double *t)
{
    memset(rec, 0, (size_t) P * HETSGD_TRACE_FIELDS * sizeof *rec);
    for (int i = 0; i < P; i++) {
        rec[i * HETSGD_TRACE_FIELDS + HETSGD_TRACE_BATCH] = b[i];
        rec[i * HETSGD_TRACE_FIELDS + HETSGD_TRACE_COMPUTE] = t[i];
    }
}

START_TEST(test_balance_ratio_is_one_exactly_when_balanced)
{
    double rec[3 * HETSGD_TRACE_FIELDS];
    double T = 0.0;

    /* Different batches, equal times: balanced, whatever the throughputs. */
    fill_step(rec, 3, (const double[]) { 100, 200, 50 }, (const double[]) { 0.1, 0.1, 0.1 });
    ck_assert_double_eq_tol(hetsgd_balance_ratio(rec, 1, 3, 0, &T), 1.0, 1e-12);
    ck_assert_double_eq_tol(T, 0.1, 1e-12);
    /* Rank 1 has half the throughput of rank 0; spread by throughput, 200 samples give rank 0
     * 400/3 and rank 1 200/3, and both take 2/15 s. */
    fill_step(rec, 2, (const double[]) { 100, 100 }, (const double[]) { 0.1, 0.2 });
    ck_assert_double_eq_tol(hetsgd_balance_ratio(rec, 1, 2, 0, &T), 0.2 / (2.0 / 15.0), 1e-12);
    ck_assert_double_eq_tol(T, 2.0 / 15.0, 1e-12);
    ck_assert_double_eq_tol((400.0 / 3.0) * 0.1 / 100.0, T, 1e-12);
    ck_assert_double_eq_tol((200.0 / 3.0) * 0.2 / 100.0, T, 1e-12);
    /* NULL is allowed for T*; a time that is not positive is not judged. */
    ck_assert_double_gt(hetsgd_balance_ratio(rec, 1, 2, 0, NULL), 1.0);
    fill_step(rec, 2, (const double[]) { 100, 100 }, (const double[]) { 0.1, 0.0 });
    ck_assert_double_eq(hetsgd_balance_ratio(rec, 1, 2, 0, &T), -1.0);
}
END_TEST

START_TEST(test_balance_ratio_error_with_a_fixed_cost)
{
    /* Two equal ranks, t(b) = a + c b with a = 10 ms and c = 1 ms: the best split of 200 is
     * 100 + 100 at 110 ms.  From the split 50 + 150 the yardstick T* differs from it by the
     * weighted mean (equal weights here) of a / t_i x (t_i - T*) / T*, as report.h says. */
    const double a = 0.010, c = 0.001;
    const double t[2] = { a + c * 50, a + c * 150 };
    double rec[2 * HETSGD_TRACE_FIELDS];
    double T = 0.0;
    double expected = 0.0;

    fill_step(rec, 2, (const double[]) { 50, 150 }, t);
    ck_assert_double_gt(hetsgd_balance_ratio(rec, 1, 2, 0, &T), 1.0);
    for (int i = 0; i < 2; i++) {
        expected += 0.5 * a / t[i] * (t[i] - T) / T;
    }
    ck_assert_double_eq_tol((a + c * 100) / T - 1.0, expected, 1e-12);
    /* Here the error is below the imbalance itself. */
    ck_assert_double_lt(fabs(expected), t[1] / T - 1.0);
}
END_TEST

START_TEST(test_smoothing_drops_spikes_within_a_phase)
{
    const double x[10] = { 1.0, 1.5, 1.0, 1.0, 1.2, 1.2, 1.0, -1.0, 1.3, 2.0 };
    const unsigned char change[10] = { 1, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
    const double expect[10] = { 1.25, 1.0, 1.0, 1.0, 1.2, 1.2, 1.15, -1.0, 1.3, 1.65 };
    double out[10];

    hetsgd_smooth_median3(x, change, 10, out);
    for (int k = 0; k < 10; k++) {
        ck_assert_double_eq_tol(out[k], expect[k], 1e-12);
    }
}
END_TEST

START_TEST(test_final_accuracy_over_the_last_evaluations)
{
    /* Evaluations every 10 steps and at an epoch's end (35). */
    const long done[6] = { 10, 20, 30, 35, 40, 50 };
    const double acc[6] = { 0.5, 0.6, 0.7, 0.8, 0.9, 0.7 };
    long used = 0, from = 0;

    /* 2 evaluations of 10 steps: the last 20 steps, 3 evaluations from step 35. */
    ck_assert_double_eq_tol(hetsgd_final_accuracy(done, acc, 6, 50, 10, 2, &used, &from), 0.8, 1e-12);
    ck_assert_int_eq(used, 3);
    ck_assert_int_eq(from, 35);
    /* Per epoch only: the last 2 evaluations. */
    ck_assert_double_eq_tol(hetsgd_final_accuracy(done, acc, 6, 50, 0, 2, &used, &from), 0.8, 1e-12);
    ck_assert_int_eq(used, 2);
    ck_assert_int_eq(from, 40);
    /* A window longer than the run takes every evaluation; one evaluation is the last one. */
    ck_assert_double_eq_tol(hetsgd_final_accuracy(done, acc, 6, 50, 10, 9, &used, &from), 4.2 / 6, 1e-12);
    ck_assert_int_eq(used, 6);
    ck_assert_double_eq_tol(hetsgd_final_accuracy(done, acc, 6, 50, 0, 1, &used, &from), 0.7, 1e-12);
    ck_assert_double_eq(hetsgd_final_accuracy(done, acc, 0, 50, 10, 5, &used, &from), -1.0);
    ck_assert_int_eq(used, 0);
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

    /* rank r, step k: batch 10r + k, compute 0.001k, step 0.01, speed 1/(r+1), cpu 0.0005,
     * the step's CPU 0.002 + 0.0001r; taken 3r, given 3(1 - r), chunks 16 + k, chunk calls 1e-5 k,
     * late 1e-4 r */
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 3; k++) {
            double *x = rec + (r * 3 + k) * HETSGD_TRACE_FIELDS;
            x[HETSGD_TRACE_BATCH] = 10 * r + k;
            x[HETSGD_TRACE_COMPUTE] = 0.001 * k;
            x[HETSGD_TRACE_STEP] = 0.01;
            x[HETSGD_TRACE_SPEED] = 1.0 / (r + 1);
            x[HETSGD_TRACE_CPU] = 0.0005;
            x[HETSGD_TRACE_STEP_CPU] = 0.002 + 0.0001 * r;
            x[HETSGD_TRACE_TAKEN] = 3 * r;
            x[HETSGD_TRACE_GIVEN] = 3 * (1 - r);
            x[HETSGD_TRACE_CHUNKS] = 16 + k;
            x[HETSGD_TRACE_CHUNK_CALL] = 1e-5 * k;
            x[HETSGD_TRACE_LATE] = 1e-4 * r;
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
    ck_assert_str_eq(line, "step,rank,policy,batch,compute_s,step_s,speed,cpu_s,step_cpu_s,taken,given,chunks,"
                     "chunk_call_s,late_s\n");
    while (NULL != fgets(line, sizeof line, f)) {
        long step, batch, taken, given, chunks;
        int rank;
        char policy[16];
        double compute, step_s, speed, cpu, step_cpu, call, late;

        ck_assert_int_eq(sscanf(line, "%ld,%d,%15[^,],%ld,%lf,%lf,%lf,%lf,%lf,%ld,%ld,%ld,%lf,%lf", &step, &rank,
                                policy, &batch, &compute, &step_s, &speed, &cpu, &step_cpu, &taken, &given, &chunks,
                                &call, &late), 14);
        ck_assert_double_eq_tol(step_cpu, 0.002 + 0.0001 * rank, 1e-12);
        ck_assert_int_eq(taken, 3 * rank);
        ck_assert_int_eq(given, 3 * (1 - rank));
        ck_assert_int_eq(chunks, 16 + step);
        ck_assert_double_eq_tol(call, 1e-5 * step, 1e-12);
        ck_assert_double_eq_tol(late, 1e-4 * rank, 1e-12);
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
    /* Read back into the record layout. */
    {
        double *back = NULL;
        long steps = 0;
        int P = 0;

        ck_assert_int_eq(hetsgd_read_trace(path, &steps, &P, &back), OMNIBATCH_SUCCESS);
        ck_assert_int_eq(steps, 3);
        ck_assert_int_eq(P, 2);
        for (int j = 0; j < 6; j++) {
            ck_assert_double_eq(back[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_BATCH],
                                rec[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_BATCH]);
            ck_assert_double_eq_tol(back[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_COMPUTE],
                                    rec[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_COMPUTE], 1e-12);
            ck_assert_double_eq_tol(back[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_SPEED],
                                    rec[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_SPEED], 1e-6);
            ck_assert_double_eq_tol(back[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_STEP_CPU],
                                    rec[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_STEP_CPU], 1e-12);
            for (int field = HETSGD_TRACE_TAKEN; field < HETSGD_TRACE_FIELDS; field++) {
                ck_assert_double_eq_tol(back[j * HETSGD_TRACE_FIELDS + field], rec[j * HETSGD_TRACE_FIELDS + field],
                                        1e-12);
            }
        }
        free(back);
    }
    /* A trace missing a rank's row is refused, naming the file. */
    f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "3,0,oracle,3,0.003,0.01,1,0.0005\n");
    fclose(f);
    {
        double *back = NULL;
        long steps = 0;
        int P = 0;

        ck_assert_int_eq(hetsgd_read_trace(path, &steps, &P, &back), OMNIBATCH_ERR_ARG);
        ck_assert_ptr_null(back);
        ck_assert_ptr_nonnull(strstr(ob_last_error(), "7 rows for 4 steps of 2 ranks"));
    }
    unlink(path);
    ck_assert_int_eq(hetsgd_write_trace("/nonexistent-dir/t.csv", "static", 3, 2, rec), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "--trace /nonexistent-dir/t.csv: cannot create"));
}
END_TEST

/* hetsgd_read_trace() on a file holding \p body after the header. */
static int read_trace_text(const char *body, long *steps, int *P, double **back)
{
    char path[256];
    const char *base = getenv("TMPDIR");
    FILE *f;
    int fd;
    int rc;

    snprintf(path, sizeof path, "%s/hetsgd-trace-XXXXXX", NULL != base ? base : "/tmp");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "step,rank,policy,batch,compute_s,step_s,speed,cpu_s\n%s", body);
    ck_assert_int_eq(fclose(f), 0);
    rc = hetsgd_read_trace(path, steps, P, back);
    unlink(path);
    return rc;
}

/* Refused with ERR_ARG, nothing returned, and the line says \p why. */
static void assert_trace_refused(const char *body, const char *why)
{
    double *back = NULL;
    long steps = -1;
    int P = -1;

    ck_assert_int_eq(read_trace_text(body, &steps, &P, &back), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_null(back);
    ck_assert_int_eq(steps, -1);
    ck_assert_int_eq(P, -1);
    ck_assert_msg(NULL != strstr(ob_last_error(), why), "'%s' lacks '%s'", ob_last_error(), why);
}

START_TEST(test_trace_reader_bounds_every_size)
{
    double *back = NULL;
    long steps = 0;
    int P = 0;

    /* 4 rows whose step count times rank count wraps to 4 in 64 bits
     * ((2^62 + 1) x 4): rank 1's record would land 2^62 records away. */
    assert_trace_refused("0,0,x,1,0.1,0.1,1,0.1\n0,1,x,1,0.1,0.1,1,0.1\n0,2,x,1,0.1,0.1,1,0.1\n"
                         "4611686018427387904,3,x,1,0.1,0.1,1,0.1\n", ":5: step 4611686018427387904");
    /* The largest step number: its step count would overflow. */
    assert_trace_refused("9223372036854775807,0,x,1,0.1,0.1,1,0.1\n", ":2: step 9223372036854775807");
    /* Beyond a long: scanf saturates, still refused. */
    assert_trace_refused("0,0,x,1,0.1,0.1,1,0.1\n99999999999999999999,0,x,1,0.1,0.1,1,0.1\n", ":3: step ");
    /* Below the limits but far past the rows there are. */
    assert_trace_refused("0,0,x,1,0.1,0.1,1,0.1\n2147483648,0,x,1,0.1,0.1,1,0.1\n",
                         "2 rows for 2147483649 steps of 1 ranks");
    assert_trace_refused("0,0,x,1,0.1,0.1,1,0.1\n0,1048575,x,1,0.1,0.1,1,0.1\n",
                         "2 rows for 1 steps of 1048576 ranks");
    assert_trace_refused("0,1048576,x,1,0.1,0.1,1,0.1\n", ":2: rank 1048576");
    assert_trace_refused("0,-1,x,1,0.1,0.1,1,0.1\n", ":2: rank -1");
    assert_trace_refused("-1,0,x,1,0.1,0.1,1,0.1\n", ":2: step -1");
    assert_trace_refused("0,99999999999,x,1,0.1,0.1,1,0.1\n", ":2: rank 99999999999");
    /* The right number of rows, but one (step, rank) twice and another missing. */
    assert_trace_refused("0,0,x,1,0.1,0.1,1,0.1\n0,1,x,1,0.1,0.1,1,0.1\n1,0,x,1,0.1,0.1,1,0.1\n"
                         "1,0,x,1,0.1,0.1,1,0.1\n", "step 1 of rank 0 appears twice");
    assert_trace_refused("", "0 rows for 0 steps of 0 ranks");
    assert_trace_refused("0,0,x\n", ":2: not a trace row");
    /* Rows in any order are fine, and a row without the step's CPU (a
     * trace of before that column) reads it as 0. */
    ck_assert_int_eq(read_trace_text("1,1,x,4,0.1,0.1,1,0.1,0.25\n0,1,x,3,0.1,0.1,1,0.1\n"
                                     "1,0,x,2,0.1,0.1,1,0.1\n0,0,x,1,0.1,0.1,1,0.1\n",
                                     &steps, &P, &back), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(steps, 2);
    ck_assert_int_eq(P, 2);
    for (int j = 0; j < 4; j++) {
        /* record[(rank * steps + step)]: batch 1 + step + 2 rank here. */
        ck_assert_double_eq(back[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_BATCH],
                            (double) (1 + (j % 2) + 2 * (j / 2)));
        ck_assert_double_eq(back[j * HETSGD_TRACE_FIELDS + HETSGD_TRACE_STEP_CPU], 3 == j ? 0.25 : 0.0);
    }
    free(back);
}
END_TEST

START_TEST(test_side_by_side_judges_against_the_other_run)
{
    /* Two ranks, 8 steps; the speeds change at step 4.  Run a is balanced
     * except steps 4 and 5 (rank 1 takes 1.5x as long); run b is balanced
     * throughout.  The ratio is a's smoothed balance over b's. */
    enum { STEPS = 8 };
    double a[2 * STEPS * HETSGD_TRACE_FIELDS], b[2 * STEPS * HETSGD_TRACE_FIELDS];
    double ratio[STEPS];
    unsigned char change[STEPS];
    hetsgd_recovery_stats st;

    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < STEPS; k++) {
            double *x = a + (r * STEPS + k) * HETSGD_TRACE_FIELDS;
            double *y = b + (r * STEPS + k) * HETSGD_TRACE_FIELDS;

            x[HETSGD_TRACE_BATCH] = y[HETSGD_TRACE_BATCH] = 100;
            x[HETSGD_TRACE_SPEED] = y[HETSGD_TRACE_SPEED] = k < 4 ? 1.0 : 0.5 + r;
            x[HETSGD_TRACE_COMPUTE] = y[HETSGD_TRACE_COMPUTE] = 0.01;
            if (1 == r && (4 == k || 5 == k)) {
                x[HETSGD_TRACE_COMPUTE] = 0.015;
            }
        }
    }
    ck_assert_int_eq(hetsgd_side_by_side(a, b, STEPS, 2, ratio, change), OMNIBATCH_SUCCESS);
    for (int k = 0; k < STEPS; k++) {
        ck_assert_int_eq(change[k], 0 == k || 4 == k);
    }
    ck_assert_double_eq_tol(ratio[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(ratio[3], 1.0, 1e-12);   /* the smoothing does not cross the change */
    ck_assert(ratio[4] > 1.05 && ratio[5] > 1.05);
    ck_assert_double_eq_tol(ratio[7], 1.0, 1e-12);
    hetsgd_recovery(ratio, change, STEPS, 1.05, 2, &st);
    ck_assert_int_eq(st.changes, 1);
    ck_assert_int_eq(st.worst, 2);
}
END_TEST

/* Step times side by side: run a's steps as long as b's but in the step of
 * the change (1.5x) and the one after (1.2x). */
START_TEST(test_side_by_side_on_step_times)
{
    enum { STEPS = 8 };
    double a[2 * STEPS * HETSGD_TRACE_FIELDS], b[2 * STEPS * HETSGD_TRACE_FIELDS];
    double raw[STEPS], ratio[STEPS];
    unsigned char change[STEPS];
    hetsgd_recovery_stats st;

    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < STEPS; k++) {
            double *x = a + (r * STEPS + k) * HETSGD_TRACE_FIELDS;
            double *y = b + (r * STEPS + k) * HETSGD_TRACE_FIELDS;

            x[HETSGD_TRACE_SPEED] = y[HETSGD_TRACE_SPEED] = k < 4 ? 1.0 : 0.5 + r;
            y[HETSGD_TRACE_STEP] = 0.1 + 0.01 * r;
            x[HETSGD_TRACE_STEP] = y[HETSGD_TRACE_STEP] * (4 == k ? 1.5 : 5 == k ? 1.2 : 1.0);
        }
    }
    /* A step b did not time is not judged. */
    b[(1 * STEPS + 2) * HETSGD_TRACE_FIELDS + HETSGD_TRACE_STEP] = 0.0;
    hetsgd_side_by_side_steps(a, b, STEPS, 2, raw, ratio, change);
    for (int k = 0; k < STEPS; k++) {
        ck_assert_int_eq(change[k], 0 == k || 4 == k);
    }
    ck_assert_double_eq_tol(raw[4], 1.5, 1e-12);
    ck_assert_double_eq_tol(raw[5], 1.2, 1e-12);
    ck_assert_double_eq(raw[2], -1.0);
    ck_assert_double_eq(ratio[2], -1.0);
    ck_assert_double_eq_tol(raw[7], 1.0, 1e-12);
    /* Smoothed, the change's own step is the median of 1.5 and 1.2; the step after, of 1.5, 1.2, 1. */
    ck_assert(ratio[4] > 1.05);
    ck_assert_double_eq_tol(ratio[5], 1.2, 1e-12);
    ck_assert_double_eq_tol(ratio[6], 1.0, 1e-12);
    hetsgd_recovery(ratio, change, STEPS, 1.05, 1, &st);
    ck_assert_int_eq(st.worst, 2);
}
END_TEST

/* A trace of before the chunks' columns reads them as 0. */
START_TEST(test_trace_without_the_chunks_columns)
{
    double *back = NULL;
    long steps = 0;
    int P = 0;

    ck_assert_int_eq(read_trace_text("0,0,x,4,0.1,0.2,1,0.1,0.25\n0,1,x,3,0.1,0.2,1,0.1,0.25\n", &steps, &P, &back),
                     OMNIBATCH_SUCCESS);
    ck_assert_int_eq(steps, 1);
    ck_assert_int_eq(P, 2);
    for (int j = 0; j < 2; j++) {
        for (int field = HETSGD_TRACE_TAKEN; field < HETSGD_TRACE_FIELDS; field++) {
            ck_assert_double_eq(back[j * HETSGD_TRACE_FIELDS + field], 0.0);
        }
    }
    free(back);
    /* Some of the chunks' columns but not all: not a row. */
    ck_assert_int_eq(read_trace_text("0,0,x,4,0.1,0.2,1,0.1,0.25,3,0\n", &steps, &P, &back), OMNIBATCH_ERR_ARG);
}
END_TEST

/* 2 ranks, 4 steps: rank r's step k as given; compute 0.1 s, step 0.2 s. */
static void chunk_record(double *rec, int r, long k, double batch, double taken, double chunks, double call,
                         double late)
{
    double *x = rec + ((long) r * 4 + k) * HETSGD_TRACE_FIELDS;

    x[HETSGD_TRACE_BATCH] = batch;
    x[HETSGD_TRACE_COMPUTE] = 0.1;
    x[HETSGD_TRACE_STEP] = 0.2;
    x[HETSGD_TRACE_TAKEN] = taken;
    x[HETSGD_TRACE_CHUNKS] = chunks;
    x[HETSGD_TRACE_CHUNK_CALL] = call;
    x[HETSGD_TRACE_LATE] = late;
}

START_TEST(test_chunk_figures_and_late_chunks)
{
    double rec[2 * 4 * HETSGD_TRACE_FIELDS] = { 0 };
    hetsgd_chunk_figures fig;

    /* Step 0 is left out (first = 1).  Samples move in steps 1 and 3: 10 + 30 of 400. */
    chunk_record(rec, 0, 0, 50, 50, 99, 0.1, 0.0);
    chunk_record(rec, 1, 0, 50, 0, 99, 0.1, 0.0);
    chunk_record(rec, 0, 1, 60, 10, 10, 0.002, 0.0);
    chunk_record(rec, 1, 1, 40, 0, 8, 0.002, 0.0111);     /* late by more than 10% of 0.1 s + 1 ms */
    chunk_record(rec, 0, 2, 50, 0, 9, 0.002, 0.0109);     /* not: 10.9 ms < 11 ms */
    chunk_record(rec, 1, 2, 50, 0, 9, 0.002, 0.0);
    chunk_record(rec, 0, 3, 20, 0, 3, 0.002, 0.0);
    chunk_record(rec, 1, 3, 80, 30, 15, 0.002, 0.0);
    hetsgd_chunk_summary(rec, 4, 2, 1, &fig);
    ck_assert_double_eq_tol(fig.chunks_per_step, (10 + 8 + 9 + 9 + 3 + 15) / 6.0, 1e-12);
    ck_assert_double_eq_tol(fig.moved_share, 40.0 / 300.0, 1e-12);
    ck_assert_int_eq(fig.steps_moved, 2);
    ck_assert_double_eq_tol(fig.call_share, 6 * 0.002 / (6 * 0.2), 1e-12);
    ck_assert_int_eq(hetsgd_late_steps(rec, 4, 2), 1);
    /* A run without chunks: nothing moved, no chunk. */
    memset(rec, 0, sizeof rec);
    hetsgd_chunk_summary(rec, 4, 2, 0, &fig);
    ck_assert(0.0 == fig.chunks_per_step && 0.0 == fig.moved_share && 0 == fig.steps_moved && 0.0 == fig.call_share);
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
    ck_assert_int_eq(hetsgd_overrun_steps(rec, 3, 2, 2.0, 0.0, NULL), 1);
    /* With 15 ms of alpha the longest emulated step is 55 ms: no overrun. */
    ck_assert_int_eq(hetsgd_overrun_steps(rec, 3, 2, 2.0, 0.015, NULL), 0);
    /* With --cost 0.001,0.001 the length comes from the batch, not the CPU
     * time: 4 samples cost 5 ms, 10 ms at speed 1 and 40 ms at 0.25, so rank
     * 1's 50 ms overran at step 2 only; at batch 9 (10 ms: 80 ms) none did. */
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 3; k++) {
            rec[(r * 3 + k) * HETSGD_TRACE_FIELDS + HETSGD_TRACE_BATCH] = 4.0;
            rec[(r * 3 + k) * HETSGD_TRACE_FIELDS + HETSGD_TRACE_CPU] = 1.0;   /* ignored */
        }
    }
    ck_assert_int_eq(hetsgd_overrun_steps(rec, 3, 2, 2.0, 0.0, (const double[]) { 0.001, 0.001 }), 1);
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 3; k++) {
            rec[(r * 3 + k) * HETSGD_TRACE_FIELDS + HETSGD_TRACE_BATCH] = 9.0;
        }
    }
    ck_assert_int_eq(hetsgd_overrun_steps(rec, 3, 2, 2.0, 0.0, (const double[]) { 0.001, 0.001 }), 0);
}
END_TEST

static Suite *make_hetsgd_report_suite(void)
{
    Suite *s = suite_create("hetsgd_report");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_recovery_counts_steps_to_tolerance);
    tcase_add_test(tc, test_recovery_stops_at_the_next_change);
    tcase_add_test(tc, test_recovery_holds_for_steps_in_a_row);
    tcase_add_test(tc, test_balance_ratio_is_one_exactly_when_balanced);
    tcase_add_test(tc, test_balance_ratio_error_with_a_fixed_cost);
    tcase_add_test(tc, test_smoothing_drops_spikes_within_a_phase);
    tcase_add_test(tc, test_final_accuracy_over_the_last_evaluations);
    tcase_add_test(tc, test_mean_skips_unjudged_steps);
    tcase_add_test(tc, test_trace_rows_per_step_and_rank);
    tcase_add_test(tc, test_trace_reader_bounds_every_size);
    tcase_add_test(tc, test_side_by_side_judges_against_the_other_run);
    tcase_add_test(tc, test_overruns_judge_the_step_not_each_rank);
    tcase_add_test(tc, test_trace_without_the_chunks_columns);
    tcase_add_test(tc, test_side_by_side_on_step_times);
    tcase_add_test(tc, test_chunk_figures_and_late_chunks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_report_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
