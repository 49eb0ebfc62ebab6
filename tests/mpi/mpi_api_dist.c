/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The API with the distributed decision (run by mpi_api_dist.sh with
 * OMNIBATCH_PLANNER=distributed and OMNIBATCH_VERIFY=on, so that every
 * exchange also checks that all ranks reached the same decision and plan and
 * that the central planner finds the same optimum and integer step time):
 * ranks of three speeds sleep their per-sample time; every step's plan must
 * be the same on every rank, sum to B, keep the bounds and the granularity,
 * and hand out the slice at the sum of the batches before; the slow ranks
 * must end with less.  OB_DIST_STEPS sets the steps (few at 64 ranks).
 */
#include "config.h"

#include <check.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi_api_common.h"

#define GRANULE 2
#define MAXP 64

/* Every third rank is twice as slow as the others. */
static long per_sample_ns(int rank)
{
    return 0 == rank % 3 ? 1200000L : 300000L;
}

static long steps_to_run(void)
{
    const char *s = getenv("OB_DIST_STEPS");

    return NULL != s ? atol(s) : 24;
}

/* The plan: the same bits on every rank, a plan of B within the bounds. */
static void check_plan(omnibatch_t ctx, const omnibatch_step *s, long B, long hi)
{
    const int P = mpi_size();
    long plan[MAXP];
    long sum = 0, before = 0;
    uint64_t h = UINT64_C(0xcbf29ce484222325), mine[2], most[2];

    OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
    for (int i = 0; i < P; i++) {
        ck_assert_int_ge(plan[i], GRANULE);
        ck_assert_int_le(plan[i], hi);
        ck_assert_int_eq(plan[i] % GRANULE, 0);
        before += i < mpi_rank() ? plan[i] : 0;
        sum += plan[i];
        h = (h ^ (uint64_t) plan[i]) * UINT64_C(0x100000001b3);
    }
    ck_assert_int_eq(sum, B);
    if (s->total == B) {
        ck_assert_int_eq(s->count, plan[mpi_rank()]);
        ck_assert_int_eq(s->start % B, before);
    }
    mine[0] = h;
    mine[1] = ~h;
    MPI_Allreduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    ck_assert_msg(most[0] == mine[0] && most[1] == mine[1], "rank %d holds another plan", mpi_rank());
}

/* Ranks up to which the emulated speeds are measurable on a small machine. */
#define OB_SPEEDS_MEANINGFUL_RANKS 2

START_TEST(test_distributed_decision_agrees_everywhere)
{
    const int P = mpi_size();
    const long B = 16L * P;
    const long hi = 40;
    const long steps = steps_to_run();
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    omnibatch_stats st;
    long plan[MAXP];
    double slow = 0.0, fast = 0.0;
    int nslow = 0;
    double grad[4] = { 1.0, 1.0, 1.0, 1.0 };

    ck_assert_int_le(P, MAXP);
    OB_CK_OK(omnibatch_options_init(&opt));
    ck_assert_int_eq(opt.verify, 1);
    opt.adaptive = 1;
    opt.period = 1;
    opt.warmup = 1;
    opt.min_batch = GRANULE;
    opt.max_batch = hi;
    opt.granularity = GRANULE;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 50 * B + 6, &opt, &ctx));
    for (long t = 0; t < steps; t++) {
        OB_CK_OK(omnibatch_next_step(ctx, &s));
        check_plan(ctx, &s, B, hi);
        mpi_sleep_ns(s.count * per_sample_ns(mpi_rank()));
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, grad, 4, MPI_DOUBLE));
    }
    OB_CK_OK(omnibatch_get_stats(ctx, &st));
    ck_assert_int_eq(st.exchanges, steps - 1);
    ck_assert_int_gt(st.decisions, 0);
    ck_assert_int_gt(st.changes, 0);
    OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
    for (int i = 0; i < P; i++) {
        if (0 == i % 3) {
            slow += (double) plan[i];
            nslow++;
        } else {
            fast += (double) plan[i];
        }
    }
    /* The plan follows the speeds where the ranks' sleeps are what they
     * say: one rank per core of a small machine.  With more ranks
     * oversubscribed the scheduler, not the emulated speed, sets each
     * step's time (a run at 3 ranks under load once handed the slow rank
     * the most), and only the agreement above is asserted. */
    if (nslow < P && P <= OB_SPEEDS_MEANINGFUL_RANKS) {
        ck_assert_double_lt(slow / nslow, fast / (P - nslow));
    }
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

/* Ranks up to which a run's steps are steady enough to count its exchanges. */
#define OB_QUIET_RANKS 4

/* OB_DIST_STEPS steps of a context with REACT on (the default) at period
 * 1000, rank 0 taking \p rank0_ns a sample and the others 0.3 ms: its
 * stats. */
