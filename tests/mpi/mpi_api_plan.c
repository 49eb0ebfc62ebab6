/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The API across ranks: at every step every rank holds the same plan, it
 * sums to the global batch and keeps its bounds, and the (start, count)
 * slices of all ranks are disjoint and cover each epoch exactly once, while
 * plans change: imposed ones (omnibatch_set_plan) and the controller's own,
 * driven by ranks that really are slower per sample.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpi_api_common.h"

/* What every rank reports about a step, gathered by all. */
enum { F_EPOCH, F_STEP, F_GLOBAL, F_START, F_COUNT, F_TOTAL, F_PLAN };

typedef struct coverage {
    long N;
    long B;
    long min_batch;
    long max_batch;              /* 0: B */
    long granularity;
    long spe;                    /* steps per epoch */
    long epoch;                  /* the epoch being covered */
    long steps_seen;             /* of that epoch */
    long epochs_done;
    int *used;                   /* N: times each position was handed out this epoch */
    long *row;                   /* F_PLAN + P */
    long *all;                   /* P rows */
} coverage;

static void coverage_init(coverage *cv, long N, long B, long min_batch, long max_batch, long g)
{
    int P = mpi_size();

    memset(cv, 0, sizeof *cv);
    cv->N = N;
    cv->B = B;
    cv->min_batch = min_batch;
    cv->max_batch = 0 == max_batch ? B : max_batch;
    cv->granularity = g;
    cv->spe = (N + B - 1) / B;
    cv->used = calloc((size_t) N, sizeof *cv->used);
    cv->row = calloc((size_t) (F_PLAN + P), sizeof *cv->row);
    cv->all = calloc((size_t) (F_PLAN + P) * (size_t) P, sizeof *cv->all);
    ck_assert_ptr_nonnull(cv->used);
    ck_assert_ptr_nonnull(cv->row);
    ck_assert_ptr_nonnull(cv->all);
}

static void coverage_free(coverage *cv)
{
    free(cv->used);
    free(cv->row);
    free(cv->all);
}

/* Gather the step of every rank and check it against the others. */
static void coverage_step(coverage *cv, omnibatch_t ctx, const omnibatch_step *s)
{
    const int P = mpi_size();
    const int W = F_PLAN + P;
    long expected_start;
    long sum_counts = 0;
    long sum_plan = 0;
    int odd = 0;

    cv->row[F_EPOCH] = s->epoch;
    cv->row[F_STEP] = s->step;
    cv->row[F_GLOBAL] = s->global_step;
    cv->row[F_START] = s->start;
    cv->row[F_COUNT] = s->count;
    cv->row[F_TOTAL] = s->total;
    OB_CK_OK(omnibatch_get_plan(ctx, cv->row + F_PLAN, P));
    MPI_Allgather(cv->row, W, MPI_LONG, cv->all, W, MPI_LONG, MPI_COMM_WORLD);

    /* The same step and the same plan everywhere. */
    for (int r = 1; r < P; r++) {
        const long *a = cv->all + (size_t) r * (size_t) W;

        ck_assert_int_eq(a[F_EPOCH], cv->all[F_EPOCH]);
        ck_assert_int_eq(a[F_STEP], cv->all[F_STEP]);
        ck_assert_int_eq(a[F_GLOBAL], cv->all[F_GLOBAL]);
        ck_assert_int_eq(a[F_TOTAL], cv->all[F_TOTAL]);
        for (int i = 0; i < P; i++) {
            ck_assert_int_eq(a[F_PLAN + i], cv->all[F_PLAN + i]);
        }
    }
    ck_assert_int_eq(s->epoch, s->global_step / cv->spe);
    ck_assert_int_eq(s->step, s->global_step % cv->spe);
    ck_assert_int_eq(s->total, s->step == cv->spe - 1 ? cv->N - s->step * cv->B : cv->B);

    /* The plan: sum, bounds, granularity (one rank may carry the rest). */
    for (int i = 0; i < P; i++) {
        long b = cv->all[F_PLAN + i];

        ck_assert_int_ge(b, cv->min_batch);
        ck_assert_int_le(b, cv->max_batch);
        odd += 0 != b % cv->granularity;
        sum_plan += b;
    }
    ck_assert_int_eq(sum_plan, cv->B);
    ck_assert_int_le(odd, 1);

    /* Slices: rank after rank from the step's first position, counts as
     * planned on a full step, summing to the step's size. */
    if (s->epoch != cv->epoch) {
        ck_assert_int_eq(s->epoch, cv->epoch + 1);
        ck_assert_int_eq(cv->steps_seen, cv->spe);
        for (long j = 0; j < cv->N; j++) {
            ck_assert_int_eq(cv->used[j], 1);
        }
        memset(cv->used, 0, (size_t) cv->N * sizeof *cv->used);
        cv->epoch = s->epoch;
        cv->steps_seen = 0;
        cv->epochs_done++;
    }
    expected_start = s->step * cv->B;
    for (int r = 0; r < P; r++) {
        const long *a = cv->all + (size_t) r * (size_t) W;

        ck_assert_int_eq(a[F_START], expected_start);
        ck_assert_int_ge(a[F_COUNT], 0);
        if (a[F_TOTAL] == cv->B) {
            ck_assert_int_eq(a[F_COUNT], cv->all[F_PLAN + r]);
        }
        for (long j = a[F_START]; j < a[F_START] + a[F_COUNT]; j++) {
            ck_assert_int_lt(j, cv->N);
            ck_assert_int_eq(cv->used[j], 0);
            cv->used[j] = 1;
        }
        expected_start += a[F_COUNT];
        sum_counts += a[F_COUNT];
    }
    ck_assert_int_eq(sum_counts, s->total);
    cv->steps_seen++;
}

