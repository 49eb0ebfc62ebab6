/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A program whose MPI calls bypass the layer: it calls PMPI_Init and
 * PMPI_Allreduce itself, as a binding that goes straight to the MPI
 * library's internals would (preload/bypass.sh).  Prints "results right"
 * when its gradient-sized sum is right.
 */
#include "config.h"

#include <mpi.h>
#include <stdio.h>

#define BYPASS_COUNT 4096

int main(int argc, char **argv)
{
    static float grad[BYPASS_COUNT];
    int rank = 0, size = 0, right = 1;

    PMPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int step = 0; step < 8; step++) {
        for (int i = 0; i < BYPASS_COUNT; i++) {
            grad[i] = 1.0f;
        }
        PMPI_Allreduce(MPI_IN_PLACE, grad, BYPASS_COUNT, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < BYPASS_COUNT; i++) {
            right = right && grad[i] == (float) size;
        }
    }
    if (0 == rank) {
        printf("mpi_bypass: %s\n", right ? "results right" : "RESULTS WRONG");
    }
    PMPI_Finalize();
    return right ? 0 : 1;
}