static void react_run(long rank0_ns, omnibatch_stats *st)
{
    const long B = 16L * mpi_size();
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    double grad[4] = { 1.0, 1.0, 1.0, 1.0 };

    OB_CK_OK(omnibatch_options_init(&opt));
    ck_assert_int_eq(opt.react, 1);
    opt.adaptive = 1;
    opt.period = 1000;
    opt.warmup = 1;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 50 * B + 6, &opt, &ctx));
    for (long t = 0; t < steps_to_run(); t++) {
        OB_CK_OK(omnibatch_next_step(ctx, &s));
        mpi_sleep_ns(s.count * (0 == mpi_rank() ? rank0_ns : 300000L));
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, grad, 4, MPI_DOUBLE));
    }
    OB_CK_OK(omnibatch_get_stats(ctx, st));
    OB_CK_OK(omnibatch_destroy(&ctx));
}

/* OMNIBATCH_REACT with the distributed decision: an exchange is brought
 * forward by news (a model's first sample, a confirmed change of speed) and
 * the follow-ups of a change, not at every step.  The news was never
 * cleared on this path, so after the first sample every step opened with a
 * whole decision (22 exchanges in 24 steps at period 1000). */
START_TEST(test_distributed_react_exchanges_on_news_only)
{
    const long steps = steps_to_run();
    omnibatch_stats st;

    react_run(300000L, &st);
    /* The first sample's exchange came early (none is due before step 1000). */
    ck_assert_int_ge(st.early_exchanges, 1);
    ck_assert_int_eq(st.exchanges, st.early_exchanges);
    /* Equal speeds: the first exchange, and a change's follow-ups if noise
     * moved the plan; oversubscribed beyond a few ranks the scheduler's
     * noise confirms changes of speed, and only the above is asserted. */
    if (mpi_size() <= OB_QUIET_RANKS && steps >= 12) {
        ck_assert_msg(st.exchanges <= steps / 2, "%ld exchanges in %ld steps at period 1000",
                      (long) st.exchanges, steps);
    }
}
END_TEST

/* And after a change of plan, REACT's follow-ups: the next decisions come at
 * once, as with the central planner (rank 0 four times slower, period 1000:
 * 4 exchanges there); the distributed decision never asked for them (1). */
START_TEST(test_distributed_react_follows_a_change_up)
{
    const int P = mpi_size();
    omnibatch_stats st;

    react_run(1200000L, &st);
    if (P > 1 && P <= OB_QUIET_RANKS && steps_to_run() >= 12) {
        ck_assert_int_gt(st.changes, 0);
        ck_assert_msg(st.exchanges >= 3, "%ld exchanges after a change of plan, %ld changes", (long) st.exchanges,
                      (long) st.changes);
    }
}
END_TEST

/* A rank parked by the distributed decision (min_batch 0, 60 times slower)
 * is probed now and then, as under the central planner (4 of 60 steps
 * there); the distributed decision never gave it work again (0). */
START_TEST(test_distributed_parked_rank_is_probed)
{
    const int P = mpi_size();
    const long B = 32L * P;
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    long plan[MAXP];
    long parked = 0, probed = 0;
    double grad[4] = { 1.0, 1.0, 1.0, 1.0 };

    if (P < 2 || P > OB_QUIET_RANKS) {
        return;
    }
    OB_CK_OK(omnibatch_options_init(&opt));
    opt.adaptive = 1;
    opt.period = 2;
    opt.warmup = 1;
    opt.min_batch = 0;
    opt.granularity = GRANULE;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 1000 * B, &opt, &ctx));
    for (long t = 0; t < 60; t++) {
        OB_CK_OK(omnibatch_next_step(ctx, &s));
        OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
        if (0 == plan[0]) {
            parked++;
        } else if (parked > 0) {
            probed++;
        }
        mpi_sleep_ns(s.count * (0 == mpi_rank() ? 6000000L : 100000L));
        OB_CK_OK(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, grad, 4, MPI_DOUBLE));
    }
    if (0 == mpi_rank()) {
        printf("distributed decision: rank 0 parked %ld of 60 steps, probed %ld\n", parked, probed);
    }
    ck_assert_msg(parked > 0, "rank 0, 60 times slower, was never parked");
    ck_assert_msg(probed > 0, "rank 0 parked for %ld steps, never probed", parked);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s;
    TCase *tc;
    int status;

    MPI_Init(&argc, &argv);
    s = suite_create("api_dist");
    tc = tcase_create("distributed");
    tcase_set_timeout(tc, 100);
    tcase_add_test(tc, test_distributed_decision_agrees_everywhere);
    tcase_add_test(tc, test_distributed_react_exchanges_on_news_only);
    tcase_add_test(tc, test_distributed_react_follows_a_change_up);
    tcase_add_test(tc, test_distributed_parked_rank_is_probed);
    suite_add_tcase(s, tc);
    status = mpi_run_suite(s);
    MPI_Finalize();
    return status;
}
