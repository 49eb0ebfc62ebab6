/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The running-step mailbox, the one piece of state the API shares with the
 * PMPI layer: the batch of the step that is running on this rank.  The API
 * publishes it at each omnibatch_next_step(); the preload layer reads it to
 * weight recognised gradient allreduces (OMNIBATCH_WEIGHT).  What the API
 * measured of a finished step goes the other way, through the hooks of
 * ob_hook.h.  MPI-free; safe to read from any thread.
 */
#ifndef OB_ACTIVE_H
#define OB_ACTIVE_H

#include <stdint.h>

typedef struct ob_active_batch {
    long local;                  /* this rank's samples in the running step */
    long total;                  /* the step's global size (B, or less on an epoch's last step) */
    int nranks;                  /* ranks of the context's communicator */
    int convention;              /* the context's ob_convention (OB_CONVENTION_MEAN or _DIVIDE_BY_P) */
    long step;                   /* the context's global step counter */
    uint64_t comm;               /* the context's private communicator (its handle value): the
                                  * layer weights only calls on a congruent one */
    unsigned long generation;    /* set by ob_active_get(): changes when a context replaces
                                  * another (a handle value may then be reused) */
} ob_active_batch;

/** \brief Publish the running step (the API calls this). */
void ob_active_publish(const ob_active_batch *batch);

/** \brief Forget the running step (the API calls this from omnibatch_destroy()). */
void ob_active_clear(void);

/**
 * \brief The running step, if an API context has one.
 * \return 1 and *batch filled, or 0 when no context has published a step.
 */
int ob_active_get(ob_active_batch *batch);

#endif /* OB_ACTIVE_H */
