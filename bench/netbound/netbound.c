/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A network-bound run on one host: every rank computes a few microseconds
 * a step (a sum over its samples) and reduces a large gradient through
 * omnibatch_allreduce_gradient, so the step is almost all reduction.  The
 * ranks run at the same speed; the plan must stay (near) equal whatever the
 * noise of their microsecond compute times.
 *
 *   mpirun -np P bench/netbound/netbound [STEPS [FLOATS]]
 *
 * Rank 0 prints the plan every 50 steps and at the end the largest
 * distance of any rank's batch from the equal share over the second half
 * of the run, and the mean compute and step times.
 */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "omnibatch.h"

#define GLOBAL_BATCH 256
#define WORK_PER_SAMPLE 64       /* floats summed per sample: ~20 ns */
#define PRINT_EVERY 50

static void check(int rc, const char *what)
{
    if (OMNIBATCH_SUCCESS != rc) {
        fprintf(stderr, "netbound: %s: %s\n", what, omnibatch_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 200;
    long floats = argc > 2 ? atol(argv[2]) : 1L << 22;
    int rank, size;
    long plan[256];
    float *grad, *work;
    double worst = 0.0, compute = 0.0, t_all;
    omnibatch_t ob;
    omnibatch_step st;
    omnibatch_stats stats;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (steps < 2 || floats < 1 || floats > (1L << 28) || size > 256) {
        if (0 == rank) {
            fprintf(stderr, "netbound: STEPS=%ld FLOATS=%ld: expected STEPS >= 2, FLOATS in [1, 2^28], "
                    "at most 256 ranks\n", steps, floats);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    grad = calloc((size_t) floats, sizeof *grad);
    work = calloc((size_t) GLOBAL_BATCH * WORK_PER_SAMPLE, sizeof *work);
    if (NULL == grad || NULL == work) {
        fprintf(stderr, "netbound: no memory for %ld floats\n", floats);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check(omnibatch_create(MPI_COMM_WORLD, GLOBAL_BATCH, GLOBAL_BATCH * steps, NULL, &ob), "omnibatch_create");
    MPI_Barrier(MPI_COMM_WORLD);
    t_all = MPI_Wtime();
    for (long k = 0; k < steps; k++) {
        float s = 0.0f;

        check(omnibatch_next_step(ob, &st), "omnibatch_next_step");
        for (long i = 0; i < st.count * WORK_PER_SAMPLE; i++) {
            s += work[i];
        }
        /* The sum rides in the gradient, so the compiler keeps the work. */
        grad[1 % floats] = s;
        grad[0] = (float) st.count;
        check(omnibatch_allreduce_gradient(ob, MPI_IN_PLACE, grad, (int) floats, MPI_FLOAT),
              "omnibatch_allreduce_gradient");
        check(omnibatch_get_plan(ob, plan, size), "omnibatch_get_plan");
        if (k >= steps / 2) {
            for (int i = 0; i < size; i++) {
                double off = fabs((double) plan[i] * size / GLOBAL_BATCH - 1.0);

                worst = off > worst ? off : worst;
            }
        }
        if (0 == rank && (0 == (k + 1) % PRINT_EVERY || k + 1 == steps)) {
            printf("netbound: step %ld plan", k + 1);
            for (int i = 0; i < size; i++) {
                printf(" %ld", plan[i]);
            }
            printf("\n");
        }
    }
    t_all = MPI_Wtime() - t_all;
    check(omnibatch_get_stats(ob, &stats), "omnibatch_get_stats");
    compute = stats.compute_total_s;
    if (0 == rank) {
        printf("netbound: %d ranks, %ld steps, %ld floats reduced a step: mean step %.3f ms, rank 0 computes "
               "%.1f us a step; largest distance of a batch from the equal share over steps %ld..%ld: %.1f%%\n",
               size, steps, floats, 1e3 * t_all / (double) steps, 1e6 * compute / (double) steps, steps / 2,
               steps, 100.0 * worst);
    }
    omnibatch_destroy(&ob);
    free(grad);
    free(work);
    MPI_Finalize();
    return 0;
}
