/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The timeline (src/observe/timeline.c): valid JSON, one named track per
 * rank, per step compute + waiting + reduction equal to the step, the
 * reduction the least blocked time of the step, plan changes where the
 * batch changed, times from the earliest step; the stream writes the same
 * from rows in any order across ranks, and every step when a rank is
 * missing.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_json_check.h"
#include "ob_timeline.h"

/* The fields of a row past the time: what the kernel gave the rank, unknown. */
#define OB_NO_CPU 0, 0.0, 0, 0.0, 0.0
/* A row of a step not worked in chunks: taken and given unknown. */
#define OB_NOT_CHUNKED -1, -1

/* The JSON of a run of \p nranks ranks, written with ob_timeline_write(). */
static char *timeline_of(const ob_trace_row *rows, const long *counts, int nranks,
                         const char *const *hosts)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ob_timeline_write(f, rows, counts, nranks, hosts), 0);
    fclose(f);
    return buf;
}

/* The event lines of \p name on track \p pid: their count, and the sum of their durations. */
static int events(const char *json, const char *name, int pid, double *dur_sum)
{
    char want[96];
    int n = 0;

    snprintf(want, sizeof want, "{\"name\":\"%s\",", name);
    *dur_sum = 0.0;
    for (const char *line = json; NULL != line && '\0' != *line;) {
        const char *next = strchr(line, '\n');
        char pidkey[32];

        snprintf(pidkey, sizeof pidkey, "\"pid\":%d,", pid);
        if (0 == strncmp(line, want, strlen(want)) && NULL != strstr(line, pidkey)
            && (NULL == next || strstr(line, pidkey) < next)) {
            const char *dur = strstr(line, "\"dur\":");

            n++;
            if (NULL != dur && (NULL == next || dur < next)) {
                *dur_sum += strtod(dur + 6, NULL);
            }
        }
        line = NULL != next ? next + 1 : NULL;
    }
    return n;
}

/* Two ranks, three steps each; rank 1 computes longer, so rank 0 waits. */
static const ob_trace_row two_ranks[6] = {
    { 0, 32, 0.010, 0.030, -1.0, 1000.040, OB_NO_CPU, OB_NOT_CHUNKED }, { 1, 32, 0.010, 0.030, -1.0, 1000.080, OB_NO_CPU, OB_NOT_CHUNKED },
    { 2, 40, 0.010, 0.020, -1.0, 1000.110, OB_NO_CPU, OB_NOT_CHUNKED },
    { 0, 32, 0.038, 0.002, -1.0, 1000.040, OB_NO_CPU, OB_NOT_CHUNKED }, { 1, 32, 0.038, 0.002, -1.0, 1000.080, OB_NO_CPU, OB_NOT_CHUNKED },
    { 2, 24, 0.028, 0.002, -1.0, 1000.110, OB_NO_CPU, OB_NOT_CHUNKED },
};

START_TEST(test_timeline_is_json_with_one_named_track_per_rank)
{
    long counts[2] = { 3, 3 };
    const char *hosts[2] = { "node-a", "node\"b" };
    char *json = timeline_of(two_ranks, counts, 2, hosts);

    ck_assert_msg(json_parses(json), "not JSON:\n%s", json);
    ck_assert_ptr_nonnull(strstr(json, "\"pid\":0,\"tid\":0,\"args\":{\"name\":\"rank 0 (node-a)\"}"));
    ck_assert_ptr_nonnull(strstr(json, "\"args\":{\"name\":\"rank 1 (node\\\"b)\"}"));
    free(json);
}
END_TEST

START_TEST(test_spans_add_up_to_the_steps)
{
    long counts[2] = { 3, 3 };
    char *json = timeline_of(two_ranks, counts, 2, NULL);

    for (int r = 0; r < 2; r++) {
        double compute, waiting, reduction, want = 0.0;

        for (int k = 0; k < 3; k++) {
            want += two_ranks[3 * r + k].compute_s + two_ranks[3 * r + k].blocked_s;
        }
        ck_assert_int_eq(events(json, "compute", r, &compute), 3);
        ck_assert_int_eq(events(json, "waiting", r, &waiting), 3);
        ck_assert_int_eq(events(json, "reduction", r, &reduction), 3);
        ck_assert_double_eq_tol(compute + waiting + reduction, want * 1e6, 0.01);
    }
    free(json);
}
END_TEST

/* The reduction of a step is its least blocked time (rank 1's 2 ms): the
 * rest of rank 0's blocked time is waiting, and rank 1 does not wait. */
START_TEST(test_waiting_is_blocked_time_beyond_the_least)
{
    long counts[2] = { 3, 3 };
    char *json = timeline_of(two_ranks, counts, 2, NULL);
    double waiting, reduction;

    events(json, "waiting", 0, &waiting);
    events(json, "reduction", 0, &reduction);
    ck_assert_double_eq_tol(waiting, (0.028 + 0.028 + 0.018) * 1e6, 0.01);
    ck_assert_double_eq_tol(reduction, 3 * 0.002 * 1e6, 0.01);
    events(json, "waiting", 1, &waiting);
    ck_assert_double_eq_tol(waiting, 0.0, 0.01);
    free(json);
}
END_TEST

