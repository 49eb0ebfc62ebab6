/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * For the preload test programs that take their batches from the API
 * through the preloaded library (omnibatch_dl.h): a context on
 * MPI_COMM_WORLD that does not adapt, holding a plan in which rank i's share
 * of the global batch is proportional to i + 1.  Any failure aborts the
 * run with a line naming the program.
 */
#ifndef OB_MPI_PRELOAD_API_H
#define OB_MPI_PRELOAD_API_H

#include <mpi.h>
#include <stdio.h>

#include "omnibatch_dl.h"

static void ob_test_unequal_context(const char *prog, omnibatch_dl *ob, long global_batch,
                                    long dataset_size, omnibatch_t *ctx)
{
    omnibatch_options opt;
    long plan[16], given = 0;
    int size;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 16 || !omnibatch_dl_load(ob)) {
        fprintf(stderr, "%s: libomnibatch is not loaded (run it with LD_PRELOAD) or more than "
                "16 ranks\n", prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ob->options_init(&opt);
    opt.adaptive = 0;
    if (0 != ob->create(MPI_COMM_WORLD, global_batch, dataset_size, &opt, ctx)) {
        fprintf(stderr, "%s: %s\n", prog, ob->last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < size; i++) {
        plan[i] = global_batch * (i + 1) / (size * (size + 1) / 2);
        given += plan[i];
    }
    plan[size - 1] += global_batch - given;
    if (0 != ob->set_plan(*ctx, plan, size)) {
        fprintf(stderr, "%s: %s\n", prog, ob->last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

#endif