/* At the end of the last epoch: it too was covered exactly once. */
static void coverage_finish(coverage *cv)
{
    ck_assert_int_eq(cv->steps_seen, cv->spe);
    for (long j = 0; j < cv->N; j++) {
        ck_assert_int_eq(cv->used[j], 1);
    }
    cv->epochs_done++;
}

/* The same pseudo-random sequence on every rank (a plain LCG). */
static unsigned long lcg_next(unsigned long *x)
{
    *x = *x * 6364136223846793005UL + 1442695040888963407UL;
    return *x >> 33;
}

/* A random plan with every entry >= lo, summing to B. */
static void random_plan(unsigned long *x, int P, long B, long lo, long *plan)
{
    long left = B - (long) P * lo;

    for (int i = 0; i < P; i++) {
        plan[i] = lo;
    }
    while (left > 0) {
        long chunk = 1 + (long) (lcg_next(x) % (unsigned long) (left < 5 ? left : 5));

        plan[lcg_next(x) % (unsigned long) P] += chunk;
        left -= chunk;
    }
}

START_TEST(test_imposed_plans_cover_every_epoch)
{
    const int P = mpi_size();
    const long B = 7L * P + 3;
    const long N = 5 * B + 4;      /* five full steps and a short one per epoch */
    const long epochs = 3;
    unsigned long x = 2026;
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    coverage cv;
    long *plan = malloc((size_t) P * sizeof *plan);
    long *perm = malloc((size_t) N * sizeof *perm);
    long *perm0 = malloc((size_t) N * sizeof *perm0);
    char *seen = calloc((size_t) N, 1);
    int changes = 0;

    ck_assert_ptr_nonnull(plan);
    ck_assert_ptr_nonnull(perm);
    ck_assert_ptr_nonnull(perm0);
    ck_assert_ptr_nonnull(seen);
    OB_CK_OK(omnibatch_options_init(&opt));
    opt.adaptive = 0;
    opt.verify = 1;
    opt.min_batch = 1;
    opt.max_batch = 0;
    opt.granularity = 1;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, N, &opt, &ctx));
    coverage_init(&cv, N, B, 1, 0, 1);

    for (long t = 0; t < epochs * cv.spe; t++) {
        /* About every other step a new plan, mid-epoch included. */
        if (lcg_next(&x) % 2) {
            random_plan(&x, P, B, 1, plan);
            OB_CK_OK(omnibatch_set_plan(ctx, plan, P));
            changes++;
        }
        OB_CK_OK(omnibatch_next_step(ctx, &s));
        coverage_step(&cv, ctx, &s);
        if (0 == s.step) {
            /* The epoch's permutation: a permutation, the same on every rank. */
            OB_CK_OK(omnibatch_permutation(ctx, s.epoch, perm));
            memset(seen, 0, (size_t) N);
            for (long j = 0; j < N; j++) {
                ck_assert_int_ge(perm[j], 0);
                ck_assert_int_lt(perm[j], N);
                ck_assert_int_eq(seen[perm[j]], 0);
                seen[perm[j]] = 1;
            }
            memcpy(perm0, perm, (size_t) N * sizeof *perm);
            MPI_Bcast(perm0, (int) N, MPI_LONG, 0, MPI_COMM_WORLD);
            ck_assert_mem_eq(perm0, perm, (size_t) N * sizeof *perm);
        }
    }
    coverage_finish(&cv);
    ck_assert_int_eq(cv.epochs_done, epochs);
    ck_assert_int_gt(changes, 5);
    OB_CK_OK(omnibatch_destroy(&ctx));
    ck_assert_ptr_null(ctx);
    coverage_free(&cv);
    free(plan);
    free(perm);
    free(perm0);
    free(seen);
}
END_TEST

