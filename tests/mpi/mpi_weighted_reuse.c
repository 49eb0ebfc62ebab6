/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A weighting verdict must die with its communicator.  The program takes
 * unequal batches from the API (omnibatch_dl.h, the library preloaded)
 * and reduces its gradients on a duplicate of MPI_COMM_WORLD until the
 * layer weights them; then it frees the duplicate and splits
 * MPI_COMM_WORLD into {rank 0} and the others.  MPI may hand the split
 * the freed handle (Open MPI reuses the memory, MPICH the handle): the
 * split is not the context's communicator, so its allreduces of the
 * gradient's shape must come back as MPI sums them (checked against
 * PMPI_Allreduce, which the layer does not see), on the rank alone too.
 *
 *   mpi_weighted_reuse STEPS
 *
 * Prints "split reuses the freed handle: yes|no" (rank 0): without reuse
 * the run proves nothing.
 */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_preload_api.h"

#define D 512                    /* gradient length: 2 KiB of float, above OMNIBATCH_MIN_BYTES */
#define B 60                     /* global batch */

static int rank, size;

/* One step's "gradient": differs between ranks, so that weighting shows. */
static void fill(float *g)
{
    for (int j = 0; j < D; j++) {
        g[j] = (float) (rank + 1) + 0.25f * (float) (j % 7);
    }
}

int main(int argc, char **argv)
{
    omnibatch_dl ob;
    omnibatch_t ctx;
    omnibatch_step st;
    int steps, weighted = 0, changed = 0, reused, all_reused = 0, bad = 0, anybad = 0;
    float *g = malloc(D * sizeof *g), *r = malloc(D * sizeof *r), *want = malloc(D * sizeof *want);
    MPI_Comm grads, split;
    MPI_Comm freed;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size < 2 || size > 16 || NULL == g || NULL == r || NULL == want) {
        fprintf(stderr, "usage: %s STEPS (2 to 16 ranks)\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    steps = atoi(argv[1]);
    ob_test_unequal_context("mpi_weighted_reuse", &ob, B, (long) B * 2 * steps, &ctx);

    /* The gradients' communicator: weighted once the pattern is known. */
    MPI_Comm_dup(MPI_COMM_WORLD, &grads);
    for (int k = 0; k < steps; k++) {
        ob.next_step(ctx, &st);
        fill(g);
        PMPI_Allreduce(g, want, D, MPI_FLOAT, MPI_SUM, grads);
        MPI_Allreduce(g, r, D, MPI_FLOAT, MPI_SUM, grads);
        weighted = 0 != memcmp(r, want, D * sizeof *r);
    }
    freed = grads;
    MPI_Comm_free(&grads);
    MPI_Comm_split(MPI_COMM_WORLD, 0 == rank ? 0 : 1, rank, &split);
    reused = split == freed;
    MPI_Allreduce(&reused, &all_reused, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    /* Not the context's communicator: as MPI sums it, bit for bit. */
    for (int k = 0; k < steps; k++) {
        ob.next_step(ctx, &st);
        fill(g);
        PMPI_Allreduce(g, want, D, MPI_FLOAT, MPI_SUM, split);
        MPI_Allreduce(g, r, D, MPI_FLOAT, MPI_SUM, split);
        changed += 0 != memcmp(r, want, D * sizeof *r);
    }
    if (changed > 0) {
        fprintf(stderr, "mpi_weighted_reuse: rank %d: %d of %d allreduces on the split changed\n",
                rank, changed, steps);
    }
    /* The run means something only if the duplicate's gradients were weighted. */
    bad = changed > 0 || !weighted;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("mpi_weighted_reuse: split reuses the freed handle: %s\n", all_reused ? "yes" : "no");
        printf("mpi_weighted_reuse: %d steps on %d ranks: duplicate %s, split %s: %s\n", steps, size,
               weighted ? "weighted" : "NOT WEIGHTED", changed ? "CHANGED" : "as MPI sums it",
               0 == anybad ? "results right" : "RESULTS WRONG");
    }
    MPI_Comm_free(&split);
    ob.destroy(&ctx);
    free(g);
    free(r);
    free(want);
    MPI_Finalize();
    return 0 == anybad ? 0 : 1;
}
