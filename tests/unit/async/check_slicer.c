/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The slices of the asynchronous mode: whatever batch each push asks for,
 * every sample of the epoch's permutation is handed out exactly once per
 * epoch; slices never straddle epochs; the budgets stop it; a resumed
 * slicer hands the saved slices in flight out again first, and together
 * with them still covers each epoch once.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_shard.h"
#include "ob_slicer.h"

static uint64_t test_rng = 0x9e3779b97f4a7c15ULL;

static long test_below(long n)
{
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 7;
    test_rng ^= test_rng << 17;
    return (long) (test_rng % (uint64_t) n);
}

/* Count every sample of every slice into uses[epoch * N + sample]. */
static void use(long N, const ob_slice *x, const long *perm_of_epoch, long *uses)
{
    for (long k = 0; k < x->count; k++) {
        uses[x->epoch * N + perm_of_epoch[x->start + k]]++;
    }
}

START_TEST(test_every_sample_once_per_epoch)
{
    const long N = 1009;          /* prime: batches rarely divide it */
    const long epochs = 5;
    ob_slicer s;
    ob_slice x;
    long *uses = calloc((size_t) (N * epochs), sizeof *uses);
    long *perm = malloc((size_t) (N * epochs) * sizeof *perm);
    long slices = 0;

    ck_assert_ptr_nonnull(uses);
    ck_assert_ptr_nonnull(perm);
    for (long e = 0; e < epochs; e++) {
        ck_assert_int_eq(ob_shard_permutation(7, e, N, perm + e * N), OMNIBATCH_SUCCESS);
    }
    ck_assert_int_eq(ob_slicer_init(&s, N, epochs, 0), OMNIBATCH_SUCCESS);
    /* Batches of 1 .. 96, as four workers of different sizes would ask. */
    while (ob_slicer_next(&s, 1 + test_below(96), &x)) {
        ck_assert_int_ge(x.count, 1);
        ck_assert_int_ge(x.start, 0);
        ck_assert_int_le(x.start + x.count, N);   /* never past the epoch's end */
        ck_assert_int_lt(x.epoch, epochs);
        use(N, &x, perm + x.epoch * N, uses);
        slices++;
    }
    for (long i = 0; i < N * epochs; i++) {
        ck_assert_msg(1 == uses[i], "epoch %ld sample %ld used %ld times", i / N, i % N, uses[i]);
    }
    ck_assert_int_eq(s.handed, slices);
    ck_assert(ob_slicer_spent(&s));
    ck_assert_int_eq(ob_slicer_next(&s, 10, &x), 0);
    ob_slicer_free(&s);
    free(uses);
    free(perm);
}
END_TEST

START_TEST(test_short_last_slice)
{
    ob_slicer s;
    ob_slice x;

    ck_assert_int_eq(ob_slicer_init(&s, 10, 2, 0), OMNIBATCH_SUCCESS);
    ck_assert(ob_slicer_next(&s, 4, &x));
    ck_assert(ob_slicer_next(&s, 4, &x));
    ck_assert(ob_slicer_next(&s, 4, &x));
    ck_assert_int_eq(x.epoch, 0);
    ck_assert_int_eq(x.start, 8);
    ck_assert_int_eq(x.count, 2);
    ck_assert(ob_slicer_next(&s, 4, &x));
    ck_assert_int_eq(x.epoch, 1);
    ck_assert_int_eq(x.start, 0);
    ck_assert_int_eq(x.count, 4);
    ob_slicer_free(&s);
}
END_TEST

