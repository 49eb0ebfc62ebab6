/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The distributed decision: the same plan as the central planner
 * (ob_planner.h) and controller (ob_controller.h) without any rank holding
 * every record.  Each process holds a block of ranks (one rank under MPI;
 * the simulator holds all of them in one block) and its own models, bounds
 * and batches; what the ranks must know in common travels in a few small
 * collectives given as callbacks, so the core stays MPI-free (the API
 * implements them with PMPI on its private communicator; the simulator and
 * the tests emulate them).
 *
 * What the collectives carry (5-7 of them in a steady decision, at most 8
 * in the simulated runs up to 65,536 ranks):
 *   - the water level T, twice (the optimum of the models hedged at the
 *     plan held, then of those hedged at its targets within the trust
 *     region): every round evaluates OB_DIST_CANDIDATES levels at once
 *     (first a ladder of half-octave steps around the last decision's
 *     level, then inside the bracket found, evenly in the order of the
 *     doubles and clustered around the linear interpolation), each with
 *     sum_i x_i(level), the slopes of the sum on both sides, and between
 *     neighbours the number and extremes of the breakpoints; where the sum
 *     is linear on the stretch it crosses the total, T is solved there
 *     exactly, as the central planner does on its segment (one round once
 *     the plan is steady, 2-3 in the first decisions).  The first of the
 *     two only places each rank's error (where that optimum puts its
 *     batch): a bracket within 1/8 is interpolated instead of solved, so it
 *     takes one round once a decision has a level to start from;
 *   - the integer plan (largest remainder by step time, as ob_plan_decide):
 *     the floors' sum gives the granules still to hand out; a histogram of
 *     the keys t_i(floor + 1 granule) (even bins in a window around the
 *     level and exponential ones beyond, then OB_DIST_BINS even bins in the
 *     bin found, each bin with its least and largest key) finds the
 *     threshold key exactly in 2-3 rounds, and one exclusive scan orders
 *     the ranks tied on it by index and gives every rank its data offset;
 *   - the dead-band: the expected step time E[max_i t_i] of the plan held
 *     and of the candidate, each from three maxima and the sums of
 *     -log Phi at fixed levels, riding on other collectives: the plan
 *     held's maxima on the first and its sums on the second level's first
 *     round; the candidate's maxima on the floors' collective (over the
 *     three batches each rank's can be: its floor and a granule either
 *     side; bounds, so the grid is a little wider than the candidate's
 *     own: within 5e-4 of it in the simulated runs, 1e-5 on average) and
 *     its sums on the last one.
 *
 * Identical on every rank, bit for bit: every collective reduces int64 by
 * SUM (exact, so the order of the reduction does not matter) and doubles by
 * MAX (exact and order-free; a MIN travels as the MAX of the negation).
 * Sums of real numbers travel in fixed point (x * 2^46 as three 32-bit limbs
 * of int64, exact for up to 2^31 ranks), so every rank gets the same
 * integers and derives the same doubles from them with the same IEEE
 * operations.  Every decision ends in integers; its global values are
 * folded into a digest that OMNIBATCH_VERIFY compares across ranks.
 *
 * Memory per process is O(block) for the block's own numbers and
 * O(OB_DIST_CANDIDATES + OB_DIST_BINS) for a collective's payload.
 */
#ifndef OB_PLANNER_DIST_H
#define OB_PLANNER_DIST_H

#include <stdint.h>

#include "ob_controller.h"
#include "ob_planner.h"
#include "ob_pool.h"

/** Levels evaluated per round of the water-level search. */
#define OB_DIST_CANDIDATES 96
/** Uniform bins per round of the threshold search after the first (exponential) one. */
#define OB_DIST_BINS 256
/** Rounds of either search before it gives up (never reached: each round narrows by >= 48x). */
#define OB_DIST_MAX_ROUNDS 24

/**
 * The collectives, over every process of the run, in process order.  Each returns
 * OMNIBATCH_SUCCESS or an error with a detail line (ob_fail()); every process gets the same.
 */
