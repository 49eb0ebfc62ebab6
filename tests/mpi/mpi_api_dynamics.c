/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Speed changes under the API, with emulated speeds: each step sleeps
 * between the compute markers for its batch times a per-sample time (plus
 * a fixed cost where a test says), so the ranks' speeds are what the test
 * sets, whatever the machine.  The figures judged are plans and counts,
 * never wall-clock thresholds:
 *   - a rank that turns 4x slower for good is given less work (below
 *     LESS_WORK of the equal split) within 3 steps (OMNIBATCH_REACT brings the exchange forward; with the period
 *     of 8 alone the plan would move only at the next multiple of 8);
 *   - the first plan comes at the first measured step, not at step period;
 *   - a one-step spike of 10x moves nothing (the rank keeps more than
 *     LESS_WORK of the equal split);
 *   - with OMNIBATCH_MIN_BATCH=0 a rank with a large fixed cost is parked
 *     (batch 0, gradient weight 0, still in every collective), is probed,
 *     and gets work back once it recovers.
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "mpi_api_common.h"
#include "mpi_api_late.h"

#define PER_RANK 16
/* Seconds per sample at speed 1: a step of 32 ms, long against the
 * scheduling delays of a crowded machine. */
#define SAMPLE_S 2e-3
/* The spike test's steps are longer still (128 ms): there two slow steps in
 * a row are a change by design, and a crowded machine's scheduling delay
 * must not make the step after the spike a second one. */
#define SPIKE_SAMPLE_S 8e-3
/* A rank is "given less work" below this share of the equal split. */
#define LESS_WORK 0.6

static void sleep_s(double s)
{
    struct timespec ts;

    if (!(s > 0.0)) {
        return;
    }
    ts.tv_sec = (time_t) s;
    ts.tv_nsec = (long) ((s - (double) ts.tv_sec) * 1e9);
    while (0 != nanosleep(&ts, &ts)) {
    }
}

/* One step: sleep fixed + count * per_sample (nothing at count 0: a parked
 * rank computes nothing), reduce a gradient of value rank + 1; returns the
 * step and checks the weighted sum against the plan. */
static omnibatch_step one_step(omnibatch_t ctx, double fixed, double per_sample)
{
    omnibatch_step s;
    long *plan = malloc((size_t) mpi_size() * sizeof *plan);
    double grad = (double) (mpi_rank() + 1), sum = 0.0, want = 0.0;

    ck_assert_ptr_nonnull(plan);
    OB_CK_OK(omnibatch_next_step(ctx, &s));
    OB_CK_OK(omnibatch_compute_begin(ctx));
    if (s.count > 0) {
        sleep_s(fixed + (double) s.count * per_sample);
    }
    OB_CK_OK(omnibatch_compute_end(ctx));
    OB_CK_OK(omnibatch_allreduce_gradient(ctx, &grad, &sum, 1, MPI_DOUBLE));
    OB_CK_OK(omnibatch_get_plan(ctx, plan, mpi_size()));
    for (int i = 0; i < mpi_size(); i++) {
        want += (double) plan[i] / (double) s.total * (double) (i + 1);
    }
    /* Not a short last step here: the plan is the step's split. */
    ck_assert_int_eq(s.total, PER_RANK * mpi_size());
    ck_assert_double_eq_tol(sum, want, 1e-12);
    free(plan);
    return s;
}

static omnibatch_t make(long period, long min_batch)
{
    omnibatch_options opt;
    omnibatch_t ctx = NULL;

    OB_CK_OK(omnibatch_options_init(&opt));
    opt.period = period;
    opt.warmup = 1;
    opt.min_batch = min_batch;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, (long) PER_RANK * mpi_size(), 1000000, &opt, &ctx));
    return ctx;
}

static long batch_of(omnibatch_t ctx, int r)
{
    long plan[64];

    OB_CK_OK(omnibatch_get_plan(ctx, plan, mpi_size()));
    return plan[r];
}

