/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The library's own exchange is not compute.  The program takes its batch
 * from the API through the run-time lookup (omnibatch_dl.h, the library
 * preloaded; OMNIBATCH_PERIOD=1: the API's record allgather runs in every
 * omnibatch_next_step) and reduces with plain MPI_Allreduce, which the
 * layer times.  Every rank computes 2 ms a step; rank LATE then spends
 * LATE_MS more after its reduction before its next step, as a rank whose
 * slow link finishes its reduction late does.  The other ranks wait for it
 * in the allgather: that wait is not their compute, and the report must
 * name rank LATE, not them, as the one that takes longer.
 *
 *   mpi_late_exchange STEPS LATE LATE_MS
 */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "omnibatch_dl.h"

#define D 2048                   /* gradient length: 8 KiB of float */
#define B 64                     /* global batch */
#define COMPUTE_MS 2.0

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
    omnibatch_dl ob;
    omnibatch_t ctx;
    omnibatch_step st;
    float *grad = malloc(D * sizeof *grad);
    int rank, size, steps, late, bad = 0, anybad = 0;
    double late_ms;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4 || NULL == grad) {
        fprintf(stderr, "usage: %s STEPS LATE LATE_MS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    steps = atoi(argv[1]);
    late = atoi(argv[2]);
    late_ms = atof(argv[3]);
    if (!omnibatch_dl_load(&ob)) {
        fprintf(stderr, "mpi_late_exchange: libomnibatch is not loaded (run it with LD_PRELOAD)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (0 != ob.create(MPI_COMM_WORLD, B, (long) B * steps, NULL, &ctx)) {
        fprintf(stderr, "mpi_late_exchange: %s\n", ob.last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int k = 0; k < steps; k++) {
        if (0 != ob.next_step(ctx, &st)) {
            fprintf(stderr, "mpi_late_exchange: %s\n", ob.last_error());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        sleep_ms(COMPUTE_MS);
        for (int j = 0; j < D; j++) {
            grad[j] = (float) (rank + k);
        }
        MPI_Allreduce(MPI_IN_PLACE, grad, D, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        bad += grad[0] != (float) (size * k + size * (size - 1) / 2);
        if (rank == late) {
            sleep_ms(late_ms);
        }
    }
    ob.destroy(&ctx);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("mpi_late_exchange: %d steps on %d ranks, rank %d late by %g ms: %s\n", steps, size, late,
               late_ms, 0 == anybad ? "results right" : "RESULTS WRONG");
    }
    free(grad);
    MPI_Finalize();
    return 0 == anybad ? 0 : 1;
}
