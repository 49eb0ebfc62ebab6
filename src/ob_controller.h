/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The controller: the plan of one run and how it moves.  Each rank feeds its
 * own estimator (ob_estimator.h); every OMNIBATCH_PERIOD steps the ranks
 * exchange one ob_rank_record each (ob_controller_record() fills it), and
 * every rank calls ob_controller_update() with the same P records, so every
 * rank holds the same plan without a root.  MPI-free: the API does the
 * exchange, the simulator and the tests call it directly.
 *
 * Lifecycle: ob_controller_init() -> (ob_controller_record(), exchange,
 * ob_controller_update()) every period -> ob_controller_free().
 *
 * When the plan moves.  One ob_plan_decide() per update, whose dead-band is
 * the larger of
 *   - the configured dead-band (OMNIBATCH_DEADBAND), or OB_CTL_REFINE_BAND
 *     of it while the controller is refining (below), and
 *   - OB_CTL_CONFIDENCE standard errors of the predicted gain, taken as
 *     sqrt(2) times the largest rel_error of the records: a gain the models
 *     cannot tell from their noise is not acted on, so young models after a
 *     change of speed move the plan only for large gains, and timing noise
 *     does not make a settled plan wander.
 * After a change of plan the controller refines: it keeps moving with the
 * smaller band until it is confident (gain plus the same number of standard
 * errors) that the plan is inside the full band, then applies the full band
 * again.  So a move made on rough models is followed up once the models
 * know better, and a plan at rest sits well inside the band rather than at
 * its edge, where noise alone would later push it over.
 *
 * Measured on the simulated heterogeneity levels of tests/check_controller.c
 * (10% uniform noise, defaults of ob_config.h, 480 runs): within 1.03x of
 * the oracle from decision 25 at the latest, last change of plan at
 * decision 75; after one rank turns 2x slower, back within 1.05x in 1
 * decision (median), 6 (97%), 11 (worst).
 */
#ifndef OB_CONTROLLER_H
#define OB_CONTROLLER_H

#include <stdint.h>

#include "ob_estimator.h"
#include "ob_planner.h"

/** Fraction of the dead-band that applies while refining after a change of plan. */
#define OB_CTL_REFINE_BAND 0.25
/** Standard errors a predicted gain must exceed to be acted on. */
#define OB_CTL_CONFIDENCE 2.0

/** What each rank contributes to a decision: fixed size, plain data (MPI_BYTE), no padding. */
typedef struct ob_rank_record {
    double alpha;                /* the rank's model */
    double beta;
    int64_t samples;             /* samples the model rests on; 0 = no model yet */
    int64_t lo;                  /* the rank's bounds; lo = hi = 0: the bounds the controller holds */
    int64_t hi;
    double compute_mean;         /* mean measured compute seconds since the last exchange (report) */
    uint64_t plan_hash;          /* hash of the plan this rank holds (OMNIBATCH_VERIFY) */
    double rel_error;            /* relative standard error of the model at the rank's batch; 0 = unknown */
} ob_rank_record;

typedef struct ob_controller {
    int nranks;
    long global_batch;
    ob_planner_params params;
    long *plan;                  /* nranks entries, sum == global_batch */
    ob_rank_model *bounds;       /* nranks entries: lo and hi (alpha, beta unused) */
    ob_rank_model *models;       /* nranks entries: models and bounds of the last update */
    long *next;                  /* nranks entries of scratch */
    uint64_t plan_hash;          /* ob_controller_plan_hash(), kept with the plan */
    int refining;                /* the plan changed and is not yet confidently inside the band */
    long decisions;              /* updates that had every model */
    long changes;                /* of which changed the plan */
    ob_decision last;            /* the last decision */
} ob_controller;

/**
 * \brief Start a run: P ranks, global batch B, and the first plan.
 * \param[in] params   gain, dead-band, granularity (checked as by ob_plan_decide()).
 * \param[in] lo, hi   P bounds each (NULL: 1 and B).
 * \param[in] weights  P prior weights for the first plan, finite and > 0 (NULL: equal split);
 *                     e.g. cores or GPUs per rank (ob_plan_proportional()).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG / OMNIBATCH_ERR_INFEASIBLE with the planner's
 *         detail line; OMNIBATCH_ERR_NOMEM.  On failure nothing is left to free.
 */
int ob_controller_init(ob_controller *ctl, int P, long B, const ob_planner_params *params,
                       const long *lo, const long *hi, const double *weights);

/**
 * \brief Fill this rank's record for the next exchange: O(1) (the plan's hash is kept with
 *        the plan).
 * \param[in] rank          this rank (its bounds are the ones the controller holds).
 * \param[in] est           this rank's estimator (no model yet: samples = 0).
 * \param[in] compute_mean  mean compute seconds since the last exchange (report only).
 */
void ob_controller_record(const ob_controller *ctl, int rank, const ob_estimator *est,
                          double compute_mean, ob_rank_record *rec);

/**
 * \brief One decision from the P gathered records (the same on every rank).
 *
 * Records without a model (samples == 0) leave the plan unchanged and return
 * OMNIBATCH_SUCCESS (d->changed = 0, its times 0): that is the warm-up.
 * Records with invalid numbers (samples < 0, a model the planner rejects,
 * infeasible bounds) leave the plan unchanged and return OMNIBATCH_ERR_ARG
 * or OMNIBATCH_ERR_INFEASIBLE with a detail line.  Otherwise one
 * ob_plan_decide().  Records whose bounds differ from the ones held replace
 * them; if the plan breaks the new bounds it is replaced by the rounded
 * optimum, whatever the gain and the dead-band.
 * \param[out] d what was decided (may be NULL).
 */
int ob_controller_update(ob_controller *ctl, const ob_rank_record *records, ob_decision *d);

/**
 * \brief Impose a plan (omnibatch_set_plan()): it must sum to B and hold every bound.
 * \return OMNIBATCH_SUCCESS, or the detail of ob_plan_check(); the plan is unchanged then.
 */
int ob_controller_set_plan(ob_controller *ctl, const long *plan);

/**
 * \brief A stable 64-bit hash of the plan held, equal on every rank holding the same plan:
 *        FNV-1a over P, B and every batch, each as a little-endian 64-bit integer; kept with
 *        the plan, so O(1).
 */
uint64_t ob_controller_plan_hash(const ob_controller *ctl);

/**
 * \brief Check that every record carries this controller's plan hash.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_DISAGREE naming the first rank that differs.
 */
int ob_controller_verify(const ob_controller *ctl, const ob_rank_record *records);

/** \brief Free what ob_controller_init() allocated. */
void ob_controller_free(ob_controller *ctl);

#endif /* OB_CONTROLLER_H */
