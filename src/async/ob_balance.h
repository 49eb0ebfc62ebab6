/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Batch scaling in the asynchronous mode: the parameter server sizes each
 * worker's next batch so that every worker pushes at the same rate.  A
 * worker's push rate is one over its cycle, t_w(b) = alpha_w + beta_w * b
 * (its compute of b samples plus its round trip to the server), learnt
 * online from every push by the synchronous mode's estimator
 * (ob_estimator.h: outliers, lasting changes of speed).  The batches keep
 * summing to B (the global batch: the samples of one round of pushes, so
 * the learning rate per sample stays that of B), within each worker's
 * bounds, and the cycles are equal exactly when the batches are the
 * water-filling split of B over the workers' models: the synchronous
 * planner's (ob_planner.h), proportional step and dead-band included.
 *
 * Equal rates make equal staleness: a worker's gradient is as stale as the
 * updates the others applied during its cycle, sum_{j != w} t_w / t_j,
 * which is W - 1 for every worker when all t are equal, and spreads by the
 * ratio of the speeds when the batches are equal.
 *
 * Continuously: a decision every \p period pushes (any workers'), no
 * barrier; a new plan reaches each worker with its next batch.  With
 * adaptive off the plan stays as set (ob_balance_set_plan(): equal
 * batches, or a rule of the caller's).
 *
 * A worker held at its least batch may still cycle longer than the others
 * at their share of the rest of B (its cycle's fixed part, the pull and the
 * push, at a small CPU quota): no split of B equalises the rates
 * (ob_balance_bound()).  Where the caller allows a larger sum (max_total),
 * the batches sum to the least that does, at most max_total: each other
 * worker's batch that lasts the held worker's cycle.  The learning rate per
 * sample is the update rule's (a batch over the reference batch), so a
 * larger round moves the model further, as its samples do.  MPI-free.
 */
#ifndef OB_BALANCE_H
#define OB_BALANCE_H

#include "ob_estimator.h"
#include "ob_planner.h"

/** The controller's settings. */
typedef struct ob_balance_params {
    double gain;                 /* Kp in (0, 1] */
    double deadband;             /* least predicted gain in cycle time worth a change */
    long granularity;            /* batches are multiples of it (one worker may carry B mod it) */
    double forget;               /* the estimators' forgetting factor */
    long period;                 /* pushes between decisions, >= 1 */
    long warmup;                 /* each worker's first pushes not learnt (cold caches), >= 0 */
    int adaptive;                /* 1: the decisions move the plan; 0: it stays as set */
    long max_total;              /* the largest sum of the batches, where no split of B
                                    equalises the rates; <= B: always B */
} ob_balance_params;

typedef struct ob_balance {
    int W;                       /* workers */
    long B;                      /* the global batch: the sum of the batches, unless grown */
    long total;                  /* the sum of the batches now: B, or up to p.max_total */
    ob_balance_params p;
    ob_rank_model *models;       /* W: bounds, and the models of the last decision */
    ob_estimator *est;           /* W: each worker's cycle */
    long *plan;                  /* W: the batch each worker is handed next */
    long *next;                  /* W: scratch */
    long *pushes;                /* W: pushes seen of each worker */
    long since;                  /* pushes since the last decision */
    long decisions;              /* decisions taken (every worker had a model) */
    long changes;                /* decisions that moved the plan */
    ob_decision last;            /* the last decision's figures */
} ob_balance;

/**
 * \brief Start with the equal split of \p B over \p W workers within bounds [lo_w, hi_w].
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG for a bad setting (named);
 *         OMNIBATCH_ERR_INFEASIBLE when the bounds cannot hold B; OMNIBATCH_ERR_NOMEM.
 */
int ob_balance_init(ob_balance *b, int W, long B, const long *lo, const long *hi,
                    const ob_balance_params *p);

/** \brief Free what ob_balance_init() took. */
void ob_balance_free(ob_balance *b);

/**
 * \brief Worker \p w pushed a batch of \p batch samples after a cycle of \p seconds: learn it,
 *        and decide every \p period pushes.
 * \return 1 when the plan changed, else 0.
 */
int ob_balance_observe(ob_balance *b, int w, long batch, double seconds);

/** \brief The batch worker \p w is handed next. */
long ob_balance_batch(const ob_balance *b, int w);

/**
 * \brief Impose \p plan (W batches summing to B, or to at most p.max_total, within the bounds)
 *        from each worker's next batch on; the decisions (adaptive) move on from it.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG naming the worker or the sum at fault.
 */
int ob_balance_set_plan(ob_balance *b, const long *plan);

/** \brief Worker \p w's cycle model (0 and 0 before it was learnt): 1 when learnt. */
int ob_balance_model(const ob_balance *b, int w, double *alpha, double *beta);

/** Why equal push rates are out of reach: a worker that is slower at its least batch than the
 *  others are sharing the rest of B (its cycle's fixed part, at a small CPU quota). */
typedef struct ob_balance_limit {
    int worker;                  /* the worker bound (the furthest above the others) */
    long batch;                  /* its batch in the plan: its least (its bound, or one granule) */
    double cycle_s;              /* its predicted cycle there */
    double level_s;              /* the others' cycle, sharing the rest of B at their best split */
    long need;                   /* the global batch at which every worker could cycle in cycle_s */
} ob_balance_limit;

/**
 * \brief Whether a worker held at its least batch still cycles more than 10% longer than the
 *        others' best split of the rest of B: then no plan of B equalises the push rates, and
 *        \p out says which worker, by how much, and the global batch that would (each other
 *        worker's batch that lasts cycle_s, within its largest where that is below B).
 * \return 1 with \p out filled; 0 when none is (or not every worker has a model yet, or no
 *         memory for the scratch).
 */
int ob_balance_bound(const ob_balance *b, ob_balance_limit *out);

/** Seconds of wall over which ob_quota_cycle weighs a worker's cycles (exponentially): ten of
 *  the kernel's default 100 ms quota periods. */
#define OB_QUOTA_CYCLE_WINDOW_S 1.0

/**
 * A worker's cycle as the controller learns it under a CPU quota.  Where the
 * quota runs out mid-cycle the kernel stops the worker until its period ends:
 * at 0.1 core and a 100 ms period, one cycle in a period takes up to 90 ms
 * more and the others run at full speed, and the estimator, which takes a
 * lone long cycle for an outlier, learnt the full speed: the worker was handed
 * a batch as if it had the whole core, and pushed about half as often as the
 * others (0.55x under 0.4, 0.4, 0.2, 0.1 cores in hetsgd; 0.44x at 0.4 cores
 * in check_balance's simulation).  So a cycle that spent cpu seconds of the
 * process's CPU is learnt as the wall the worker spends on that CPU over the
 * last OB_QUOTA_CYCLE_WINDOW_S, stops included: cpu times the window's wall
 * over its CPU; and at least cpu / q, the least wall in which a quota of q
 * cores gives that CPU (the window's first periods, before a stop).  A
 * worker that also waits for the server, or runs on a crowded core, is
 * learnt as slow as it is, which cpu / q alone left out (a 0.1-core worker
 * cycled in 11.5 ms where cpu / q said 8).
 */
typedef struct ob_quota_cycle {
    double wall;                 /* the window's wall, seconds (weighted) */
    double cpu;                  /* its CPU, seconds (weighted) */
} ob_quota_cycle;

/**
 * \brief The cycle to learn from one of \p wall seconds that spent \p cpu seconds of the
 *        process's CPU, under a quota of \p quota cores: \p wall where there is none
 *        (quota <= 0) or the CPU is unknown (cpu < 0), else the larger of cpu / quota and cpu
 *        times the window's wall over its CPU (above).  \p q starts zeroed.
 */
double ob_quota_cycle_learn(ob_quota_cycle *q, double quota, double wall, double cpu);

#endif /* OB_BALANCE_H */
