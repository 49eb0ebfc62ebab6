/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The training loop of lsq_train.c for a program that does not link
 * omnibatch: it looks the API up at run time (omnibatch_dl.h).  Run plainly
 * it splits each global batch equally by itself; run with the library
 * preloaded it takes omnibatch's plan.  Either way it reduces its gradient
 * itself: the mean gradient times the step's scale, one MPI_SUM allreduce
 * (no OMNIBATCH_WEIGHT needed):
 *
 *     mpirun -np 4 ./lsq_train_dl
 *     mpirun -np 4 -x LD_PRELOAD=/usr/local/lib/libomnibatch.so ./lsq_train_dl
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "omnibatch_dl.h"
#include "lsq_problem.h"

#define N 4096                   /* samples */
#define B 128                    /* global batch */

static omnibatch_dl ob;          /* the API, if the library is in the process */

static void check(int rc, const char *what)
{
    if (OMNIBATCH_SUCCESS != rc) {
        fprintf(stderr, "lsq_train_dl: %s: %s: %s\n", what, ob.strerror(rc), ob.last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Without the library: equal shares of step t, the identity as permutation,
 * and the weight that makes the sum of mean gradients the global mean. */
static void equal_step(long t, int rank, int size, omnibatch_step *s)
{
    const long spe = (N + B - 1) / B;
    long first;
    long share;
    long rest;

    s->global_step = t;
    s->epoch = t / spe;
    s->step = t % spe;
    first = s->step * B;
    s->total = N - first < B ? N - first : B;
    share = s->total / size;
    rest = s->total % size;
    s->count = share + (rank < rest);
    s->start = first + rank * share + (rank < rest ? rank : rest);
    s->scale = (double) s->count / (double) s->total;
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
    omnibatch_t ctx = NULL;
    omnibatch_step s;
    double loss0;
    int have;
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (NULL == perm || 0 != lsq_init(&data, N) || size > 64) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    loss0 = lsq_loss(&data, w);
    for (long j = 0; j < N; j++) {
        perm[j] = j;
    }

    have = omnibatch_dl_load(&ob);
    if (have) {
        check(ob.create(MPI_COMM_WORLD, B, N, NULL, &ctx), "create");
    }
    for (long t = 0; t < epochs * ((N + B - 1) / B); t++) {
        if (have) {
            check(ob.next_step(ctx, &s), "next_step");
            if (0 == s.step) {
                check(ob.permutation(ctx, s.epoch, perm), "permutation");
            }
        } else {
            equal_step(t, rank, size, &s);
        }
        /* The markers tell the library this rank's compute time: the step
         * does not go through omnibatch_allreduce_gradient(). */
        if (have) {
            check(ob.compute_begin(ctx), "compute_begin");
        }
        lsq_mean_gradient(&data, w, perm + s.start, s.count, g);
        if (have) {
            check(ob.compute_end(ctx), "compute_end");
        }
        /* The default convention, OMNIBATCH_GRAD_MEAN: the sum of the scaled
         * means is the global batch's mean gradient.  A rank without samples
         * has g = 0 and scale 0. */
        for (int k = 0; k < LSQ_D; k++) {
            g[k] *= s.scale;
        }
        MPI_Allreduce(MPI_IN_PLACE, g, LSQ_D, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < LSQ_D; k++) {
            w[k] -= lr * g[k];
        }
    }
    if (have) {
        check(ob.get_plan(ctx, plan, size), "get_plan");
        check(ob.destroy(&ctx), "destroy");
    } else {
        for (int i = 0; i < size; i++) {
            plan[i] = B / size + (i < B % size);
        }
    }

    if (0 == rank) {
        if (have) {
            printf("lsq_train_dl: omnibatch %u.%u.%u found", ob.version >> 16,
                   (ob.version >> 8) & 0xffu, ob.version & 0xffu);
        } else {
            printf("lsq_train_dl: omnibatch absent, equal batches");
        }
        printf(": loss %.6g -> %.6g, plan", loss0, lsq_loss(&data, w));
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
