/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace: bounded memory, and the CSV rank 0 writes.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_trace.h"

START_TEST(test_rank_limit_shares_the_cap)
{
    ck_assert_int_eq(ob_trace_rank_limit(1), OB_TRACE_MAX_ROWS);
    ck_assert_int_eq(ob_trace_rank_limit(4), OB_TRACE_MAX_ROWS / 4);
    ck_assert_int_le(ob_trace_rank_limit(1000) * 1000, OB_TRACE_MAX_ROWS);
    /* More ranks than rows: still one row each. */
    ck_assert_int_eq(ob_trace_rank_limit(1 << 30), 1);
}
END_TEST

START_TEST(test_append_keeps_the_first_rows_and_counts_the_rest)
{
    ob_trace t;

    ob_trace_init(&t, 100);
    for (long k = 0; k < 250; k++) {
        ob_trace_row row = { k, 10 + k, 0.5, 0.25 };

        ck_assert_int_eq(ob_trace_append(&t, &row), 0);
    }
    ck_assert_int_eq(t.n, 100);
    ck_assert_int_eq(t.dropped, 150);
    ck_assert_int_le(t.cap, 100);
    for (long k = 0; k < t.n; k++) {
        ck_assert_int_eq(t.rows[k].step, k);
        ck_assert_int_eq(t.rows[k].batch, 10 + k);
    }
    ob_trace_free(&t);
    ck_assert_ptr_null(t.rows);
    ck_assert_int_eq(t.n, 0);
}
END_TEST

START_TEST(test_csv_is_ordered_by_step_then_rank)
{
    /* Rank 0 has steps 1, 2, 3; rank 1 has 2, 3, 4 (it missed step 1). */
    ob_trace_row rows[6] = {
        { 1, 32, 0.5, 0.25 }, { 2, 32, 0.5, 0.25 }, { 3, -1, 0.125, 0.0625 },
        { 2, 16, 1.0, 0.0 }, { 3, 16, 1.0, 0.0 }, { 4, 16, 1.0, 0.0 },
    };
    long counts[2] = { 3, 3 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ob_trace_write(f, rows, counts, 2), 0);
    fclose(f);
    ck_assert_str_eq(buf,
                     "step,rank,batch,compute_s,blocked_s\n"
                     "1,0,32,0.5,0.25\n"
                     "2,0,32,0.5,0.25\n"
                     "2,1,16,1,0\n"
                     "3,0,,0.125,0.0625\n"
                     "3,1,16,1,0\n"
                     "4,1,16,1,0\n");
    free(buf);
}
END_TEST

START_TEST(test_csv_of_nothing_is_the_header)
{
    long counts[3] = { 0, 0, 0 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_int_eq(ob_trace_write(f, NULL, counts, 3), 0);
    fclose(f);
    ck_assert_str_eq(buf, "step,rank,batch,compute_s,blocked_s\n");
    free(buf);
}
END_TEST

static Suite *make_trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_rank_limit_shares_the_cap);
    tcase_add_test(tc, test_append_keeps_the_first_rows_and_counts_the_rest);
    tcase_add_test(tc, test_csv_is_ordered_by_step_then_rank);
    tcase_add_test(tc, test_csv_of_nothing_is_the_header);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_trace_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