typedef struct ob_dist_comm {
    /** In place: sums[0..nsum) summed (int64, exact), maxs[0..nmax) maximised; one collective. */
    int (*allreduce)(void *ctx, int64_t *sums, int nsum, double *maxs, int nmax);
    /** In place: v[0..n) becomes the sum of the values of the processes before this one (0 on the first). */
    int (*exscan)(void *ctx, int64_t *v, int n);
    void *ctx;
    /* Counted by the planner: collectives issued and bytes each process sent in them. */
    long collectives;
    long bytes;
} ob_dist_comm;

/** The block of ranks this process holds: ranks first .. first + n - 1. */
typedef struct ob_dist_block {
    int n;
    int first;
} ob_dist_block;

/**
 * \brief Distributed ob_plan_optimum(): the water level T of the models in the block
 *        (their bounds as given), the same on every process.
 * \param[in] hint  a level to search around (the last decision's), or 0: none.
 * \return as ob_plan_optimum() (errors are the same on every process).
 */
int ob_dist_optimum(ob_dist_comm *comm, ob_dist_block blk, const ob_rank_model *m, long P, long B,
                    double hint, double *T);

/**
 * \brief Distributed ob_plan_decide(): the same decision on the block's models, batches and
 *        bounds (granularity must divide B); \p next and \p offset are the block's batches and
 *        data offsets (sum of the batches of the ranks before).  d->t_optimum is the oracle.
 * \param[in,out] hint  the level searched around; the decision's level on return.
 */
int ob_dist_plan_decide(ob_dist_comm *comm, const ob_planner_params *p, ob_dist_block blk,
                        const ob_rank_model *m, long P, long B, const long *current, long *next,
                        long *offset, double *hint, ob_decision *d);

/** The controller's state of a distributed run: the same on every process. */
typedef struct ob_dist_state {
    long nranks;
    long global_batch;
    ob_planner_params params;
    double spread;               /* expected largest of nranks standard normal deviates */
    double refine_error;         /* as ob_controller */
    int follow_up;
    int refining;
    double hint_oracle;          /* water levels of the last decision, where the next searches */
    double hint_plan;
    double reduction;            /* the step model's reduction at the last exchange (ob_controller_reduction) */
    long decisions;
    long changes;
    ob_decision last;
    ob_decision inner;           /* the planner's step of the last decision (ob_plan_decide's view) */
    uint64_t digest;             /* of every global value of the last decision */
    int pooling;                 /* 1 (the default): plan on pooled speeds (ob_pool.h) */
    ob_pool pool;                /* the last decision's histogram, from its first collective */
    long pooled;                 /* ranks of this process's block planned on pooled speeds, last decision */
} ob_dist_state;

/** What the planner's step saw on one rank: OMNIBATCH_VERIFY gathers it to compare with the central planner. */
typedef struct ob_dist_trace {
    ob_rank_model model;         /* the hedged model and the trust region's bounds it planned on */
    long current;                /* the batch held */
    long candidate;              /* the planner's candidate (the batch held when it found none) */
} ob_dist_trace;

/** \brief Start a distributed run (parameters checked as by ob_controller_init()). */
int ob_dist_init(ob_dist_state *st, long P, long B, const ob_planner_params *params);

/**
 * \brief ob_controller_update() for the block: its records (bounds given in them) and
 *        batches \p plan (updated in place), and every rank's data offset into \p offset.
 *        The same decision as the controller's (hedge, trust region, refining band, a change
 *        judged on the whole step with the least mean blocked time as its reduction) except
 *        that a plan's expected step time is the largest over the ranks of each one's expected
 *        time is E[max_i t_i] integrated from sums over the ranks instead of Clark's fold over
 *        all of them (within 0.3% of it).  \p offset is written for the plan returned.
 * \param[out] trace  blk.n entries (may be NULL): what the planner's step saw.
 * \return OMNIBATCH_SUCCESS (also in the warm-up, when a rank has no model yet: no decision,
 *         d->changed = 0 and its times 0), or the error every process meets alike.
 */
int ob_dist_update(ob_dist_state *st, ob_dist_comm *comm, ob_dist_block blk, const ob_rank_record *rec,
                   long *plan, long *offset, ob_decision *d, ob_dist_trace *trace);

#endif /* OB_PLANNER_DIST_H */
