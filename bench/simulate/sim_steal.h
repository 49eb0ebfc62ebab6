/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One step worked in chunks with stealing, event by event, at up to tens
 * of thousands of simulated ranks.  Each rank pays its fixed cost, then
 * works its own range of the step from the front in chunks cut by time to
 * the step's expected end (ob_chunk_next_until()).  Ranks are grouped in
 * nodes; a node's words (next | end, one per rank, and a few more for
 * ranges given by other nodes) are in shared memory, so every rank of a
 * node sees the others' tails, rates and chunks in flight, and who should
 * do what is left is the node's level (ob_chunk_level()): every rank's
 * quota of its unclaimed samples.  One rank computes it and the others read
 * it, until samples move or it is older than a hundredth of the step.
 *   - Before the end game (the last 15% of the expected step) a rank works
 *     its chunks without looking; from then on, and before its range's last
 *     chunk, it decides at each boundary: a chunk within its quota, or, with
 *     quota 0, it leaves its tail (its word stays as it is) to a rank of its
 *     node that would end its next chunk sooner than it would, and decides
 *     again when that rank is free; when none would, it works on it.  A
 *     range a helper gave it while it was busy it decides on alike.
 *   - A rank whose own range is empty steals in its node at once (one
 *     compare-and-swap on the victim's word, lat_node seconds): its quota,
 *     from the tail of the rank furthest beyond its own.
 *   - Across nodes, a request to a helper (ob_chunk_victim(): FlexRR's
 *     helper groups) carries when the asker can start; the helper answers
 *     for its whole node at its next chunk boundary (at once with nothing in
 *     flight, or with a progress thread): the node's level lowered by the
 *     asker's help (continuous: speeds add), the asker's quota of it, from
 *     the rank furthest beyond its own, by the same compare-and-swap; the
 *     range travels back half a round trip.  A busy rank in the end game
 *     offers its time after its node's level to `helpers` helpers a step,
 *     one request out at a time, and keeps a range it is given in a further
 *     word, open to its node; an idle one asks `asks` helpers in a row.
 *   - A rank with nothing left to take watches its node's words, woken
 *     when a rank there leaves its tail or receives a range; the step ends
 *     when the last rank stopped working.
 * A rank judges another by what it published: the time per sample of its
 * last chunk (before that, the model's), raised when its chunk in flight
 * has already taken longer, and that chunk's start; the work itself runs
 * at the true times.  Every sample is done exactly once: the simulator
 * counts each sample's completions and fails when one is not 1.
 */
#ifndef OB_SIM_STEAL_H
#define OB_SIM_STEAL_H

#include <stdint.h>

#include "ob_chunk.h"
#include "sim_work.h"

typedef struct ob_sim_steal_params {
    ob_chunk_policy policy;
    int per_node;                /* ranks per node, numbered node by node */
    int helpers;                 /* requests a busy rank sends in the end game, a step */
    int asks;                    /* requests an idle rank sends in a row without an answer with work */
    double lat_node;             /* seconds of an in-node steal (the compare-and-swap) */
    double lat_net;              /* seconds of a network round trip between nodes */
    double chunk_cost;           /* seconds of one chunk call */
    double floor_time;           /* a rank's chunks take at least this long at its model's speed (0: none) */
    int answer_at_once;          /* 1: a progress thread answers a request when it arrives */
    uint64_t seed;               /* of the helper order */
} ob_sim_steal_params;

typedef struct ob_sim_steal_result {
    double time;                 /* when the last rank stopped */
    long moved;                  /* samples taken by thieves (a sample taken twice counts twice) */
    long steals;                 /* shares taken, in node and across */
    long asks;                   /* requests across nodes */
    long chunks;                 /* chunks done by all ranks */
} ob_sim_steal_result;

typedef struct ob_sim_stealer ob_sim_stealer;

/**
 * \brief A stealer for steps of \p B samples over \p P ranks.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG naming the bad setting, or OMNIBATCH_ERR_NOMEM.
 */
int ob_sim_stealer_new(int P, long B, const ob_sim_steal_params *p, ob_sim_stealer **out);

/** \brief Free a stealer (NULL is fine). */
void ob_sim_stealer_free(ob_sim_stealer *s);

/**
 * \brief One step: rank i owns plan[i] samples (ranges adjacent, in rank order) and works
 *        as w[i] says; \p horizon is the step's expected end (the water level of the models
 *        the plan was made from: in the library, the decision's optimum), which guides the
 *        chunks' sizes (ob_chunk_next_until()).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE when a sample was not done exactly once
 *         (ob_last_error() names it).
 */
int ob_sim_steal_step(ob_sim_stealer *s, const long *plan, const ob_sim_work *w, double horizon,
                      ob_sim_steal_result *res);

#endif /* OB_SIM_STEAL_H */
