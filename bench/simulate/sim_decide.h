/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One decision of the controller in the simulator, by either design (the
 * allgather of every record, or the distributed decision over emulated
 * collectives), and what it cost: one rank's compute, the collectives,
 * the bytes, the emulated latency.
 */
#ifndef OB_SIM_DECIDE_H
#define OB_SIM_DECIDE_H

#include "ob_controller.h"
#include "ob_planner_dist.h"
#include "sim_dist.h"
#include "sim_options.h"

/* The decision of one policy, and what it cost. */
typedef struct ob_sim_decider {
    ob_sim_planner planner;
    ob_dist_state st;            /* distributed: the controller's state, the same on every rank */
    ob_sim_dist sd;
    long *plan;                  /* distributed: every rank's batch (each rank holds its own) */
    long *offset;
    long plan_before0;           /* rank 0's batch before the decision, for its replays */
    long coll_max;
} ob_sim_decider;

typedef struct ob_sim_cost {
    double compute;              /* seconds of one rank's compute */
    long collectives;
    long bytes;                  /* per rank */
    double latency;              /* emulated seconds of the whole decision */
} ob_sim_cost;

/**
 * \brief Ready \p dz for \p planner beside the controller \p ctl (its first plan copied).
 * \return OMNIBATCH_SUCCESS, or a code with ob_last_error() (free with ob_sim_decider_free()).
 */
int ob_sim_decider_init(ob_sim_decider *dz, ob_sim_planner planner, const ob_controller *ctl,
                        const ob_planner_params *params, int pool);

/** \brief Free what ob_sim_decider_init() took (safe on a zeroed or half-made one). */
void ob_sim_decider_free(ob_sim_decider *dz);

/**
 * \brief One decision from every rank's record \p rec: \p ctl's plan follows it, \p d says
 *        whether it changed, \p cost what it cost.
 * \return OMNIBATCH_SUCCESS, or a code with ob_last_error().
 */
int ob_sim_decide(const ob_sim_opts *o, ob_sim_decider *dz, ob_controller *ctl, const ob_rank_record *rec,
                  ob_decision *d, ob_sim_cost *cost);

#endif /* OB_SIM_DECIDE_H */
