/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Bad arguments: each gives its code and a detail line naming the argument,
 * the value and what is allowed; collective calls fail on every rank (no
 * rank left waiting) and leave nothing behind.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "mpi_api_common.h"

#define EXPECT_FAIL(code, needle, call)                                                      \
    do {                                                                                     \
        int ef_rc_ = (call);                                                                 \
        ck_assert_msg((code) == ef_rc_, "%s -> %d (%s), expected %d: %s", #call, ef_rc_,      \
                      omnibatch_strerror(ef_rc_), (code), omnibatch_last_error());           \
        ck_assert_msg(NULL != strstr(omnibatch_last_error(), (needle)),                      \
                      "%s: detail \"%s\" lacks \"%s\"", #call, omnibatch_last_error(),       \
                      (needle));                                                             \
    } while (0)

static void expect_create_fails(const omnibatch_options *o, long B, long N, int code,
                                const char *needle)
{
    omnibatch_t ctx = (omnibatch_t) &ctx;   /* must come back NULL */

    EXPECT_FAIL(code, needle, omnibatch_create(MPI_COMM_WORLD, B, N, o, &ctx));
    ck_assert_ptr_null(ctx);
}

/* Options from the defaults with one field spoilt. */
#define BAD(stmt, code, needle)                          \
    do {                                                 \
        OB_CK_OK(omnibatch_options_init(&o));            \
        stmt;                                            \
        expect_create_fails(&o, B, N, (code), (needle)); \
    } while (0)

START_TEST(test_create_rejects_each_bad_option)
{
    const int P = mpi_size();
    const long B = 16L * P;
    const long N = 1000;
    char line[160];
    omnibatch_options o;

    OB_CK_OK(omnibatch_options_init(&o));
    expect_create_fails(&o, 0, N, OMNIBATCH_ERR_ARG, "global_batch=0: expected 1..1000000000");
    expect_create_fails(&o, 1000000001L, N, OMNIBATCH_ERR_ARG, "global_batch=1000000001: expected");
    expect_create_fails(&o, B, 0, OMNIBATCH_ERR_ARG, "dataset_size=0: expected >= 1");
    expect_create_fails(&o, -5, N, OMNIBATCH_ERR_ARG, "global_batch=-5");
    BAD(o.min_batch = -1, OMNIBATCH_ERR_ARG, "min_batch=-1: expected >= 0 (0: the rank may be parked)");
    BAD(o.react = 2, OMNIBATCH_ERR_ARG, "react=2: expected 0 or 1");
    snprintf(line, sizeof line, "min_batch=%ld: expected at most global_batch=%ld", B + 1, B);
    BAD(o.min_batch = B + 1, OMNIBATCH_ERR_INFEASIBLE, line);
    BAD((o.min_batch = 3, o.max_batch = 2), OMNIBATCH_ERR_ARG,
        "max_batch=2: expected 0 (no limit) or >= min_batch=3");
    BAD(o.granularity = 0, OMNIBATCH_ERR_ARG, "granularity=0: expected 1..global_batch");
    snprintf(line, sizeof line, "granularity=%ld: expected 1..global_batch (%ld)", B + 1, B);
    BAD(o.granularity = B + 1, OMNIBATCH_ERR_ARG, line);
    BAD(o.gain = 0.0, OMNIBATCH_ERR_ARG, "gain=0: expected a number in (0, 1]");
    BAD(o.gain = 1.5, OMNIBATCH_ERR_ARG, "gain=1.5: expected a number in (0, 1]");
    BAD(o.gain = (double) NAN, OMNIBATCH_ERR_ARG, "gain=nan: expected a number in (0, 1]");
    BAD(o.deadband = -0.1, OMNIBATCH_ERR_ARG, "deadband=-0.1: expected a number in [0, 0.5]");
    BAD(o.deadband = 0.6, OMNIBATCH_ERR_ARG, "deadband=0.6: expected a number in [0, 0.5]");
    BAD(o.forget = 0.4, OMNIBATCH_ERR_ARG, "forget=0.4: expected a number in [0.5, 1]");
    BAD(o.forget = 1.1, OMNIBATCH_ERR_ARG, "forget=1.1: expected a number in [0.5, 1]");
    BAD(o.period = 0, OMNIBATCH_ERR_ARG, "period=0: expected 1..1000000 steps");
    BAD(o.period = 1000001, OMNIBATCH_ERR_ARG, "period=1000001: expected 1..1000000 steps");
    BAD(o.warmup = -1, OMNIBATCH_ERR_ARG, "warmup=-1: expected 0..1000000 steps");
    BAD(o.convention = (omnibatch_convention) 2, OMNIBATCH_ERR_ARG, "convention=2: expected");
    BAD(o.prior = (omnibatch_prior) 3, OMNIBATCH_ERR_ARG, "prior=3: expected");
    BAD(o.adaptive = 2, OMNIBATCH_ERR_ARG, "adaptive=2: expected 0 or 1");
    BAD(o.verify = -1, OMNIBATCH_ERR_ARG, "verify=-1: expected 0 or 1");
}
END_TEST