/* The last rank takes twice as long per sample as the others: long enough
 * that a late wake-up on a loaded machine is small beside it. */
static long per_sample_ns(void)
{
    return mpi_rank() == mpi_size() - 1 ? 800000L : 400000L;
}

typedef enum timing_mode {
    TIME_BY_ALLREDUCE,           /* compute ends where omnibatch_allreduce_gradient starts */
    TIME_BY_MARKERS              /* compute_begin / compute_end, no gradient allreduce */
} timing_mode;

/* Run \p steps steps where each rank sleeps its per-sample time for each
 * of its samples; check every step; return the mean plan of the second
 * half of the run (one noisy decision does not decide the test). */
static void run_heterogeneous(timing_mode mode, long warmup, long steps, double *mean_plan,
                              omnibatch_stats *stats)
{
    const int P = mpi_size();
    const long B = 24L * P;
    const long N = 5 * B + 7;
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    coverage cv;
    double grad[4];
    long plan[64];

    ck_assert_int_le(P, 64);
    for (int i = 0; i < P; i++) {
        mean_plan[i] = 0.0;
    }
    OB_CK_OK(omnibatch_options_init(&opt));
    opt.adaptive = 1;
    opt.verify = 1;
    opt.period = 1;
    opt.warmup = warmup;
    opt.min_batch = 2;
    opt.max_batch = 0;
    opt.granularity = 2;
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, N, &opt, &ctx));
    coverage_init(&cv, N, B, 2, 0, 2);
    for (long t = 0; t < steps; t++) {
        OB_CK_OK(omnibatch_next_step(ctx, &s));
        if (TIME_BY_MARKERS == mode) {
            /* The test's own bookkeeping waits for every rank: outside the markers. */
            coverage_step(&cv, ctx, &s);
            OB_CK_OK(omnibatch_compute_begin(ctx));
            mpi_sleep_ns(s.count * per_sample_ns());
            OB_CK_OK(omnibatch_compute_end(ctx));
        } else {
            mpi_sleep_ns(s.count * per_sample_ns());
            for (int k = 0; k < 4; k++) {
                grad[k] = 1.0;
            }
            OB_CK_OK(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, grad, 4, MPI_DOUBLE));
            coverage_step(&cv, ctx, &s);
        }
        if (t >= steps / 2) {
            OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
            for (int i = 0; i < P; i++) {
                mean_plan[i] += (double) plan[i] / (double) (steps - steps / 2);
            }
        }
    }
    OB_CK_OK(omnibatch_get_stats(ctx, stats));
    ck_assert_int_eq(stats->steps, steps);
    OB_CK_OK(omnibatch_destroy(&ctx));
    coverage_free(&cv);
}

static void assert_slow_rank_gets_less(const double *plan, const omnibatch_stats *st)
{
    const int P = mpi_size();

    ck_assert_int_gt(st->changes, 0);
    ck_assert_double_lt(plan[P - 1], 24.0);
    for (int i = 0; i < P - 1; i++) {
        ck_assert_double_lt(plan[P - 1], plan[i]);
    }
}

