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
 * How a decision is made.  Each record carries its rank's model and the
 * model's error terms, so that the relative error err_i(b) of its predicted
 * time is known at any batch (it grows with the distance from the batches
 * the rank ran, as far as its split of fixed and per-sample time is
 * uncertain).  With P ranks the step time is the largest of P uncertain
 * times, and a model error of e standard errors on any rank costs the whole
 * step: at P = 65,536 the largest of the ranks' errors is about 4.3 of
 * them.  So:
 *   - Hedge.  The planner plans on each model scaled by 1 + spread * err_i,
 *     spread being the expected largest of P standard normal deviates (0.56
 *     at P = 2, 3.6 at 4096, 4.3 at 65,536), err_i taken where the optimum
 *     of the models hedged at the held plan would put the rank.  With equal
 *     errors the plan is that of the models; a rank whose model is young or
 *     extrapolated far gets less work, at a cost to the others of a share
 *     of it, and no longer decides the step time when its model errs by 2
 *     or 3 standard errors.
 *   - Judge by the expected step time.  The planner's proportional step on
 *     the hedged models is the candidate; it is adopted when the expected
 *     step time E[max_i t_i], each t_i normal around its model with its
 *     error at its batch (Clark's moment-matching, O(P)), falls by more
 *     than the band.  A gain that comes from one rank predicted slow by less
 *     than its own uncertainty, or from the largest of many small random
 *     wanderings of the models (the reason a rule on the predicted gain, or
 *     on the worst rank's error, stalls or churns at large P), is mostly not
 *     there in expectation, and is not acted on; a rank really slower is.
 *   - Trust region.  In one decision a rank's batch grows at most to the
 *     larger of OB_CTL_MAX_GROWTH times it and it plus OB_CTL_GROWTH_SHARE of
 *     the mean share B / P; it may shrink at once.  A model extrapolated far
 *     from the batches its rank ran (a rank back from a tiny batch, or one
 *     whose fixed share absorbed a change of speed) can be optimistic by
 *     several times, and the one mistake that costs the whole step is to
 *     give a rank too much: measured on the ramp benchmark, a slow rank
 *     planned 668 and 923 samples from a model fitted on batches of 1 took 6
 *     times the balanced step.  A rank that slowed down is not held back:
 *     it sheds its work as fast as the others may take it (at once when
 *     they hold shares alike).
 *   - Band.  The configured dead-band (OMNIBATCH_DEADBAND), or
 *     OB_CTL_REFINE_BAND of it while refining: right after a change of
 *     plan (a move made on rough models is followed up), and whenever the
 *     models' mean error has fallen below OB_CTL_REFINE_PRECISION of the one
 *     last looked at while spread * error still exceeds OB_CTL_REFINE_FLOOR
 *     of the dead-band (the plan catches up with models that have become
 *     more precise, as long as that can still matter: at large P for longer
 *     than at small P).  A steady run's models stop gaining precision (the
 *     forgetting factor's memory) and the full band applies for good, so a
 *     settled plan stops changing.
 *   - The whole step.  A step is compute, then the reduction every rank
 *     spends in the gradient allreduce whoever arrives last, then waiting
 *     (the rest of the blocked time: waiting for the last to arrive).  The
 *     plan moves compute only, so the models are of compute only; but a
 *     change is worth making when it shortens the whole expected step,
 *     expected compute plus reduction, by more than the band.  The
 *     reduction is the least mean blocked time over the ranks' records
 *     (the last rank to arrive does not wait; ob_controller_reduction()),
 *     less the stalls of a rank its quota starved of CPU (ob_starve.h):
 *     everyone waits for those inside the allreduce, and they are no
 *     transfer.
 *     On a network-bound run (5 us of compute in a 21 ms step) a change
 *     that saves microseconds of compute is not made, and the noise of
 *     tiny compute times cannot move the plan.
 *   - Timing (OMNIBATCH_REACT, the API).  Besides every period, a decision
 *     is brought forward to the next step when a rank's estimator confirmed
 *     a change of speed, and for OB_CTL_FOLLOW_DECISIONS decisions after a
 *     change of plan (ob_controller_follow_up_due(), the same on every
 *     rank): the models of ranks just re-learnt rest on two or three
 *     samples and each step's sample makes them markedly surer.
 *   - Parked ranks (lo = 0, OMNIBATCH_MIN_BATCH=0).  A rank planned 0
 *     samples does not compute, so the step times leave it out; it is
 *     probed with OB_CTL_PROBE_GRANULES granules after
 *     OB_CTL_PROBE_FIRST_STEPS steps parked, then at doubling gaps up to
 *     OB_CTL_PROBE_MAX_STEPS (steps counted with ob_controller_advance()).
 * The arithmetic of a decision is IEEE addition, multiplication, division,
 * sqrt, floor and ldexp only, so that every rank reaches the same plan
 * whatever its libm.
 *
 * How close to the oracle and how fast: docs/figures.md (with the commands).
 */
#ifndef OB_CONTROLLER_H
#define OB_CONTROLLER_H

#include <stdint.h>

#include "ob_estimator.h"
#include "ob_planner.h"
#include "ob_record.h"

/** Fraction of the dead-band that applies while refining (below). */
#define OB_CTL_REFINE_BAND 0.25
/** Refining: the models' mean error fell below this fraction of the one last looked at... */
#define OB_CTL_REFINE_PRECISION 0.9
/** ... and spread * error still exceeds this fraction of the dead-band. */
#define OB_CTL_REFINE_FLOOR 0.25
/** Trust region: in one decision a batch grows at most by this factor... */
#define OB_CTL_MAX_GROWTH 2.0
/** ... or by this fraction of the mean share B / P, if that is more (a rank back from a tiny batch). */
#define OB_CTL_GROWTH_SHARE 0.5
/** A rank parked (batch 0, OMNIBATCH_MIN_BATCH=0) this many steps is probed... */
#define OB_CTL_PROBE_FIRST_STEPS 4
/** ... then after twice as many each time it stays parked, up to this many: a probe of a rank
 *  parked for its fixed cost costs that cost once, so the probes thin out while it lasts... */
#define OB_CTL_PROBE_MAX_STEPS 16
/** ... with this many granules (taken from the largest batch), so that it shows its speed again. */
#define OB_CTL_PROBE_GRANULES 1
/** After a change of plan, this many decisions are wanted at once (OMNIBATCH_REACT), moved or not. */
#define OB_CTL_FOLLOW_DECISIONS 3

typedef struct ob_controller {
    int nranks;
    long global_batch;
    ob_planner_params params;
    long *plan;                  /* nranks entries, sum == global_batch */
    ob_rank_model *bounds;       /* nranks entries: lo and hi (alpha, beta unused) */
    ob_rank_model *models;       /* nranks entries: the hedged models and bounds of the last update */
    long *next;                  /* nranks entries of scratch */
    double *target;              /* nranks entries of scratch */
    double *error;               /* nranks entries: each model's relative error at the plan held */
    uint64_t plan_hash;          /* ob_controller_plan_hash(), kept with the plan */
    long *parked;                /* nranks entries: steps each rank held batch 0 since its last probe */
    long *probe_gap;             /* nranks entries: steps parked before its next probe */
    long steps_since;            /* steps since the last decision (ob_controller_advance()) */
    long probes;                 /* probes handed to parked ranks */
    double spread;               /* expected largest of nranks standard normal deviates */
    double refine_error;         /* mean relative error of the models at the last change of plan or refinement */
    int follow_up;               /* the last decision changed the plan: the next one refines */
    int follow_left;             /* decisions still wanted at once after a change (OB_CTL_FOLLOW_DECISIONS) */
    int refining;                /* the last decision applied the small band */
    long decisions;              /* updates that had every model */
    long changes;                /* of which changed the plan */
    ob_decision last;            /* the last decision */
    double reduction;            /* the step's reduction in the last decision (ob_controller_reduction) */
    int pooling;                 /* 1 (the default): plan on pooled speeds (ob_pool.h) */
    struct ob_pool *pool;        /* the last decision's histogram */
    ob_rank_record *pooled;      /* nranks entries: the records planned on */
    long pooled_ranks;           /* ranks pooled in the last decision */
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
 * or OMNIBATCH_ERR_INFEASIBLE with a detail line.  Otherwise one decision
 * as described above (two water-fillings and O(P) besides: about 20 ms at
 * 65,536 ranks).  Records whose bounds differ from the ones held replace
 * them; if the plan breaks the new bounds it is replaced by the rounded
 * optimum of the hedged models, whatever the gain and the dead-band.
 * \param[out] d what was decided (may be NULL): its times are expected step times of the
 *               models with their errors (t_current, t_candidate, t_next), and the water
 *               level of the hedged models (t_optimum); on new bounds, step times of the
 *               hedged models.
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

/**
 * \brief The step model's reduction of \p P records: the least of their mean blocked times
 *        (the rank that reaches the allreduce last waits for nobody), each less the share a
 *        rank its quota starved of CPU lost to its stalls (ob_starve.h); 0 when a rank did
 *        not measure it.
 */
double ob_controller_reduction(const ob_rank_record *records, int P);

/**
 * \brief Tell the controller that \p steps steps ran on the plan held since the last
 *        decision (the probes of parked ranks are timed in steps); without it every
 *        decision counts as one step.
 */
void ob_controller_advance(ob_controller *ctl, long steps);

/**
 * \brief 1 when the last decision moved the plan, so that the next one refines it
 *        (OMNIBATCH_REACT brings that decision forward to the next step); the same on
 *        every rank holding the same controller.
 */
int ob_controller_follow_up_due(const ob_controller *ctl);

/**
 * \brief Note a decision taken elsewhere (the distributed decision, which keeps its own
 *        state): whether it moved the plan opens or runs down the window of follow-up
 *        decisions ob_controller_follow_up_due() reports, as a decision of this controller
 *        does.
 */
void ob_controller_note_decision(ob_controller *ctl, int changed);

/**
 * \brief After a decision taken elsewhere (the distributed decision) on the plan this
 *        controller holds: count the parked ranks' steps since the last decision
 *        (ob_controller_advance()) and give a probe to those whose gap is over, as
 *        ob_controller_update() does.  O(P); the same plan on every rank holding the same.
 */
void ob_controller_probe_parked(ob_controller *ctl);

/** \brief Free what ob_controller_init() allocated. */
void ob_controller_free(ob_controller *ctl);

#endif /* OB_CONTROLLER_H */
