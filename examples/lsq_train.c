/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A data-parallel training loop with the omnibatch API, linked with
 * -lomnibatch.  Each step, omnibatch says how many samples this rank takes
 * and which; the weighted allreduce turns the ranks' mean gradients into the
 * gradient of the whole global batch, so learning rate and global batch stay
 * what they would be on equal ranks.
 *
 *     mpirun -np 4 ./lsq_train [epochs]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "omnibatch.h"
#include "lsq_problem.h"

#define N 4096                   /* samples */
#define B 128                    /* global batch */

/* Stop every rank with the library's explanation. */
static void check(int rc, const char *what)
{
    if (OMNIBATCH_SUCCESS != rc) {
        fprintf(stderr, "lsq_train: %s: %s: %s\n", what, omnibatch_strerror(rc),
                omnibatch_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    const long epochs = argc > 1 ? atol(argv[1]) : 5;
    const double lr = 0.2;
    double w[LSQ_D] = {0.0};
    double g[LSQ_D];
    long plan[64];
    long *perm = malloc(N * sizeof *perm);
    lsq_problem data;
    omnibatch_t ob;
    omnibatch_step s;
    double loss0;
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (NULL == perm || 0 != lsq_init(&data, N) || size > 64) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    loss0 = lsq_loss(&data, w);

    /* Options from OMNIBATCH_* (NULL); the plan starts equal and follows speed. */
    check(omnibatch_create(MPI_COMM_WORLD, B, N, NULL, &ob), "create");
    for (long t = 0; t < epochs * ((N + B - 1) / B); t++) {
        check(omnibatch_next_step(ob, &s), "next_step");
        if (0 == s.step) {
            check(omnibatch_permutation(ob, s.epoch, perm), "permutation");
        }
        /* This rank's samples: perm[s.start .. s.start + s.count - 1]. */
        lsq_mean_gradient(&data, w, perm + s.start, s.count, g);
        check(omnibatch_allreduce_gradient(ob, MPI_IN_PLACE, g, LSQ_D, MPI_DOUBLE), "allreduce");
        for (int k = 0; k < LSQ_D; k++) {
            w[k] -= lr * g[k];
        }
    }
    check(omnibatch_get_plan(ob, plan, size), "get_plan");
    check(omnibatch_destroy(&ob), "destroy");

    if (0 == rank) {
        printf("lsq_train: loss %.6g -> %.6g, plan", loss0, lsq_loss(&data, w));
        for (int i = 0; i < size; i++) {
            printf(" %ld", plan[i]);
        }
        printf("\n");
    }
    lsq_free(&data);
    free(perm);
    MPI_Finalize();
    return 0;
}
