/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A rank under a CPU quota whose step spends most of its CPU outside the
 * compute markers (tests/mpi/mpi_api_quota.sh puts rank 1 in a cgroup of
 * 0.2 core): per step each rank spins SAMPLE_MS of CPU per sample between
 * the markers and UPDATE_MS after its gradient allreduce (an optimiser's
 * update).  Rank 1 cannot run a step in less than (SAMPLE_MS b + UPDATE_MS) /
 * 0.2, 50 ms or more, while rank 0's whole batch computes in 10 ms: the best
 * plan gives rank 1 the least batch.  Its compute alone shows the quota
 * only when the throttling falls inside the markers.  Prints the mean step
 * of the second half of the run and the plan at the end ("plan: b0 b1").
 * With FILE AT LINE, rank 1 writes LINE into FILE (its group's quota) before
 * step AT: a quota resized mid-run; SAMPLE_MS and UPDATE_MS replace the
 * defaults.
 *
 * Usage: mpi_api_quota STEPS [FILE AT LINE [SAMPLE_MS UPDATE_MS]]
 *
 * mpi_api_quota chunks STEPS: the step worked in chunks on a fixed plan of
 * CHUNK_PLAN0 and CHUNK_PLAN1 samples, CHUNK_SAMPLE_MS of CPU each on both
 * ranks; prints the samples rank 1 took from rank 0 after the first
 * CHUNK_SETTLE steps ("taken: T of S", S the samples of those steps) and
 * the chunks of its own range it worked in them ("own chunks: N in K
 * steps").
 */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omnibatch.h"

#define B 100L
#define SAMPLE_MS 0.1
#define UPDATE_MS 10.0

static double thread_cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e3 * (double) ts.tv_sec + 1e-6 * (double) ts.tv_nsec;
}

/* Spend \p ms of this thread's CPU. */
static void spin_cpu(double ms)
{
    const double end = thread_cpu_ms() + ms;
    volatile double x = 0.0;

    while (thread_cpu_ms() < end) {
        for (int i = 0; i < 1000; i++) {
            x += 1e-9 * (double) i;
        }
    }
}

static void check(int rc, const char *what)
{
    if (OMNIBATCH_SUCCESS != rc) {
        fprintf(stderr, "mpi_api_quota: %s: %s\n", what, omnibatch_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

#define CHUNK_PLAN0 90L
#define CHUNK_PLAN1 10L
#define CHUNK_SAMPLE_MS 0.5
#define CHUNK_SETTLE 5

/* The chunked steps: the samples this rank took from the other after the first CHUNK_SETTLE,
 * and its chunks of its own range there into *own. */
static long chunk_steps(omnibatch_t ctx, int rank, long steps, long *own)
{
    const long plan[2] = { CHUNK_PLAN0, CHUNK_PLAN1 };
    float g[64] = { 0 };
    long taken = 0;

    *own = 0;

    check(omnibatch_set_plan(ctx, plan, 2), "omnibatch_set_plan");
    for (long k = 0; k < steps; k++) {
        omnibatch_step st;
        omnibatch_chunk ch;

        check(omnibatch_next_step(ctx, &st), "omnibatch_next_step");
        for (;;) {
            check(omnibatch_next_chunk(ctx, &ch), "omnibatch_next_chunk");
            if (0 == ch.count) {
                break;
            }
            spin_cpu(CHUNK_SAMPLE_MS * (double) ch.count);
            taken += k >= CHUNK_SETTLE && ch.owner != rank ? ch.count : 0;
            *own += k >= CHUNK_SETTLE && ch.owner == rank;
        }
        check(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, g, 64, MPI_FLOAT), "omnibatch_allreduce_gradient");
    }
    return taken;
}

static int chunk_main(long steps)
{
    omnibatch_options opt;
    omnibatch_t ctx = NULL;
    int rank;
    long taken, own;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check(omnibatch_options_init(&opt), "omnibatch_options_init");
    opt.chunks = 1;
    opt.adaptive = 0;
    check(omnibatch_create(MPI_COMM_WORLD, B, B * steps, &opt, &ctx), "omnibatch_create");
    taken = chunk_steps(ctx, rank, steps, &own);
    if (1 == rank) {
        printf("taken: %ld of %ld\n", taken, B * (steps - CHUNK_SETTLE));
        printf("own chunks: %ld in %ld steps\n", own, steps - CHUNK_SETTLE);
    }
    check(omnibatch_destroy(&ctx), "omnibatch_destroy");
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    omnibatch_t ctx = NULL;
    long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    const char *file = argc > 4 ? argv[2] : NULL;
    long at = argc > 4 ? strtol(argv[3], NULL, 10) : -1;
    const char *line = argc > 4 ? argv[4] : NULL;
    const double sample_ms = argc > 6 ? strtod(argv[5], NULL) : SAMPLE_MS;
    const double update_ms = argc > 6 ? strtod(argv[6], NULL) : UPDATE_MS;
    long plan[2] = { 0, 0 };
    float g[64] = { 0 };
    int rank, size;
    double t_half = 0.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2 && 0 == strcmp(argv[1], "chunks")) {
        steps = strtol(argv[2], NULL, 10);
    }
    if (2 != size || steps < 10) {
        if (0 == rank) {
            fprintf(stderr, "usage: mpirun -np 2 mpi_api_quota STEPS (>= 10) [FILE AT LINE [SAMPLE_MS UPDATE_MS]]\n"
                            "       mpirun -np 2 mpi_api_quota chunks STEPS (>= 10)\n");
        }
        MPI_Finalize();
        return 2;
    }
    if (argc > 2 && 0 == strcmp(argv[1], "chunks")) {
        return chunk_main(steps);
    }
    check(omnibatch_create(MPI_COMM_WORLD, B, B * steps, NULL, &ctx), "omnibatch_create");
    for (long k = 0; k < steps; k++) {
        omnibatch_step st;

        if (steps / 2 == k) {
            t_half = MPI_Wtime();
        }
        if (1 == rank && at == k) {
            FILE *f = fopen(file, "w");

            if (NULL == f || fprintf(f, "%s\n", line) < 0 || 0 != fclose(f)) {
                fprintf(stderr, "mpi_api_quota: cannot write '%s' into %s\n", line, file);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        check(omnibatch_next_step(ctx, &st), "omnibatch_next_step");
        check(omnibatch_compute_begin(ctx), "omnibatch_compute_begin");
        spin_cpu(sample_ms * (double) st.count);
        check(omnibatch_compute_end(ctx), "omnibatch_compute_end");
        check(omnibatch_allreduce_gradient(ctx, MPI_IN_PLACE, g, 64, MPI_FLOAT), "omnibatch_allreduce_gradient");
        spin_cpu(update_ms);
    }
    check(omnibatch_get_plan(ctx, plan, 2), "omnibatch_get_plan");
    if (0 == rank) {
        printf("mpi_api_quota: mean step over the second half %.1f ms\n",
               1e3 * (MPI_Wtime() - t_half) / (double) (steps - steps / 2));
        printf("plan: %ld %ld\n", plan[0], plan[1]);
    }
    check(omnibatch_destroy(&ctx), "omnibatch_destroy");
    MPI_Finalize();
    return 0;
}