START_TEST(test_a_lasting_slowdown_is_followed_within_three_steps)
{
    const int slow = mpi_size() - 1;
    const long change = 17;     /* just after the exchange at step 16 */
    omnibatch_t ctx = make(8, 1);
    omnibatch_stats st;
    long before = 0, moved_at = -1;

    for (long k = 0; k < 28; k++) {
        int slowed = mpi_rank() == slow && k >= change;
        omnibatch_step s = one_step(ctx, 0.0, SAMPLE_S * (slowed ? 4.0 : 1.0));

        if (k == change) {
            MPI_Bcast(&s.count, 1, MPI_LONG, slow, MPI_COMM_WORLD);
            before = s.count;
        }
        if (k > change && moved_at < 0 && batch_of(ctx, slow) < LESS_WORK * PER_RANK) {
            moved_at = k;
        }
    }
    OB_CK_OK(omnibatch_get_stats(ctx, &st));
    if (0 == mpi_rank()) {
        printf("slowdown at step %ld: the slow rank's batch fell from %ld at step %ld; %ld early "
               "exchanges, %.3g ms in the react allreduce over 28 steps\n", change, before, moved_at,
               st.early_exchanges, 1e3 * st.react_total_s);
    }
    /* Two slow samples confirm it (steps 17, 18); step 19 starts with the
     * exchange.  One step of slack for a noisy machine; the period alone
     * would move it at step 24. */
    ck_assert_int_ge(moved_at, change + 1);
    ck_assert_int_le(moved_at, change + 3);
    ck_assert_int_ge(st.early_exchanges, 1);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

/* The first plan does not wait for step period: the models' first samples
 * bring the first exchange forward (warmup 1: sampled at step 1, the
 * exchange opens step 2). */
START_TEST(test_the_first_plan_comes_at_the_first_measured_step)
{
    const int slow = mpi_size() - 1;
    omnibatch_t ctx = make(100, 1);
    omnibatch_stats st;
    long moved_at = -1;

    for (long k = 0; k < 6 && moved_at < 0; k++) {
        (void) one_step(ctx, 0.0, SAMPLE_S * (mpi_rank() == slow ? 4.0 : 1.0));
        if (batch_of(ctx, slow) < LESS_WORK * PER_RANK) {
            moved_at = k;
        }
    }
    OB_CK_OK(omnibatch_get_stats(ctx, &st));
    if (0 == mpi_rank()) {
        printf("first plan: the 4x slower rank's batch fell at step %ld (period 100), %ld exchanges\n",
               moved_at, st.exchanges);
    }
    /* One step of slack for a noisy machine; the period alone would move
     * it at step 100. */
    ck_assert_int_ge(moved_at, 2);
    ck_assert_int_le(moved_at, 3);
    ck_assert_int_ge(st.early_exchanges, 1);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

START_TEST(test_a_one_step_spike_moves_nothing)
{
    const int spiky = mpi_size() - 1;
    omnibatch_t ctx = make(4, 1);
    long before = 0, least = PER_RANK * mpi_size();

    for (long k = 0; k < 30; k++) {
        int spike = mpi_rank() == spiky && 14 == k;

        one_step(ctx, 0.0, SPIKE_SAMPLE_S * (spike ? 10.0 : 1.0));
        if (13 == k) {
            before = batch_of(ctx, spiky);
        }
        if (k > 14) {
            long b = batch_of(ctx, spiky);

            least = b < least ? b : least;
        }
    }
    if (0 == mpi_rank()) {
        printf("spike at step 14: the rank's batch was %ld, at least %ld after it\n", before, least);
    }
    ck_assert_int_ge(least, (long) (LESS_WORK * PER_RANK));
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

START_TEST(test_a_parked_rank_gets_work_back)
{
    /* The last rank pays a fixed 160 ms per step it computes, 5x the
     * others' whole step: with min_batch 0 it is parked; at step 40 the
     * cost goes and it must be back to a fair share within 24 steps. */
    const int slow = mpi_size() - 1;
    const long recover = 40;
    omnibatch_t ctx = make(4, 0);
    omnibatch_stats st;
    long parked_seen = 0, back_at = -1;

    for (long k = 0; k < recover + 24; k++) {
        double fixed = mpi_rank() == slow && k < recover ? 5.0 * PER_RANK * SAMPLE_S : 0.0;
        omnibatch_step s = one_step(ctx, fixed, SAMPLE_S);
        long b = batch_of(ctx, slow);

        if (mpi_rank() == slow && 0 == s.count) {
            parked_seen++;
        }
        if (k >= recover && back_at < 0 && b >= PER_RANK / 2) {
            back_at = k;
        }
    }
    MPI_Bcast(&parked_seen, 1, MPI_LONG, slow, MPI_COMM_WORLD);
    OB_CK_OK(omnibatch_get_stats(ctx, &st));
    MPI_Bcast(&st.parked_steps, 1, MPI_LONG, slow, MPI_COMM_WORLD);
    if (0 == mpi_rank()) {
        printf("parked rank %d: %ld steps at batch 0 (stats %ld), a fair share again at step %ld "
               "(recovered at %ld)\n", slow, parked_seen, st.parked_steps, back_at, recover);
    }
    ck_assert_int_ge(parked_seen, 10);
    ck_assert_int_eq(st.parked_steps, parked_seen);
    ck_assert_int_ge(back_at, recover);
    OB_CK_OK(omnibatch_destroy(&ctx));
}
END_TEST

static Suite *dynamics_suite(void)
{
    Suite *s = suite_create("dynamics");
    TCase *tc = tcase_create("dynamics");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_a_lasting_slowdown_is_followed_within_three_steps);
    tcase_add_test(tc, test_the_first_plan_comes_at_the_first_measured_step);
    tcase_add_test(tc, test_a_one_step_spike_moves_nothing);
    tcase_add_test(tc, test_a_parked_rank_gets_work_back);
    /* mpi_api_late.h, here with the ranks polling. */
    late_add_tests(tc);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(dynamics_suite());
    MPI_Finalize();
    return rc;
}
