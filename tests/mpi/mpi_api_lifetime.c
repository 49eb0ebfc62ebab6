/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The lifetime of a context: a call through a stale copy of a handle (its
 * context destroyed through another copy) and any call after MPI_Finalize
 * return OMNIBATCH_ERR_STATE with a line naming the function, instead of
 * reading freed memory, succeeding, or letting MPI abort.
 */
#include "config.h"

#include <string.h>

#include "mpi_api_common.h"

/* The code is OMNIBATCH_ERR_STATE and the line names \p fn and \p why. */
#define OB_CK_STATE(call, fn, why)                                                         \
    do {                                                                                   \
        int ob_ck_rc_ = (call);                                                            \
        ck_assert_msg(OMNIBATCH_ERR_STATE == ob_ck_rc_, "%s -> %d (%s): %s", #call,         \
                      ob_ck_rc_, omnibatch_strerror(ob_ck_rc_), omnibatch_last_error());   \
        ck_assert_ptr_nonnull(strstr(omnibatch_last_error(), fn));                         \
        ck_assert_ptr_nonnull(strstr(omnibatch_last_error(), why));                        \
    } while (0)

#define STALE "is not a live context"

START_TEST(test_destroy_through_a_stale_copy)
{
    omnibatch_t ctx = NULL;
    omnibatch_t copy;

    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, 4L * mpi_size(), 100, NULL, &ctx));
    copy = ctx;
    OB_CK_OK(omnibatch_destroy(&ctx));
    ck_assert_ptr_null(ctx);
    OB_CK_STATE(omnibatch_destroy(&copy), "omnibatch_destroy", STALE);
    /* Still refused the second time: nothing was touched. */
    OB_CK_STATE(omnibatch_destroy(&copy), "omnibatch_destroy", STALE);
}
END_TEST

START_TEST(test_every_call_through_a_stale_copy)
{
    const int P = mpi_size();
    omnibatch_t ctx = NULL;
    omnibatch_t copy;
    omnibatch_t other = NULL;
    omnibatch_step s;
    omnibatch_stats st;
    long plan[64];
    long perm[100];
    double g = 1.0;

    ck_assert_int_le(P, 64);
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, 4L * P, 100, NULL, &ctx));
    OB_CK_OK(omnibatch_next_step(ctx, &s));
    copy = ctx;
    OB_CK_OK(omnibatch_destroy(&ctx));
    OB_CK_STATE(omnibatch_next_step(copy, &s), "omnibatch_next_step", STALE);
    OB_CK_STATE(omnibatch_compute_begin(copy), "omnibatch_compute_begin", STALE);
    OB_CK_STATE(omnibatch_compute_end(copy), "omnibatch_compute_end", STALE);
    OB_CK_STATE(omnibatch_allreduce_gradient(copy, MPI_IN_PLACE, &g, 1, MPI_DOUBLE),
                "omnibatch_allreduce_gradient", STALE);
    ck_assert_double_eq(g, 1.0);
    OB_CK_STATE(omnibatch_get_plan(copy, plan, P), "omnibatch_get_plan", STALE);
    OB_CK_STATE(omnibatch_set_plan(copy, plan, P), "omnibatch_set_plan", STALE);
    OB_CK_STATE(omnibatch_permutation(copy, 0, perm), "omnibatch_permutation", STALE);
    OB_CK_STATE(omnibatch_get_stats(copy, &st), "omnibatch_get_stats", STALE);

    /* A context alive beside the stale handle is untouched by all this. */
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, 4L * P, 100, NULL, &other));
    if (other != copy) {
        OB_CK_STATE(omnibatch_destroy(&copy), "omnibatch_destroy", STALE);
    }
    OB_CK_OK(omnibatch_next_step(other, &s));
    OB_CK_OK(omnibatch_destroy(&other));
}
END_TEST

