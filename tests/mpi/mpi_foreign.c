/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A plain MPI program that the foreign preload scenario builds with the
 * other MPI family's compiler (tests/mpi/preload/foreign.sh): one gradient-
 * sized allreduce, then "foreign: sum right" when the sum is right.
 */
#include <mpi.h>
#include <stdio.h>

#define FOREIGN_COUNT 4096

int main(int argc, char **argv)
{
    static float grad[FOREIGN_COUNT];
    int rank = 0, size = 0, right = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < FOREIGN_COUNT; i++) {
        grad[i] = (float) (rank + 1);
    }
    MPI_Allreduce(MPI_IN_PLACE, grad, FOREIGN_COUNT, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < FOREIGN_COUNT; i++) {
        right = right && grad[i] == (float) (size * (size + 1) / 2);
    }
    if (0 == rank && right) {
        printf("foreign: sum right\n");
    }
    MPI_Finalize();
    return right ? 0 : 1;
}