START_TEST(test_create_rejects_infeasible_bounds)
{
    const int P = mpi_size();
    const long B = 16L * P;
    const long N = 1000;
    char line[160];
    omnibatch_options o;

    /* Every rank alone is fine; together they cannot hold B. */
    snprintf(line, sizeof line, "min_batch: the %d ranks need at least %ld samples per step but "
             "global_batch=%ld", P, 17L * P, B);
    BAD(o.min_batch = 17, OMNIBATCH_ERR_INFEASIBLE, line);
    snprintf(line, sizeof line, "max_batch: the %d ranks hold at most %ld samples per step but "
             "global_batch=%ld", P, 15L * P, B);
    BAD(o.max_batch = 15, OMNIBATCH_ERR_INFEASIBLE, line);
    /* B < P: not even one sample per rank. */
    OB_CK_OK(omnibatch_options_init(&o));
    expect_create_fails(&o, P - 1, N, OMNIBATCH_ERR_INFEASIBLE, "min_batch: the ");
    /* Sums fit but the granularity does not: only multiples of 4 in 9..11
     * would do, and there are none (only one rank may carry the rest). */
    OB_CK_OK(omnibatch_options_init(&o));
    o.granularity = 4;
    o.min_batch = 9;
    o.max_batch = 11;
    expect_create_fails(&o, 10L * P, N, OMNIBATCH_ERR_INFEASIBLE, "");
}
END_TEST

START_TEST(test_create_bad_handles)
{
    omnibatch_options o;
    omnibatch_t ctx = (omnibatch_t) &o;

    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "opt=NULL", omnibatch_options_init(NULL));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "ctx=NULL",
                omnibatch_create(MPI_COMM_WORLD, 8L * mpi_size(), 100, NULL, NULL));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "comm=MPI_COMM_NULL: expected an intra-communicator",
                omnibatch_create(MPI_COMM_NULL, 8L * mpi_size(), 100, NULL, &ctx));
    ck_assert_ptr_null(ctx);
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "ctx=NULL", omnibatch_destroy(NULL));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "*ctx=NULL", omnibatch_destroy(&ctx));
}
END_TEST

START_TEST(test_create_settings_must_agree)
{
    const int P = mpi_size();
    const int r = mpi_rank();
    omnibatch_options o;
    omnibatch_t ctx = NULL;
    char line[160];

    /* A global batch that differs: every rank names the same culprit. */
    OB_CK_OK(omnibatch_options_init(&o));
    snprintf(line, sizeof line, "global_batch differs between ranks: %ld on rank 0, %ld on rank 1",
             8L * P, 8L * P + 1);
    expect_create_fails(&o, 8L * P + (1 == r), 100, OMNIBATCH_ERR_ARG, line);
    o.gain = 0 == r ? 0.5 : 0.25;
    expect_create_fails(&o, 8L * P, 100, OMNIBATCH_ERR_ARG,
                        "gain differs between ranks: 0.5 on rank 0, 0.25 on rank 1");
    OB_CK_OK(omnibatch_options_init(&o));
    o.seed = (uint64_t) r + 1;
    expect_create_fails(&o, 8L * P, 100, OMNIBATCH_ERR_ARG, "seed differs between ranks");

    /* One rank's bad option fails them all, with the culprit named. */
    OB_CK_OK(omnibatch_options_init(&o));
    o.gain = 1 == r ? 2.0 : 0.5;
    expect_create_fails(&o, 8L * P, 100, OMNIBATCH_ERR_ARG,
                        1 == r ? "gain=2: expected a number in (0, 1]" : "rank 1 failed");

    /* Bounds are per rank and may differ: rank i's least batch is i + 1. */
    OB_CK_OK(omnibatch_options_init(&o));
    o.min_batch = 1 + r;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, 8L * P, 100, &o, &ctx));
    {
        long plan[64];

        ck_assert_int_le(P, 8);
        for (int i = 1; i < P - 1; i++) {
            plan[i] = 8;
        }
        plan[P - 1] = P;
        plan[0] = 16 - P;
        OB_CK_OK(omnibatch_set_plan(ctx, plan, P));
        plan[P - 1] = P - 1;
        plan[0] = 17 - P;
        snprintf(line, sizeof line, "plan[%d]=%d: expected %d..%ld (rank %d's min_batch..max_batch)",
                 P - 1, P - 1, P, 8L * P, P - 1);
        EXPECT_FAIL(OMNIBATCH_ERR_ARG, line, omnibatch_set_plan(ctx, plan, P));
    }
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

