/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Checkpoint and restart (omnibatch_save(), omnibatch_restore()), one run
 * per call, driven by tests/mpi/mpi_api_restart.sh:
 *
 *   mpi_api_restart first  STATE SAMPLES STOP
 *   mpi_api_restart resume STATE SAMPLES LAST
 *
 * Each rank emulates its speed: a step of b samples sleeps b * 0.1 ms *
 * (1 + rank % 3), between the compute markers.  "first" runs steps 0 ..
 * STOP - 1, then saves the state to STATE and the plan it held to
 * STATE.plan; "resume" restores STATE and runs up to step LAST - 1.  Both
 * append every sample position they used to SAMPLES as "epoch sample"
 * lines (rank 0 gathers them), so that the script checks that each epoch
 * used every sample exactly once across the restart, at any number of
 * ranks.  "resume" also checks, on the models and the plan (not on the
 * clock), the warm start: the first step resumes at STOP; at the same
 * number of ranks the plan is the saved plan (the learnt plan the run had
 * reached); otherwise every rank that resumed a model is planned within
 * OB_WARM_TOLERANCE of the step time its resumed models predict for the
 * best split, and a rank on no saved entry still gets work.
 */
#include "config.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omnibatch.h"

#define OB_PER_RANK 64
#define OB_STEPS_PER_EPOCH 12
/* The warm start's predicted step, at most this much over the best split of the same models. */
#define OB_WARM_TOLERANCE 1.05

static int rank, size;

