/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The distributed decision's collectives, emulated.  One process holds every
 * simulated rank, so an allreduce or a scan returns what it was given (the
 * reductions are exact, so this is what P processes would compute); each
 * result is logged, and one rank's own share of the decision is then run
 * alone against the log (replay), which times the compute of one rank.
 * Cost model: every collective costs latency * ceil(log2 P) plus its bytes
 * over the bandwidth; today's allgather costs latency * ceil(log2 P) plus the
 * P records over the bandwidth.
 */
#ifndef OB_SIM_DIST_H
#define OB_SIM_DIST_H

#include <stdint.h>

#include "ob_planner_dist.h"

typedef struct ob_sim_coll {
    int nsum;
    int nmax;
    int64_t *sums;
    double *maxs;
} ob_sim_coll;

typedef struct ob_sim_dist {
    int replay;                  /* 0: all ranks in one block, log the results; 1: hand them out */
    int n;                       /* logged */
    int pos;                     /* next to hand out */
    int failed;                  /* the replay asked for another shape than logged */
    ob_sim_coll log[64];
} ob_sim_dist;

/** \brief A comm over \p sd (counters zeroed). */
ob_dist_comm ob_sim_dist_comm(ob_sim_dist *sd);

/** \brief Forget the log, and record (replay = 0) or hand out from the start (replay = 1). */
void ob_sim_dist_reset(ob_sim_dist *sd, int replay);

/** \brief Free the log. */
void ob_sim_dist_free(ob_sim_dist *sd);

/** \brief Emulated seconds of \p collectives collectives of \p bytes in all, at P ranks. */
double ob_sim_dist_cost(long collectives, long bytes, int P, double latency, double bandwidth);

#endif /* OB_SIM_DIST_H */