START_TEST(test_step_calls_check_their_arguments)
{
    const int P = mpi_size();
    omnibatch_options o;
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    omnibatch_stats st;
    double d[4] = {0.0, 0.0, 0.0, 0.0};
    int ints[4] = {0, 0, 0, 0};
    long plan[64];
    long before[64];
    char line[160];

    ck_assert_int_le(P, 64);
    OB_CK_OK(omnibatch_options_init(&o));
    o.granularity = 2;
    o.adaptive = 0;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, 8L * P, 100, &o, &ctx));

    /* Out of order. */
    EXPECT_FAIL(OMNIBATCH_ERR_STATE, "no step is running",
                omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, d, 4, MPI_DOUBLE));
    EXPECT_FAIL(OMNIBATCH_ERR_STATE, "no step is running", omnibatch_compute_begin(ctx));
    EXPECT_FAIL(OMNIBATCH_ERR_STATE, "no omnibatch_compute_begin", omnibatch_compute_end(ctx));

    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "ctx=NULL", omnibatch_next_step(NULL, &s));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "step=NULL", omnibatch_next_step(ctx, NULL));
    OB_CK_OK(omnibatch_next_step(ctx, &s));

    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "type is not MPI_FLOAT or MPI_DOUBLE",
                omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, ints, 4, MPI_INT));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "count=-1: expected >= 0",
                omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, d, -1, MPI_DOUBLE));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "recvbuf=NULL with count=4",
                omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, NULL, 4, MPI_DOUBLE));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "sendbuf=NULL with count=4",
                omnibatch_allreduce_gradient(ctx, NULL, d, 4, MPI_DOUBLE));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "sendbuf == recvbuf: expected MPI_IN_PLACE",
                omnibatch_allreduce_gradient(ctx, d, d, 4, MPI_DOUBLE));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "ctx=NULL",
                omnibatch_allreduce_gradient(NULL, MPI_IN_PLACE, d, 4, MPI_DOUBLE));

    OB_CK_OK(omnibatch_compute_begin(ctx));
    EXPECT_FAIL(OMNIBATCH_ERR_STATE, "called twice without omnibatch_compute_end",
                omnibatch_compute_begin(ctx));
    OB_CK_OK(omnibatch_compute_end(ctx));
    EXPECT_FAIL(OMNIBATCH_ERR_STATE, "no omnibatch_compute_begin", omnibatch_compute_end(ctx));

    /* Plan queries. */
    snprintf(line, sizeof line, "nranks=%d: expected the communicator's size %d", P + 1, P);
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, line, omnibatch_get_plan(ctx, plan, P + 1));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "plan=NULL", omnibatch_get_plan(ctx, NULL, P));
    OB_CK_OK(omnibatch_get_plan(ctx, before, P));

    memcpy(plan, before, (size_t) P * sizeof *plan);
    plan[0] += 2;
    snprintf(line, sizeof line, "plan sums to %ld: expected global_batch=%ld", 8L * P + 2, 8L * P);
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, line, omnibatch_set_plan(ctx, plan, P));
    memcpy(plan, before, (size_t) P * sizeof *plan);
    plan[0] = 0;
    plan[1] += before[0];
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "plan[0]=0: expected 1..", omnibatch_set_plan(ctx, plan, P));
    memcpy(plan, before, (size_t) P * sizeof *plan);
    plan[0] -= 1;
    plan[1] += 1;
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "plan[1]=9: expected a multiple of the granularity 2",
                omnibatch_set_plan(ctx, plan, P));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "nranks=", omnibatch_set_plan(ctx, before, P - 1));
    /* Only rank 1's plan is wrong: every rank fails and is told who. */
    memcpy(plan, before, (size_t) P * sizeof *plan);
    if (1 == mpi_rank()) {
        plan[0] += 1;
    }
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, 1 == mpi_rank() ? "plan sums to" : "rank 1 rejected the plan",
                omnibatch_set_plan(ctx, plan, P));
    /* Valid plans, but not the same on every rank. */
    memcpy(plan, before, (size_t) P * sizeof *plan);
    if (1 == mpi_rank()) {
        plan[0] += 2;
        plan[1] -= 2;
    }
    EXPECT_FAIL(OMNIBATCH_ERR_DISAGREE, "the ranks passed different plans",
                omnibatch_set_plan(ctx, plan, P));
    /* Nothing of that took hold. */
    OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
    ck_assert_mem_eq(plan, before, (size_t) P * sizeof *plan);

    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "epoch=-1: expected >= 0", omnibatch_permutation(ctx, -1, plan));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "perm=NULL", omnibatch_permutation(ctx, 0, NULL));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "stats=NULL", omnibatch_get_stats(ctx, NULL));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "ctx=NULL", omnibatch_get_stats(NULL, &st));

    OB_CK_OK(omnibatch_destroy(&ctx));
    ck_assert_ptr_null(ctx);
}
END_TEST

static Suite *make_mpi_api_args_suite(void)
{
    Suite *s = suite_create("mpi_api_args");
    TCase *tc = tcase_create("args");

    tcase_add_test(tc, test_create_rejects_each_bad_option);
    tcase_add_test(tc, test_create_rejects_infeasible_bounds);
    tcase_add_test(tc, test_create_bad_handles);
    tcase_add_test(tc, test_create_settings_must_agree);
    tcase_add_test(tc, test_step_calls_check_their_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(make_mpi_api_args_suite());
    MPI_Finalize();
    return rc;
}