START_TEST(test_slow_rank_gets_a_smaller_batch)
{
    double plan[64];
    omnibatch_stats st;

    run_heterogeneous(TIME_BY_ALLREDUCE, 1, 30, plan, &st);
    assert_slow_rank_gets_less(plan, &st);
    ck_assert_double_gt(st.blocked_total_s, 0.0);
    ck_assert_double_gt(st.beta, 0.0);
    ck_assert_double_gt(st.compute_s, 0.0);
}
END_TEST

START_TEST(test_markers_time_the_step)
{
    double plan[64];
    omnibatch_stats st;

    run_heterogeneous(TIME_BY_MARKERS, 1, 30, plan, &st);
    assert_slow_rank_gets_less(plan, &st);
    /* No gradient allreduce in this run. */
    ck_assert_double_eq(st.blocked_total_s, 0.0);
    ck_assert_double_gt(st.compute_s, 0.0);
}
END_TEST

START_TEST(test_no_measurement_during_warmup)
{
    const int P = mpi_size();
    double plan[64];
    omnibatch_stats st;

    run_heterogeneous(TIME_BY_ALLREDUCE, 1000, 8, plan, &st);
    ck_assert_int_eq(st.decisions, 0);
    ck_assert_int_eq(st.changes, 0);
    ck_assert_double_eq(st.compute_s, -1.0);
    /* Still the equal first plan. */
    for (int i = 0; i < P; i++) {
        ck_assert_double_eq(plan[i], 24.0);
    }
}
END_TEST

/* A run at \p before holding \p plan, its state restored into a fresh
 * context at \p after on the same ranks: \p plan is then that one's. */
static void restart_with(const omnibatch_options *before, const omnibatch_options *after, long B, long *plan)
{
    const int P = mpi_size();
    omnibatch_t ctx = NULL;
    size_t size = 0;
    void *buf;

    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 100 * B, before, &ctx));
    OB_CK_OK(omnibatch_set_plan(ctx, plan, P));
    OB_CK_OK(omnibatch_state_size(ctx, &size));
    buf = malloc(size);
    ck_assert_ptr_nonnull(buf);
    OB_CK_OK(omnibatch_get_state(ctx, buf, size));
    OB_CK_OK(omnibatch_destroy(&ctx));
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 100 * B, after, &ctx));
    OB_CK_OK(omnibatch_set_state(ctx, buf, size));
    OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
    free(buf);
    OB_CK_OK(omnibatch_destroy(&ctx));
}

/* A state saved at granularity 1 with a plan of odd batches, restored on
 * the same ranks at granularity 8 with a fixed plan: the saved plan does not
 * fit (only one rank may carry a rest), so the models decide, at the new
 * granularity.  The plan was taken as it was, 13/51, for the whole run. */
START_TEST(test_a_restart_at_another_granularity_keeps_it)
{
    const int P = mpi_size();
    const long B = 64L * P, g = 8;
    omnibatch_options before, after;
    long plan[64];
    int odd = 0;

    ck_assert_int_le(P, 64);
    OB_CK_OK(omnibatch_options_init(&before));
    before.granularity = 1;
    after = before;
    after.granularity = g;
    after.adaptive = 0;
    for (int i = 0; i < P; i++) {
        plan[i] = 64 + (0 == i ? -51 : 0) + (P - 1 == i ? 51 : 0);
    }
    if (1 == P) {
        plan[0] = B;
    }
    restart_with(&before, &after, B, plan);
    for (int i = 0; i < P; i++) {
        odd += 0 != plan[i] % g;
    }
    ck_assert_msg(odd <= 1, "%d ranks off the granularity %ld after the restart (rank 0 holds %ld)", odd, g,
                  plan[0]);
}
END_TEST

/* A state saved with rank 0 parked (min_batch 0), restored on the same
 * ranks with min_batch 1: the saved plan is outside this run's bounds, so
 * the models decide, within them (ob_state_saved_plan()). */