static void die(const char *what, int rc)
{
    fprintf(stderr, "mpi_api_restart: rank %d: %s: %s (%s)\n", rank, what, omnibatch_strerror(rc),
            omnibatch_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define OK(call)                      \
    do {                              \
        int ok_rc_ = (call);          \
        if (OMNIBATCH_SUCCESS != ok_rc_) { \
            die(#call, ok_rc_);       \
        }                             \
    } while (0)

static void sleep_s(double s)
{
    struct timespec ts;

    ts.tv_sec = (time_t) s;
    ts.tv_nsec = (long) ((s - (double) ts.tv_sec) * 1e9);
    while (0 != nanosleep(&ts, &ts)) {
    }
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "mpi_api_restart: rank %d: ", rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Steps first .. last - 1; their sample positions appended to \p samples by rank 0. */
static void run_steps(omnibatch_t ctx, long N, long first, long last, const char *samples)
{
    long *perm = malloc((size_t) N * sizeof *perm);
    long *mine = malloc((size_t) N * sizeof *mine);
    long *all = malloc((size_t) N * sizeof *all);
    int *counts = malloc((size_t) size * sizeof *counts);
    int *displs = malloc((size_t) size * sizeof *displs);
    FILE *f = 0 == rank ? fopen(samples, "a") : NULL;
    double grad = 1.0, sum;
    long epoch = -1;

    if (NULL == perm || NULL == mine || NULL == all || NULL == counts || NULL == displs || (0 == rank && NULL == f)) {
        die("memory or the samples file", OMNIBATCH_ERR_NOMEM);
    }
    for (long k = first; k < last; k++) {
        omnibatch_step s;
        int n;

        OK(omnibatch_next_step(ctx, &s));
        if (s.global_step != k) {
            fail("%s: step %.0f handed out, expected %.0f", "resume", (double) s.global_step, (double) k);
        }
        if (s.epoch != epoch) {
            epoch = s.epoch;
            OK(omnibatch_permutation(ctx, epoch, perm));
        }
        OK(omnibatch_compute_begin(ctx));
        sleep_s((double) s.count * 1e-4 * (double) (1 + rank % 3));
        OK(omnibatch_compute_end(ctx));
        OK(omnibatch_allreduce_gradient(ctx, &grad, &sum, 1, MPI_DOUBLE));
        for (long j = 0; j < s.count; j++) {
            mine[j] = perm[s.start + j];
        }
        n = (int) s.count;
        MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (0 == rank) {
            int total = 0;

            for (int i = 0; i < size; i++) {
                displs[i] = total;
                total += counts[i];
            }
        }
        MPI_Gatherv(mine, n, MPI_LONG, all, counts, displs, MPI_LONG, 0, MPI_COMM_WORLD);
        if (0 == rank) {
            for (long j = 0; j < s.total; j++) {
                fprintf(f, "%ld %ld\n", s.epoch, all[j]);
            }
        }
    }
    if (NULL != f) {
        fclose(f);
    }
    free(perm);
    free(mine);
    free(all);
    free(counts);
    free(displs);
}

/* The best split's step time of the models (a, b) of the ranks with one, for B' of the
 * samples: the water level T with sum (T - a_i) / b_i = B', by bisection. */
static double water_level(const double *a, const double *b, const int *has, long Bsub)
{
    double lo = 0.0, hi = 1e3;

    for (int it = 0; it < 200; it++) {
        double T = 0.5 * (lo + hi), n = 0.0;

        for (int i = 0; i < size; i++) {
            n += has[i] && T > a[i] ? (T - a[i]) / b[i] : 0.0;
        }
        if (n < (double) Bsub) {
            lo = T;
        } else {
            hi = T;
        }
    }
    return hi;
}

static void check_warm_start(omnibatch_t ctx, const char *state, long B)
{
    char path[4096];
    omnibatch_stats st;
    long *plan = malloc((size_t) size * sizeof *plan);
    double *a = malloc((size_t) size * sizeof *a), *b = malloc((size_t) size * sizeof *b);
    int *has = malloc((size_t) size * sizeof *has);
    double mine[2];
    double *ab = malloc(2 * (size_t) size * sizeof *ab);
    long saved[256];
    int nsaved = 0;
    FILE *f;

    OK(omnibatch_get_plan(ctx, plan, size));
    snprintf(path, sizeof path, "%s.plan", state);
    f = fopen(path, "r");
    while (NULL != f && nsaved < 256 && 1 == fscanf(f, "%ld", &saved[nsaved])) {
        nsaved++;
    }
    if (NULL != f) {
        fclose(f);
    }
    if (nsaved == size) {
        for (int i = 0; i < size; i++) {
            if (plan[i] != saved[i]) {
                fail("%s: the warm plan gives %.0f samples where the saved plan gave %.0f", "same ranks",
                     (double) plan[i], (double) saved[i]);
            }
        }
    }
    /* Every rank's resumed model (none: 0, 0). */
    OK(omnibatch_get_stats(ctx, &st));
    mine[0] = st.alpha;
    mine[1] = st.beta;
    MPI_Allgather(mine, 2, MPI_DOUBLE, ab, 2, MPI_DOUBLE, MPI_COMM_WORLD);
    {
        long known_batch = 0;
        double worst = 0.0, level;

        for (int i = 0; i < size; i++) {
            a[i] = ab[2 * i];
            b[i] = ab[2 * i + 1];
            has[i] = b[i] > 0.0;
            known_batch += has[i] ? plan[i] : 0;
            if (!has[i] && plan[i] < B / (4 * size)) {
                fail("%s: a rank on no saved entry was planned %.0f samples of %.0f", "new rank",
                     (double) plan[i], (double) B);
            }
            if (has[i]) {
                double t = a[i] + b[i] * (double) plan[i];

                worst = t > worst ? t : worst;
            }
        }
        if (0 == known_batch) {
            fail("%s: no rank resumed a model (%.0f, %.0f)", "warm start", 0.0, 0.0);
        }
        level = water_level(a, b, has, known_batch);
        /* The same ranks resume the plan they ran (checked above), however far the
         * controller had got; other ranks get the plan of the resumed models. */
        if (nsaved != size && worst > OB_WARM_TOLERANCE * level) {
            fail("%s: the warm plan's predicted step %g s is over 1.05 x the best split's %g s", "warm start",
                 worst, level);
        }
        if (0 == rank) {
            printf("mpi_api_restart: %d ranks resumed: predicted step %.4g s, best split of the models %.4g s "
                   "(%.3fx)\n", size, worst, level, worst / level);
        }
    }
    free(plan);
    free(a);
    free(b);
    free(has);
    free(ab);
}

int main(int argc, char **argv)
{
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    long B, N, at;
    int resume;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (5 != argc || (0 != strcmp(argv[1], "first") && 0 != strcmp(argv[1], "resume"))) {
        if (0 == rank) {
            fprintf(stderr, "usage: %s first|resume STATE SAMPLES STEP\n", argv[0]);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    resume = 0 == strcmp(argv[1], "resume");
    at = atol(argv[4]);
    /* B and N are the same at every number of ranks: the data position depends on them. */
    B = 4L * OB_PER_RANK;
    N = OB_STEPS_PER_EPOCH * B - 5;
    OK(omnibatch_options_init(&opt));
    opt.warmup = 1;
    opt.period = 2;
    opt.seed = resume ? 1 : 7;  /* the state's seed must win over this one */
    OK(omnibatch_create(MPI_COMM_WORLD, B, N, &opt, &ctx));
    if (resume) {
        long first;
        omnibatch_stats st;

        OK(omnibatch_restore(ctx, argv[2]));
        OK(omnibatch_get_stats(ctx, &st));
        first = st.steps;
        check_warm_start(ctx, argv[2], B);
        run_steps(ctx, N, first, at, argv[3]);
    } else {
        long *plan = malloc((size_t) size * sizeof *plan);
        char path[4096];

        run_steps(ctx, N, 0, at, argv[3]);
        OK(omnibatch_save(ctx, argv[2]));
        OK(omnibatch_get_plan(ctx, plan, size));
        if (0 == rank) {
            FILE *f;

            snprintf(path, sizeof path, "%s.plan", argv[2]);
            f = fopen(path, "w");
            for (int i = 0; NULL != f && i < size; i++) {
                fprintf(f, "%ld\n", plan[i]);
            }
            if (NULL == f || 0 != fclose(f)) {
                die("writing the plan", OMNIBATCH_ERR_ARG);
            }
        }
        free(plan);
    }
    OK(omnibatch_destroy(&ctx));
    MPI_Finalize();
    return 0;
}
