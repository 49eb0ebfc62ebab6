/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * An unmodified data-parallel training loop, built with plain mpicc and
 * nothing of omnibatch: each step "computes" (sleeps), then reduces its
 * gradients in three buckets of different sizes and a one-number loss.
 * One rank sleeps ten times longer: the straggler the report must name.
 *
 *   mpi_straggler STEPS SLOW_RANK [blocking|nonblocking [pcontrol]]
 *
 * nonblocking: each bucket's MPI_Iallreduce starts after its share of the
 * "backward pass" and one MPI_Waitall ends the step, as bucketed codes do.
 * pcontrol: MPI_Pcontrol(0) before step STEPS/3, MPI_Pcontrol(1) before
 * step 2*STEPS/3, as a code that profiles only part of its run.
 * The program checks every reduced value, so it fails if the layer
 * disturbed the data.
 */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* MPICH declares the status arrays of MPI_Waitall & co. as arrays, and gcc
 * then warns (-Wstringop-overflow) that MPI_STATUSES_IGNORE, a constant
 * address, holds no status: read through a volatile, the constant is out of
 * the compiler's sight. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

#define BUCKETS 3

static void sleep_ms(double ms)
{
    struct timespec ts;

    ts.tv_sec = (time_t) (ms / 1000.0);
    ts.tv_nsec = (long) ((ms - 1000.0 * (double) ts.tv_sec) * 1e6);
    while (0 != nanosleep(&ts, &ts)) {
    }
}

int main(int argc, char **argv)
{
    static const int sizes[BUCKETS] = { 20000, 5000, 12000 };
    float *grad[BUCKETS];
    MPI_Request req[BUCKETS];
    int rank, size, steps, slow, nonblocking, pcontrol, bad = 0, anybad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (0 == rank) {
            fprintf(stderr, "usage: %s STEPS SLOW_RANK [blocking|nonblocking]\n", argv[0]);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    steps = atoi(argv[1]);
    slow = atoi(argv[2]);
    nonblocking = argc > 3 && 0 == strcmp(argv[3], "nonblocking");
    pcontrol = argc > 4 && 0 == strcmp(argv[4], "pcontrol");
    for (int b = 0; b < BUCKETS; b++) {
        grad[b] = malloc((size_t) sizes[b] * sizeof *grad[b]);
        if (NULL == grad[b]) {
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }

    for (int k = 0; k < steps; k++) {
        double loss = (double) rank, total;

        if (pcontrol && k == steps / 3) {
            MPI_Pcontrol(0);
        }
        if (pcontrol && k == 2 * steps / 3) {
            MPI_Pcontrol(1);
        }
        /* Forward pass. */
        sleep_ms(rank == slow ? 16.0 : 1.6);
        for (int b = 0; b < BUCKETS; b++) {
            /* Backward pass, one bucket's worth, then its reduction. */
            sleep_ms(rank == slow ? 4.0 : 0.4);
            for (int i = 0; i < sizes[b]; i++) {
                grad[b][i] = (float) (rank + k + b);
            }
            if (nonblocking) {
                MPI_Iallreduce(MPI_IN_PLACE, grad[b], sizes[b], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                               &req[b]);
            } else {
                MPI_Allreduce(MPI_IN_PLACE, grad[b], sizes[b], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            }
        }
        if (nonblocking) {
            MPI_Waitall(BUCKETS, req, statuses_ignore);
        }
        for (int b = 0; b < BUCKETS; b++) {
            float want = (float) (size * (k + b) + size * (size - 1) / 2);

            for (int i = 0; i < sizes[b]; i++) {
                bad += grad[b][i] != want;
            }
        }
        MPI_Allreduce(&loss, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        bad += total != (double) (size * (size - 1) / 2);
    }

    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("mpi_straggler: %d steps on %d ranks, rank %d slow, %s: %s\n", steps, size, slow,
               nonblocking ? "nonblocking" : "blocking", 0 == anybad ? "results right" : "RESULTS WRONG");
    }
    for (int b = 0; b < BUCKETS; b++) {
        free(grad[b]);
    }
    MPI_Finalize();
    return 0 == anybad ? 0 : 1;
}