START_TEST(test_budgets)
{
    ob_slicer s;
    ob_slice x;
    long n = 0;

    /* The update budget ends before the data. */
    ck_assert_int_eq(ob_slicer_init(&s, 100, 0, 7), OMNIBATCH_SUCCESS);
    while (ob_slicer_next(&s, 30, &x)) {
        n++;
    }
    ck_assert_int_eq(n, 7);
    ck_assert(ob_slicer_spent(&s));
    ob_slicer_free(&s);
    /* No asking for nothing. */
    ck_assert_int_eq(ob_slicer_init(&s, 100, 1, 0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_slicer_next(&s, 0, &x), 0);
    ck_assert_int_eq(s.handed, 0);
    ob_slicer_free(&s);
}
END_TEST

START_TEST(test_bad_arguments)
{
    ob_slicer s;

    ck_assert_int_eq(ob_slicer_init(&s, 0, 1, 0), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "dataset_size=0: expected a data set of at least 1 sample");
    ck_assert_int_eq(ob_slicer_init(&s, 10, -1, 0), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "epochs=-1: expected >= 1, or 0 for no limit");
    ck_assert_int_eq(ob_slicer_init(&s, 10, 1, -2), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "max_pushes=-2: expected >= 1, or 0 for no limit");
}
END_TEST

/* Four workers each hold one slice in flight when the server saves; the
 * resumed slicer hands those out again first, and the epochs are still
 * covered exactly once. */
START_TEST(test_resume_hands_the_slices_in_flight_out_again)
{
    const long N = 503;
    const long epochs = 3;
    ob_slicer s, r;
    ob_slice x, flight[4];
    long *uses = calloc((size_t) (N * epochs), sizeof *uses);
    long *perm = malloc((size_t) (N * epochs) * sizeof *perm);

    ck_assert_ptr_nonnull(uses);
    ck_assert_ptr_nonnull(perm);
    for (long e = 0; e < epochs; e++) {
        ck_assert_int_eq(ob_shard_permutation(3, e, N, perm + e * N), OMNIBATCH_SUCCESS);
    }
    ck_assert_int_eq(ob_slicer_init(&s, N, epochs, 0), OMNIBATCH_SUCCESS);
    for (int k = 0; k < 50; k++) {
        ck_assert(ob_slicer_next(&s, 1 + test_below(40), &x));
        use(N, &x, perm + x.epoch * N, uses);
    }
    /* The last four handed out are in flight: never applied before the save. */
    for (int w = 0; w < 4; w++) {
        ck_assert(ob_slicer_next(&s, 1 + test_below(40), &flight[w]));
    }
    ck_assert_int_eq(ob_slicer_init(&r, N, epochs, 0), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_slicer_resume(&r, s.epoch, s.cursor, s.handed - 4, flight, 4),
                     OMNIBATCH_SUCCESS);
    for (int w = 0; w < 4; w++) {
        ck_assert(ob_slicer_next(&r, 1000, &x));
        ck_assert_mem_eq(&x, &flight[w], sizeof x);
        use(N, &x, perm + x.epoch * N, uses);
    }
    while (ob_slicer_next(&r, 1 + test_below(40), &x)) {
        use(N, &x, perm + x.epoch * N, uses);
    }
    for (long i = 0; i < N * epochs; i++) {
        ck_assert_msg(1 == uses[i], "epoch %ld sample %ld used %ld times", i / N, i % N, uses[i]);
    }
    ck_assert_int_eq(ob_slicer_resume(&r, 0, N, 0, NULL, 0), OMNIBATCH_ERR_ARG);
    x.epoch = 0;
    x.start = N - 1;
    x.count = 2;
    ck_assert_int_eq(ob_slicer_resume(&r, 0, 0, 0, &x, 1), OMNIBATCH_ERR_ARG);
    ob_slicer_free(&s);
    ob_slicer_free(&r);
    free(uses);
    free(perm);
}
END_TEST

static Suite *make_slicer_suite(void)
{
    Suite *s = suite_create("slicer");
    TCase *tc = tcase_create("slices");

    tcase_add_test(tc, test_every_sample_once_per_epoch);
    tcase_add_test(tc, test_short_last_slice);
    tcase_add_test(tc, test_budgets);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_resume_hands_the_slices_in_flight_out_again);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_slicer_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