static Suite *make_mpi_api_lifetime_suite(void)
{
    Suite *s = suite_create("mpi_api_lifetime");
    TCase *tc = tcase_create("stale");

    tcase_add_test(tc, test_destroy_through_a_stale_copy);
    tcase_add_test(tc, test_every_call_through_a_stale_copy);
    suite_add_tcase(s, tc);
    return s;
}

/* 1 unless \p rc is OMNIBATCH_ERR_STATE and the line names \p fn and why;
 * said at once, before a later call can take the process down. */
static int expect_state(const char *fn, int rc)
{
    const char *line = omnibatch_last_error();

    if (OMNIBATCH_ERR_STATE == rc && line == strstr(line, fn)
        && NULL != strstr(line, "MPI is finalized")) {
        return 0;
    }
    fprintf(stderr, "mpi_api_lifetime: %s after MPI_Finalize returned %d (%s), expected "
            "OMNIBATCH_ERR_STATE; its line: '%s'\n", fn, rc, omnibatch_strerror(rc), line);
    fflush(stderr);
    return 1;
}

/* After MPI_Finalize: every call taking a context refuses, a context left
 * alive is still freed by omnibatch_destroy, and nothing reaches MPI.
 * Check cannot gather the ranks' verdicts any more: each rank counts its
 * own failures and exits with them (mpirun fails on any rank's status).
 * The local calls come first, the collective ones (which would reach MPI)
 * last. */
static int after_finalize(omnibatch_t ctx, int P)
{
    omnibatch_step s;
    omnibatch_stats st;
    long plan[64] = {0};
    long perm[100];
    double g = 1.0;
    omnibatch_t late = ctx;      /* not NULL: omnibatch_create must clear it */
    int failed = 0;

    failed += expect_state("omnibatch_get_plan", omnibatch_get_plan(ctx, plan, P));
    failed += expect_state("omnibatch_get_stats", omnibatch_get_stats(ctx, &st));
    failed += expect_state("omnibatch_permutation", omnibatch_permutation(ctx, 0, perm));
    failed += expect_state("omnibatch_compute_begin", omnibatch_compute_begin(ctx));
    failed += expect_state("omnibatch_compute_end", omnibatch_compute_end(ctx));
    failed += expect_state("omnibatch_next_step", omnibatch_next_step(ctx, &s));
    failed += expect_state("omnibatch_allreduce_gradient",
                           omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, &g, 1, MPI_DOUBLE));
    failed += expect_state("omnibatch_set_plan", omnibatch_set_plan(ctx, plan, P));
    failed += expect_state("omnibatch_destroy", omnibatch_destroy(&ctx));
    failed += expect_state("omnibatch_create",
                           omnibatch_create(MPI_COMM_WORLD, 4L * P, 100, NULL, &late));
    if (NULL != late) {
        fprintf(stderr, "mpi_api_lifetime: omnibatch_create after MPI_Finalize left *ctx set\n");
        failed++;
    }
    if (NULL != ctx) {
        fprintf(stderr, "mpi_api_lifetime: omnibatch_destroy after MPI_Finalize kept *ctx\n");
        failed++;
    }
    if (1.0 != g) {
        fprintf(stderr, "mpi_api_lifetime: the buffer changed after MPI_Finalize\n");
        failed++;
    }
    return failed;
}

int main(int argc, char **argv)
{
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    int P;
    int rc;

    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(make_mpi_api_lifetime_suite());
    P = mpi_size();
    /* A context still running a step when MPI goes away. */
    if (P > 64 || OMNIBATCH_SUCCESS != omnibatch_create(MPI_COMM_WORLD, 4L * P, 100, NULL, &ctx)
        || OMNIBATCH_SUCCESS != omnibatch_next_step(ctx, &s)) {
        fprintf(stderr, "mpi_api_lifetime: cannot set up: %s\n", omnibatch_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    if (0 != after_finalize(ctx, P)) {
        rc = EXIT_FAILURE;
    }
    return rc;
}
