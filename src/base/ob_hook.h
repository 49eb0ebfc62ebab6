/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What the API tells the PMPI layer of each step it measured, through two
 * hooks the layer sets after MPI_Init and clears in MPI_Finalize.  The API
 * reduces through PMPI on its private communicator, so the layer's
 * wrappers never see its gradient allreduces: a code using the API gets
 * the same report and trace from these notes, with the API's exact step
 * boundaries, and the report shows the controller's own plan and models
 * instead of fitting a second model (ob_report.h).  MPI-free.
 */
#ifndef OB_HOOK_H
#define OB_HOOK_H

#include <stdint.h>

/** One step the API measured on this rank. */
typedef struct ob_step_note {
    long batch;                  /* this rank's samples in the step */
    long global_batch;           /* the context's B */
    long calls;                  /* gradient allreduces the step held */
    double compute;              /* seconds outside them */
    double blocked;              /* seconds inside them */
    double span;                 /* wall seconds from one omnibatch_next_step() to the next (what is
                                  * neither: the code's optimiser, the library's own exchange) */
    double reduction;            /* the step model's reduction at the last exchange (the least mean
                                  * blocked time over the ranks), < 0 before the first one */
    long plan;                   /* this rank's batch in the plan the controller holds now */
    double alpha;                /* this rank's compute model at the last exchange, */
    double beta;                 /* alpha + beta * batch seconds ... */
    int model;                   /* ... valid when 1: the controller plans (adaptive) and the model
                                  * rests on measured samples */
    long taken;                  /* worked in chunks: samples this rank took from others' ranges, */
    long given;                  /* and of its own range others took; -1 when not in chunks */
} ob_step_note;

/** \brief Receives each step the API measured. */
typedef void (*ob_hook_step_fn)(const ob_step_note *note);

/** \brief Set (the layer, at start) or clear (NULL, at finalize) the step hook. */
void ob_hook_set_step(ob_hook_step_fn fn);

/** \brief Pass one measured API step to the hook, if one is set. */
void ob_hook_note_step(const ob_step_note *note);

/**
 * \brief Receives the time this rank spent in the library's own exchanges (the
 *        API's record allgather and its checks), in ob_now_ns() nanoseconds:
 *        the layer must not count it as the step's compute.  A rank that
 *        arrives early at the exchange waits there for the last one (a rank
 *        whose slow link finished its reduction late): counted as compute,
 *        that wait made the early ranks look slow and the late one fast.
 */
typedef void (*ob_hook_own_fn)(uint64_t t0_ns, uint64_t t1_ns);

/** \brief Set (the layer, at start) or clear (NULL, at finalize) the exchange hook. */
void ob_hook_set_own(ob_hook_own_fn fn);

/** \brief Pass one of the library's own exchanges to the hook, if one is set. */
void ob_hook_note_own(uint64_t t0_ns, uint64_t t1_ns);

#endif /* OB_HOOK_H */
