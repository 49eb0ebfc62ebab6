/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The controller: the plan of one run and how it moves.  Each rank feeds its
 * own estimator (ob_estimator.h); every OMNIBATCH_PERIOD steps the ranks
 * exchange one ob_rank_record each, and every rank calls
 * ob_controller_update() with the same P records, so every rank holds the
 * same plan without a root.  MPI-free: the API does the exchange, the
 * simulator and the tests call it directly.
 */
#ifndef OB_CONTROLLER_H
#define OB_CONTROLLER_H

#include <stdint.h>

#include "ob_planner.h"

/** What each rank contributes to a decision: fixed size, plain data (MPI_BYTE). */
typedef struct ob_rank_record {
    double alpha;                /* the rank's model */
    double beta;
    int64_t samples;             /* samples the model rests on; 0 = no model yet */
    int64_t lo;                  /* the rank's bounds */
    int64_t hi;
    double compute_mean;         /* mean measured compute seconds since the last exchange (report) */
    uint64_t plan_hash;          /* hash of the plan this rank holds (OMNIBATCH_VERIFY) */
} ob_rank_record;

typedef struct ob_controller {
    int nranks;
    long global_batch;
    ob_planner_params params;
    long *plan;                  /* nranks entries, sum == global_batch */
    ob_rank_model *bounds;       /* nranks entries: lo and hi (alpha, beta unused) */
    long decisions;              /* updates that had every model */
    long changes;                /* of which changed the plan */
    ob_decision last;            /* the last decision */
} ob_controller;

/**
 * \brief Start a run: P ranks, global batch B, and the first plan.
 * \param[in] lo, hi   P bounds each (NULL: 1 and B).
 * \param[in] weights  P prior weights for the first plan (NULL: equal split).
 */
int ob_controller_init(ob_controller *ctl, int P, long B, const ob_planner_params *params,
                       const long *lo, const long *hi, const double *weights);

/**
 * \brief One decision from the P gathered records (the same on every rank).
 *        Records without a model (samples == 0) or with invalid numbers leave the plan unchanged.
 * \param[out] d what was decided (may be NULL).
 */
int ob_controller_update(ob_controller *ctl, const ob_rank_record *records, ob_decision *d);

/** \brief A stable 64-bit hash of a plan, equal on every rank holding the same plan. */
uint64_t ob_controller_plan_hash(const ob_controller *ctl);

/** \brief Free what ob_controller_init() allocated. */
void ob_controller_free(ob_controller *ctl);

#endif /* OB_CONTROLLER_H */
