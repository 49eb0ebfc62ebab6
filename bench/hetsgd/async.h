/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * hetsgd --mode async: the same model, data and emulated speeds as the
 * synchronous runs, trained by the library's parameter server
 * (omnibatch_ps_*, omnibatch.h).  Rank 0 serves; every other rank is a worker
 * that pulls the model and a slice, computes the slice's mean gradient (its
 * emulated speed at the run's progress stretches the step as in the
 * synchronous mode) and pushes it.  The policies: static = equal batches,
 * omnibatch = the server's batch scaling (equal push rates), omnilearn =
 * OmniLearn's rule on each worker's mean compute time once per epoch of
 * data, within its bounds [16, 96], set on the server with no barrier.
 *
 * No evaluation interrupts the run: the server keeps a copy of the model
 * every --eval-every global batches of samples (every epoch without it), with
 * the training time and the samples pushed, and every rank evaluates the
 * copies on its share of the test set once training is over.  So the
 * accuracy at a time is the model's at that time of the run, and the clock
 * holds only training.
 */
#ifndef HETSGD_ASYNC_H
#define HETSGD_ASYNC_H

#include <stdint.h>

#include "idx.h"
#include "mlp.h"
#include "options.h"
#include "schedule.h"

/** OmniLearn's bounds on a worker's batch, from its asynchronous experiments. */
#define HETSGD_OMNILEARN_LO 16
#define HETSGD_OMNILEARN_HI 96

/** What the asynchronous run takes from hetsgd's setup. */
typedef struct hetsgd_async_env {
    const hetsgd_options *opt;
    int rank;
    int P;                           /* ranks: the server and P - 1 workers */
    long N;                          /* training samples per epoch */
    long B;                          /* the global batch: the workers' batches sum to it */
    const hetsgd_dataset *ds;
    hetsgd_mlp *model;               /* its parameters are the server's model / a worker's copy */
    long nparams;
    float *grad;                     /* nparams (+ 1) */
    float *x;                        /* room for B samples */
    uint8_t *y;
    long *perm;                      /* N */
    const hetsgd_schedule *schedule; /* over the P ranks: rank 0's entry is the server's, unused */
    double slowdown;
    /* Test accuracy and loss of the model in \p model on every rank's share (collective). */
    void (*evaluate)(void *ctx, double *acc, double *loss);
    void *ctx;
} hetsgd_async_env;

/**
 * \brief Train, evaluate the copies, report (rank 0: the lines, --summary, --curve).
 *        Collective over MPI_COMM_WORLD.
 * \return OMNIBATCH_SUCCESS, or a code with the line in ob_last_error() (agreed by every rank).
 */
int hetsgd_async_run(const hetsgd_async_env *env);

#endif /* HETSGD_ASYNC_H */
