/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The one piece of state the API shares with the PMPI layer: the batch of
 * the step that is running on this rank.  The API publishes it at each
 * omnibatch_next_step(); the preload layer reads it to weight recognised
 * gradient allreduces (OMNIBATCH_WEIGHT) and to report the mean batch.
 * MPI-free; safe to read from any thread.
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

/**
 * \brief Receives each step the API measured itself.  The API reduces
 *        through PMPI on its private communicator, so the PMPI layer's
 *        wrappers never see its gradient allreduces; the layer sets this hook
 *        so that a code using the API gets the same report and trace, with
 *        the API's exact step boundaries.
 * \param[in] batch         this rank's samples in the step.
 * \param[in] global_batch  the context's B.
 * \param[in] calls         gradient allreduces the step held.
 * \param[in] compute, blocked  seconds outside and inside them.
 * \param[in] span          wall seconds of the whole step, from one omnibatch_next_step() to
 *                          the next (what is neither compute nor blocked: the code's
 *                          optimiser, the library's own exchange).
 * \param[in] reduction     the step model's reduction at the last exchange (the least mean
 *                          blocked time over the ranks), < 0 before the first one.
 */
typedef void (*ob_active_step_fn)(long batch, long global_batch, long calls, double compute,
                                  double blocked, double span, double reduction);

/** \brief Set (the layer, at start) or clear (NULL, at finalize) the step hook. */
void ob_active_set_step_hook(ob_active_step_fn fn);

/** \brief Pass one measured API step to the hook, if one is set. */
void ob_active_note_step(long batch, long global_batch, long calls, double compute,
                         double blocked, double span, double reduction);

/**
 * \brief Receives the time this rank spent in the library's own exchanges (the
 *        API's record allgather and its checks), in ob_now_ns() nanoseconds:
 *        the layer must not count it as the step's compute.  A rank that
 *        arrives early at the exchange waits there for the last one (a rank
 *        whose slow link finished its reduction late): counted as compute,
 *        that wait made the early ranks look slow and the late one fast.
 */
typedef void (*ob_active_own_fn)(uint64_t t0_ns, uint64_t t1_ns);

/** \brief Set (the layer, at start) or clear (NULL, at finalize) the exchange hook. */
void ob_active_set_own_hook(ob_active_own_fn fn);

/** \brief Pass one of the library's own exchanges to the hook, if one is set. */
void ob_active_note_own(uint64_t t0_ns, uint64_t t1_ns);

#endif /* OB_ACTIVE_H */