START_TEST(test_plan_changes_are_instants_where_the_batch_changed)
{
    long counts[2] = { 3, 3 };
    char *json = timeline_of(two_ranks, counts, 2, NULL);
    double unused;

    ck_assert_int_eq(events(json, "plan change", 0, &unused), 1);
    ck_assert_int_eq(events(json, "plan change", 1, &unused), 1);
    ck_assert_ptr_nonnull(strstr(json, "\"args\":{\"step\":2,\"from\":32,\"to\":40}"));
    ck_assert_ptr_nonnull(strstr(json, "\"args\":{\"step\":2,\"from\":32,\"to\":24}"));
    free(json);
}
END_TEST

/* Time 0 is the earliest step's start (1000.000 s on the wall clock). */
START_TEST(test_times_start_at_the_first_step)
{
    long counts[2] = { 3, 3 };
    char *json = timeline_of(two_ranks, counts, 2, NULL);

    ck_assert_ptr_nonnull(strstr(json, "{\"name\":\"compute\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":0,"
                                       "\"tid\":0,\"ts\":0.000,\"dur\":10000.000,"
                                       "\"args\":{\"step\":0,\"batch\":32}}"));
    free(json);
}
END_TEST

/* A row without a time (and an unknown batch) leaves no span, and nothing
 * at all is still valid JSON. */
START_TEST(test_rows_without_time_and_empty_runs)
{
    ob_trace_row rows[2] = { { 0, -1, 0.5, 0.5, -1.0, 0.0, OB_NO_CPU, OB_NOT_CHUNKED }, { 1, -1, 0.5, 0.5, -1.0, 10.0, OB_NO_CPU, OB_NOT_CHUNKED } };
    long counts[1] = { 2 };
    long none[3] = { 0, 0, 0 };
    char *json = timeline_of(rows, counts, 1, NULL);
    double dur;

    ck_assert(json_parses(json));
    ck_assert_int_eq(events(json, "compute", 0, &dur), 1);
    ck_assert_ptr_nonnull(strstr(json, "\"batch\":null"));
    free(json);
    json = timeline_of(NULL, none, 3, NULL);
    ck_assert(json_parses(json));
    free(json);
}
END_TEST

/* A stream fed rank after rank (as a streamed trace's chunks arrive) writes
 * what the whole run's writer writes. */
START_TEST(test_stream_matches_the_whole_run)
{
    long counts[2] = { 3, 3 };
    const char *hosts[2] = { "node-a", "node-b" };
    char *whole = timeline_of(two_ranks, counts, 2, hosts);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ob_timeline_stream st;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ob_timeline_stream_begin(&st, f, 2, hosts, 1000.0), 0);
    for (int k = 0; k < 6; k++) {
        ob_timeline_stream_add(&st, k / 3, &two_ranks[k]);
    }
    ck_assert_int_eq(ob_timeline_stream_end(&st), 0);
    fclose(f);
    ck_assert_str_eq(buf, whole);
    free(buf);
    free(whole);
}
END_TEST

/* A rank that never sends: the window fills, its steps go out with the
 * rows that came, in step order, and the end writes the rest. */
START_TEST(test_stream_without_a_rank_writes_every_step_in_order)
{
    enum { STEPS = 3 * OB_TIMELINE_WINDOW_STEPS + 7 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ob_timeline_stream st;
    double compute, waiting, reduction;
    long last = -1, n = 0;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ob_timeline_stream_begin(&st, f, 2, NULL, 100.0), 0);
    for (int k = 0; k < STEPS; k++) {
        ob_trace_row row = { k, 8, 0.02, 0.01, -1.0, 100.0 + 0.03 * (k + 1), OB_NO_CPU, OB_NOT_CHUNKED };

        ob_timeline_stream_add(&st, 0, &row);
    }
    ck_assert_int_eq(ob_timeline_stream_end(&st), 0);
    fclose(f);
    ck_assert(json_parses(buf));
    ck_assert_int_eq(events(buf, "compute", 0, &compute), STEPS);
    ck_assert_int_eq(events(buf, "waiting", 0, &waiting), STEPS);
    ck_assert_int_eq(events(buf, "reduction", 0, &reduction), STEPS);
    ck_assert_double_eq_tol(waiting, 0.0, 0.01);
    ck_assert_double_eq_tol(reduction, STEPS * 0.01 * 1e6, 0.5);
    for (const char *p = strstr(buf, "\"name\":\"compute\""); NULL != p;
         p = strstr(p + 1, "\"name\":\"compute\"")) {
        long step = strtol(strstr(p, "\"step\":") + 7, NULL, 10);

        ck_assert_int_eq(step, last + 1);
        last = step;
        n++;
    }
    ck_assert_int_eq(n, STEPS);
    free(buf);
}
END_TEST

static Suite *make_timeline_suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_timeline_is_json_with_one_named_track_per_rank);
    tcase_add_test(tc, test_spans_add_up_to_the_steps);
    tcase_add_test(tc, test_waiting_is_blocked_time_beyond_the_least);
    tcase_add_test(tc, test_plan_changes_are_instants_where_the_batch_changed);
    tcase_add_test(tc, test_times_start_at_the_first_step);
    tcase_add_test(tc, test_rows_without_time_and_empty_runs);
    tcase_add_test(tc, test_stream_matches_the_whole_run);
    tcase_add_test(tc, test_stream_without_a_rank_writes_every_step_in_order);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_timeline_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}
