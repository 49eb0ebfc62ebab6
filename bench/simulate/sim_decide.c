/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One decision of the controller in the simulator (sim_decide.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "sim_clock.h"
#include "sim_decide.h"

/* One rank's share of a decision is timed as the least of this many runs. */
#define OB_SIM_REPLAYS 3

int ob_sim_decider_init(ob_sim_decider *dz, ob_sim_planner planner, const ob_controller *ctl,
                        const ob_planner_params *params, int pool)
{
    const int P = ctl->nranks;
    int rc;

    memset(dz, 0, sizeof *dz);
    dz->planner = planner;
    if (OB_SIM_DISTRIBUTED != planner) {
        return OMNIBATCH_SUCCESS;
    }
    dz->plan = malloc((size_t) P * sizeof *dz->plan);
    dz->offset = malloc((size_t) P * sizeof *dz->offset);
    rc = NULL == dz->plan || NULL == dz->offset ? ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: P=%d", P)
                                                : ob_dist_init(&dz->st, P, ctl->global_batch, params);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    dz->st.pooling = pool;
    memcpy(dz->plan, ctl->plan, (size_t) P * sizeof *dz->plan);
    return OMNIBATCH_SUCCESS;
}

void ob_sim_decider_free(ob_sim_decider *dz)
{
    ob_sim_dist_free(&dz->sd);
    free(dz->plan);
    free(dz->offset);
    dz->plan = NULL;
    dz->offset = NULL;
}

/* Today's design: one allgather of every record, then every rank solves all. */
static int ob_sim_decide_central(const ob_sim_opts *o, ob_controller *ctl, const ob_rank_record *rec,
                                 ob_decision *d, ob_sim_cost *cost)
{
    const double t0 = ob_sim_now();
    const int rc = ob_controller_update(ctl, rec, d);

    cost->compute = ob_sim_now() - t0;
    cost->collectives = 1;
    cost->bytes = (long) ((size_t) ctl->nranks * sizeof *rec);
    cost->latency = ob_sim_dist_cost(1, cost->bytes, ctl->nranks, o->latency, o->bandwidth) + cost->compute;
    return rc;
}

/* Rank 0 alone against the logged collectives, the least of a few runs
 * (the machine's own interruptions are not the decision's): its compute
 * into cost->compute, its batch and offset into *b0 and *o0, its state
 * into *again. */
static int ob_sim_replay_rank0(ob_sim_decider *dz, const ob_dist_state *before, const ob_rank_record *rec,
                               ob_dist_state *again, long *b0, long *o0, ob_sim_cost *cost)
{
    ob_decision d0;
    ob_dist_comm replay;
    int rc = OMNIBATCH_SUCCESS;

    cost->compute = HUGE_VAL;
    for (int k = 0; k < OB_SIM_REPLAYS; k++) {
        *again = *before;
        *b0 = dz->plan_before0;
        ob_sim_dist_reset(&dz->sd, 1);
        replay = ob_sim_dist_comm(&dz->sd);
        double t0 = ob_sim_now();
        rc = ob_dist_update(again, &replay, (ob_dist_block) { 1, 0 }, rec, b0, o0, &d0, NULL);
        t0 = ob_sim_now() - t0;
        cost->compute = t0 < cost->compute ? t0 : cost->compute;
        if (OMNIBATCH_SUCCESS != rc) {
            break;
        }
    }
    return rc;
}

/* The distributed decision: every rank in one block over the emulated
 * collectives, then rank 0 alone against their logged results, timed (its
 * share of the work is what one rank computes), and checked to reach the
 * same state and batch. */
static int ob_sim_decide_distributed(const ob_sim_opts *o, ob_sim_decider *dz, ob_controller *ctl,
                                     const ob_rank_record *rec, ob_decision *d, ob_sim_cost *cost)
{
    const int P = ctl->nranks;
    const ob_dist_state before = dz->st;
    ob_dist_state again = before;
    long b0 = dz->plan[0];
    long o0 = 0;
    ob_dist_comm comm;
    int rc;

    dz->plan_before0 = b0;
    ob_sim_dist_reset(&dz->sd, 0);
    comm = ob_sim_dist_comm(&dz->sd);
    rc = ob_dist_update(&dz->st, &comm, (ob_dist_block) { P, 0 }, rec, dz->plan, dz->offset, d, NULL);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    rc = ob_sim_replay_rank0(dz, &before, rec, &again, &b0, &o0, cost);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (b0 != dz->plan[0] || 0 != o0 || again.digest != dz->st.digest || dz->sd.pos != dz->sd.n) {
        return ob_fail(OMNIBATCH_ERR_STATE, "simulate: rank 0 alone reached another decision than all ranks "
                       "together");
    }
    cost->collectives = comm.collectives;
    cost->bytes = comm.bytes;
    cost->latency = ob_sim_dist_cost(comm.collectives, comm.bytes, P, o->latency, o->bandwidth) + cost->compute;
    return d->changed ? ob_controller_set_plan(ctl, dz->plan) : OMNIBATCH_SUCCESS;
}

int ob_sim_decide(const ob_sim_opts *o, ob_sim_decider *dz, ob_controller *ctl, const ob_rank_record *rec,
                  ob_decision *d, ob_sim_cost *cost)
{
    return OB_SIM_CENTRAL == dz->planner ? ob_sim_decide_central(o, ctl, rec, d, cost)
                                         : ob_sim_decide_distributed(o, dz, ctl, rec, d, cost);
}