START_TEST(test_a_restart_with_other_bounds_keeps_them)
{
    const int P = mpi_size();
    omnibatch_options before, after;
    long plan[64];

    ck_assert_int_le(P, 64);
    if (P < 2) {
        return;
    }
    OB_CK_OK(omnibatch_options_init(&before));
    before.min_batch = 0;
    after = before;
    after.min_batch = 1;
    after.adaptive = 0;
    for (int i = 0; i < P; i++) {
        plan[i] = 0 == i ? 0 : (1 == i ? 128 : 64);
    }
    restart_with(&before, &after, 64L * P, plan);
    for (int i = 0; i < P; i++) {
        ck_assert_msg(plan[i] >= 1, "rank %d holds batch %ld after a restart at min_batch 1", i, plan[i]);
    }
}
END_TEST

/* omnibatch_restore() reads rank 0's path only, yet a rank without one
 * (NULL: a binding that could not convert its argument) fails every rank,
 * and the context is left as it was. */
START_TEST(test_a_restore_without_a_path_on_one_rank_fails_everywhere)
{
    const int P = mpi_size();
    const long B = 64L * P;
    char path[64];
    omnibatch_t ctx = NULL;
    long plan[64], got[64];
    int rank;

    ck_assert_int_le(P, 64);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "/tmp/ob-plan-restore-%ld.state", (long) getpid());
    MPI_Bcast(path, (int) sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 0; i < P; i++) {
        plan[i] = 1 == P ? B : 64 + (0 == i ? -32 : 0) + (P - 1 == i ? 32 : 0);
    }
    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 100 * B, NULL, &ctx));
    OB_CK_OK(omnibatch_set_plan(ctx, plan, P));
    OB_CK_OK(omnibatch_save(ctx, path));
    OB_CK_OK(omnibatch_destroy(&ctx));

    OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, B, 100 * B, NULL, &ctx));
    ck_assert_int_eq(omnibatch_restore(ctx, P - 1 == rank ? NULL : path), OMNIBATCH_ERR_ARG);
    OB_CK_OK(omnibatch_get_plan(ctx, got, P));
    for (int i = 0; i < P; i++) {
        ck_assert_int_eq(got[i], 64);
    }
    OB_CK_OK(omnibatch_restore(ctx, path));
    OB_CK_OK(omnibatch_get_plan(ctx, got, P));
    for (int i = 0; i < P; i++) {
        ck_assert_int_eq(got[i], plan[i]);
    }
    OB_CK_OK(omnibatch_destroy(&ctx));
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        ck_assert_int_eq(remove(path), 0);
    }
}
END_TEST

/* Priors from hwloc: the ranks of this test share one unbound machine, so
 * they weigh the same (no GPU here: cores), and the first plan is equal. */
START_TEST(test_priors_weigh_alike_ranks_alike)
{
    const int P = mpi_size();
    const omnibatch_prior priors[2] = {OMNIBATCH_PRIOR_CORES, OMNIBATCH_PRIOR_GPUS};
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    long plan[64];

    ck_assert_int_le(P, 64);
    for (int k = 0; k < 2; k++) {
        OB_CK_OK(omnibatch_options_init(&opt));
        opt.prior = priors[k];
        OB_CK_OK(omnibatch_create(MPI_COMM_WORLD, 10L * P, 1000, &opt, &ctx));
        OB_CK_OK(omnibatch_get_plan(ctx, plan, P));
        for (int i = 0; i < P; i++) {
            ck_assert_int_eq(plan[i], 10);
        }
        OB_CK_OK(omnibatch_destroy(&ctx));
    }
}
END_TEST

static Suite *make_mpi_api_plan_suite(void)
{
    Suite *s = suite_create("mpi_api_plan");
    TCase *tc = tcase_create("plan");

    tcase_add_test(tc, test_imposed_plans_cover_every_epoch);
    tcase_add_test(tc, test_slow_rank_gets_a_smaller_batch);
    tcase_add_test(tc, test_markers_time_the_step);
    tcase_add_test(tc, test_no_measurement_during_warmup);
    tcase_add_test(tc, test_priors_weigh_alike_ranks_alike);
    tcase_add_test(tc, test_a_restart_at_another_granularity_keeps_it);
    tcase_add_test(tc, test_a_restart_with_other_bounds_keeps_them);
    tcase_add_test(tc, test_a_restore_without_a_path_on_one_rank_fails_everywhere);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(make_mpi_api_plan_suite());
    MPI_Finalize();
    return rc;
}
