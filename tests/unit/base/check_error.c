/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The error convention: codes have names, details are per thread.
 */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_error.h"

START_TEST(test_fail_returns_code_and_records_line)
{
    ob_clear_error();
    ck_assert_str_eq(ob_last_error(), "");
    ck_assert_int_eq(ob_fail(OMNIBATCH_ERR_ARG, "B=%ld: expected >= %d", -3L, 1), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "B=-3: expected >= 1");
    ck_assert_str_eq(omnibatch_last_error(), "B=-3: expected >= 1");
}
END_TEST

START_TEST(test_every_code_has_a_distinct_name)
{
    for (int a = OMNIBATCH_SUCCESS; a <= OMNIBATCH_ERR_IO; a++) {
        ck_assert_str_ne(omnibatch_strerror(a), "unknown status code");
        for (int b = a + 1; b <= OMNIBATCH_ERR_IO; b++) {
            ck_assert_str_ne(omnibatch_strerror(a), omnibatch_strerror(b));
        }
    }
    ck_assert_str_eq(omnibatch_strerror(OMNIBATCH_ERR_IO + 1), "unknown status code");
    ck_assert_str_eq(omnibatch_strerror(-1), "unknown status code");
}
END_TEST

static void *fail_on_other_thread(void *arg)
{
    (void) arg;
    ob_fail(OMNIBATCH_ERR_MPI, "from another thread");
    return NULL;
}

START_TEST(test_detail_is_per_thread)
{
    pthread_t t;

    ob_fail(OMNIBATCH_ERR_STATE, "main thread");
    ck_assert_int_eq(pthread_create(&t, NULL, fail_on_other_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_str_eq(ob_last_error(), "main thread");
}
END_TEST

START_TEST(test_long_detail_is_truncated_not_overflowed)
{
    char big[2048];

    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ob_fail(OMNIBATCH_ERR_ARG, "%s", big);
    ck_assert_uint_lt(strlen(ob_last_error()), sizeof big - 1);
    ck_assert_uint_gt(strlen(ob_last_error()), 100);
}
END_TEST

START_TEST(test_runtime_version_matches_header_and_package)
{
    ck_assert_uint_eq(omnibatch_get_version(), OMNIBATCH_VERSION);
    ck_assert_str_eq(OMNIBATCH_VERSION_STRING, PACKAGE_VERSION);
}
END_TEST

static Suite *make_error_suite(void)
{
    Suite *s = suite_create("error");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_fail_returns_code_and_records_line);
    tcase_add_test(tc, test_every_code_has_a_distinct_name);
    tcase_add_test(tc, test_detail_is_per_thread);
    tcase_add_test(tc, test_long_detail_is_truncated_not_overflowed);
    tcase_add_test(tc, test_runtime_version_matches_header_and_package);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_error_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
