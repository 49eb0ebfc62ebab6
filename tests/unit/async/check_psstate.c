/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A parameter server's state blob: what is packed comes back, server 0's
 * part included; a blob that is not one, of another version or host,
 * truncated or damaged is refused with a line, never misread.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_psstate.h"

#define RANGE 5
#define W 3

static void *packed(ob_psstate_head *h, size_t *size)
{
    static const double params[RANGE] = { 1, 2, 3, 4, 5 };
    static const double momentum[RANGE] = { -1, -2, -3, -4, -5 };
    static const long plan[W] = { 10, 20, 34 };
    static const ob_slice flight[2] = { { 0, 100, 20 }, { 1, 0, 34 } };
    ob_estimator est[W];
    ob_psstate_data d;
    void *buf;

    for (int w = 0; w < W; w++) {
        ob_estimator_init(&est[w], 0.99);
        ob_estimator_add(&est[w], 10.0 * (w + 1), 0.01 * (w + 1));
    }
    memset(h, 0, sizeof *h);
    h->elem = sizeof(double);
    h->count = 12;
    h->first = 7;
    h->range = RANGE;
    h->servers = 2;
    h->workers = W;
    h->global_batch = 64;
    h->dataset_size = 1000;
    h->seed = 42;
    h->updates = 321;
    h->data = 1;
    h->epoch = 1;
    h->cursor = 34;
    h->handed = 40;
    h->flight = 2;
    d.plan = plan;
    d.est = est;
    d.flight = flight;
    *size = ob_psstate_size(h);
    buf = malloc(*size);
    ck_assert_ptr_nonnull(buf);
    ob_psstate_pack(buf, h, params, momentum, &d);
    return buf;
}

START_TEST(test_round_trip)
{
    ob_psstate_head h, got;
    size_t size;
    void *buf = packed(&h, &size);
    const void *params, *momentum;
    long plan[W];
    ob_estimator est[W];
    ob_slice *flight;
    double alpha, beta;

    ck_assert_int_eq(ob_psstate_check(buf, size, &got), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(got.updates, 321);
    ck_assert_int_eq(got.first, 7);
    ck_assert_int_eq(got.handed, 40);
    ob_psstate_parts(buf, &got, &params, &momentum);
    ck_assert(4.0 == ((const double *) params)[3]);
    ck_assert(-5.0 == ((const double *) momentum)[4]);
    ck_assert_int_eq(ob_psstate_copy_data(buf, &got, plan, est, &flight), OMNIBATCH_SUCCESS);
    ck_assert(10 == plan[0] && 20 == plan[1] && 34 == plan[2]);
    ck_assert(1 == flight[1].epoch && 0 == flight[1].start && 34 == flight[1].count);
    ck_assert(100 == flight[0].start);
    ck_assert(ob_estimator_model(&est[2], &alpha, &beta));
    ck_assert_double_eq_tol(ob_estimator_predict(&est[2], 30.0), 0.03, 1e-12);
    free(flight);
    free(buf);
}
END_TEST

START_TEST(test_refused)
{
    ob_psstate_head h, got;
    size_t size;
    char *buf = packed(&h, &size);

    ck_assert_int_eq(ob_psstate_check(buf, size - 1, &got), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "(truncated?)"));
    ck_assert_int_eq(ob_psstate_check(buf, 8, &got), OMNIBATCH_ERR_ARG);
    buf[size - 3] ^= 1;
    ck_assert_int_eq(ob_psstate_check(buf, size, &got), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "a state whose checksum does not match: damaged");
    buf[size - 3] ^= 1;
    ck_assert_int_eq(ob_psstate_check(buf, size, &got), OMNIBATCH_SUCCESS);
    buf[0] = 'X';
    ck_assert_int_eq(ob_psstate_check(buf, size, &got), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "not a parameter server's state (no \"OBPSSTA\" at its start)");
    buf[0] = 'O';
    ((ob_psstate_head *) (void *) buf)->version = 9;
    ck_assert_int_eq(ob_psstate_check(buf, size, &got), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "a state of version 9: expected 1");
    ((ob_psstate_head *) (void *) buf)->version = 1;
    ((ob_psstate_head *) (void *) buf)->byte_order = 0x04030201u;
    ck_assert_int_eq(ob_psstate_check(buf, size, &got), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "another kind of host"));
    free(buf);
}
END_TEST

static Suite *make_psstate_suite(void)
{
    Suite *s = suite_create("psstate");
    TCase *tc = tcase_create("blob");

    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_psstate_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
