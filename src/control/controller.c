/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The plan of one run: the first plan from prior weights, then one planner
 * decision per exchange of records (see ob_controller.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_controller.h"
#include "ob_error.h"
#include "ob_maths.h"
#include "ob_pool.h"
#include "ob_starve.h"

/* FNV-1a over the values as little-endian 64-bit integers: the same bytes
 * whatever the host's long and byte order. */
static uint64_t ob_hash_value(uint64_t h, uint64_t v)
{
    for (int k = 0; k < 8; k++) {
        h ^= (v >> (8 * k)) & 0xffu;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* Computed once per change of plan, so that a record costs O(1). */
static void ob_controller_rehash(ob_controller *ctl)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    h = ob_hash_value(h, (uint64_t) ctl->nranks);
    h = ob_hash_value(h, (uint64_t) ctl->global_batch);
    for (int i = 0; i < ctl->nranks; i++) {
        h = ob_hash_value(h, (uint64_t) ctl->plan[i]);
    }
    ctl->plan_hash = h;
}

/*
 * Expected step time of \p plan, max_i t_i, when rank i's time is normal
 * with mean alpha_i + beta_i * b_i and relative standard deviation
 * error[i], its model's error there: Clark's moment-matching, folding one
 * rank at a time into the normal that approximates the maximum so far
 * (ob_maths.h).  O(P).
 * This is what a plan is expected to cost, the noise of the models
 * included: a gain that comes from one rank predicted slow by less than its
 * own uncertainty, or from the largest of many small random wanderings of
 * the models, is mostly not there.
 */
static double ob_controller_expected_step(const ob_rank_record *records, int P, const long *plan,
                                          const double *error)
{
    ob_normal_max max = { 0.0, 0.0 };

    for (int i = 0; i < P; i++) {
        /* A parked rank (batch 0) does not compute. */
        double mu = 0 == plan[i] ? 0.0 : records[i].alpha + records[i].beta * (double) plan[i];
        double s2 = error[i] * mu * error[i] * mu;

        if (0 == i) {
            max.mean = mu;
            max.var = s2;
        } else {
            ob_normal_max_fold(&max, mu, s2);
        }
    }
    return max.mean;
}

/* error[i] = ob_record_error_at(rank i, batch[i]), or at the plan held
 * when \p batch is NULL; \p error may be \p batch. */
static void ob_controller_errors(const ob_controller *ctl, const ob_rank_record *records, const double *batch,
                                 double *error)
{
    for (int i = 0; i < ctl->nranks; i++) {
        error[i] = ob_record_error_at(&records[i], NULL == batch ? (double) ctl->plan[i] : batch[i]);
    }
}

/* Each rank's model scaled by 1 + spread * error[i], its relative error at
 * the batch it is to run: planning on these, a rank whose speed is
 * uncertain is given the work it can finish in time unless it is as slow
 * as the slowest of P like it would be.  With equal errors the plan is the
 * same as on the models themselves; a rank just re-learnt (3 samples, 6%
 * error at 10% noise) gets 4 * 6% less work at P = 65,536, at a cost to the
 * others of 1/P of that, and no longer decides the step time when its model
 * errs by 2 or 3 standard errors; a rank whose split is uncertain is moved
 * far from the batches it ran only with that margin. */
static void ob_controller_hedge(ob_controller *ctl, const ob_rank_record *records, const double *error)
{
    for (int i = 0; i < ctl->nranks; i++) {
        double f = 1.0 + ctl->spread * error[i];
        ob_rank_model *m = &ctl->models[i];

        m->alpha = records[i].alpha * f < OB_PLAN_MAX_ALPHA ? records[i].alpha * f : OB_PLAN_MAX_ALPHA;
        m->beta = records[i].beta * f < OB_PLAN_MAX_BETA ? records[i].beta * f : OB_PLAN_MAX_BETA;
    }
}

void ob_controller_free(ob_controller *ctl)
{
    free(ctl->plan);
    free(ctl->bounds);
    free(ctl->models);
    free(ctl->next);
    free(ctl->target);
    free(ctl->error);
    free(ctl->parked);
    free(ctl->probe_gap);
    free(ctl->pool);
    free(ctl->pooled);
    memset(ctl, 0, sizeof *ctl);
}

int ob_controller_init(ob_controller *ctl, int P, long B, const ob_planner_params *params,
                       const long *lo, const long *hi, const double *weights)
{
    int rc;

    memset(ctl, 0, sizeof *ctl);
    if (OMNIBATCH_SUCCESS != (rc = ob_plan_check_params(params))) {
        return rc;
    }
    if (P < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "number of ranks %d: expected >= 1", P);
    }
    ctl->nranks = P;
    ctl->global_batch = B;
    ctl->params = *params;
    ctl->plan = calloc((size_t) P, sizeof *ctl->plan);
    ctl->bounds = calloc((size_t) P, sizeof *ctl->bounds);
    ctl->models = calloc((size_t) P, sizeof *ctl->models);
    ctl->next = calloc((size_t) P, sizeof *ctl->next);
    ctl->target = calloc((size_t) P, sizeof *ctl->target);
    ctl->error = calloc((size_t) P, sizeof *ctl->error);
    ctl->parked = calloc((size_t) P, sizeof *ctl->parked);
    ctl->probe_gap = calloc((size_t) P, sizeof *ctl->probe_gap);
    ctl->pool = calloc(2, sizeof *ctl->pool);   /* the one held, and the next one's scratch */
    ctl->pooled = calloc((size_t) P, sizeof *ctl->pooled);
    if (NULL == ctl->plan || NULL == ctl->bounds || NULL == ctl->models || NULL == ctl->next || NULL == ctl->target
        || NULL == ctl->error || NULL == ctl->parked || NULL == ctl->probe_gap || NULL == ctl->pool
        || NULL == ctl->pooled) {
        ob_controller_free(ctl);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "controller: no memory for %d ranks", P);
    }
    for (int i = 0; i < P; i++) {
        ctl->bounds[i].lo = NULL == lo ? 1 : lo[i];
        ctl->bounds[i].hi = NULL == hi ? B : hi[i];
    }
    memcpy(ctl->models, ctl->bounds, (size_t) P * sizeof *ctl->models);
    rc = NULL == weights ? ob_plan_equal(ctl->bounds, P, B, params->granularity, ctl->plan)
                         : ob_plan_proportional(ctl->bounds, P, B, params->granularity, weights, ctl->plan);
    if (OMNIBATCH_SUCCESS != rc) {
        ob_controller_free(ctl);
        return rc;
    }
    ctl->spread = ob_max_normal_spread(P);
    ctl->refine_error = OB_CTL_MAX_ERROR;
    ctl->pooling = 1;
    ob_controller_rehash(ctl);
    return OMNIBATCH_SUCCESS;
}

void ob_controller_record(const ob_controller *ctl, int rank, const ob_estimator *est,
                          double compute_mean, ob_rank_record *rec)
{
    double alpha, beta;

    memset(rec, 0, sizeof *rec);
    if (ob_estimator_model(est, &alpha, &beta)) {
        rec->alpha = alpha;
        rec->beta = beta;
        rec->samples = ob_estimator_count(est);
    }
    rec->lo = ctl->bounds[rank].lo;
    rec->hi = ctl->bounds[rank].hi;
    rec->compute_mean = compute_mean;
    rec->rel_error = ob_estimator_error(est, (double) ctl->plan[rank]);
    ob_estimator_error_terms(est, &rec->level_error, &rec->share_error, &rec->mean_batch);
    rec->plan_hash = ctl->plan_hash;
    /* Unknown until the caller measures it (ob_cpu_watch_fill()). */
    rec->throttled_share = -1.0;
}

/* The bounds rank i asks for in its record: lo = hi = 0 keeps the ones held. */
static void ob_controller_record_bounds(const ob_controller *ctl, const ob_rank_record *rec, int i,
                                        ob_rank_model *m)
{
    if (0 == rec->lo && 0 == rec->hi) {
        m->lo = ctl->bounds[i].lo;
        m->hi = ctl->bounds[i].hi;
    } else {
        m->lo = (long) rec->lo;
        m->hi = (long) rec->hi;
    }
}

/* The records' models and bounds into ctl->models; 1 if every rank has a
 * model.  Bounds are checked later, with the planner's messages. */
static int ob_controller_gather(ob_controller *ctl, const ob_rank_record *records, int *complete)
{
    *complete = 1;
    for (int i = 0; i < ctl->nranks; i++) {
        const ob_rank_record *rec = &records[i];
        ob_rank_model *m = &ctl->models[i];

        if (rec->samples < 0) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: samples = %lld: expected >= 0",
                           i, (long long) rec->samples);
        }
        if (!(rec->rel_error >= 0.0 && rec->rel_error <= 1e6)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: relative error %g: expected a number in [0, 1e6]",
                           i, rec->rel_error);
        }
        if (!(rec->level_error >= 0.0 && rec->level_error <= 1e6 && rec->share_error >= 0.0 && rec->share_error <= 1e6)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: error terms %g and %g: expected numbers in [0, 1e6]",
                           i, rec->level_error, rec->share_error);
        }
        if (!(rec->blocked_mean >= 0.0 && rec->blocked_mean <= OB_CTL_MAX_BLOCKED)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: blocked time %g s: expected a number in [0, %g]",
                           i, rec->blocked_mean, OB_CTL_MAX_BLOCKED);
        }
        if (!(rec->mean_batch >= 0.0 && rec->mean_batch <= (double) OB_PLAN_MAX_BATCH)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: mean batch %g: expected a number in [0, %ld]",
                           i, rec->mean_batch, (long) OB_PLAN_MAX_BATCH);
        }
        if (!(rec->throttled_share <= 1.0)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: throttled share %g: expected a number in [0, 1], "
                           "or < 0 for unknown", i, rec->throttled_share);
        }
        if ((long) rec->lo != rec->lo || (long) rec->hi != rec->hi) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: bounds [%lld, %lld] do not fit a long",
                           i, (long long) rec->lo, (long long) rec->hi);
        }
        *complete = *complete && rec->samples > 0;
        m->alpha = rec->alpha;
        m->beta = rec->beta;
        ob_controller_record_bounds(ctl, rec, i, m);
    }
    return OMNIBATCH_SUCCESS;
}

/* New bounds the plan breaks: the rounded optimum, at once. */
static int ob_controller_replan(ob_controller *ctl, ob_decision *d)
{
    int P = ctl->nranks;
    double *target = malloc((size_t) P * sizeof *target);
    int rc;

    if (NULL == target) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "controller: no memory for %d ranks", P);
    }
    rc = ob_plan_optimum(ctl->models, P, ctl->global_batch, target, &d->t_optimum);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_plan_round(ctl->models, P, ctl->global_batch, ctl->params.granularity, target, ctl->next);
    }
    free(target);
    if (OMNIBATCH_SUCCESS == rc) {
        d->t_current = ob_plan_step_time(ctl->models, P, ctl->plan);
        d->t_next = ob_plan_step_time(ctl->models, P, ctl->next);
        d->t_candidate = d->t_next;
        d->changed = 1;
        memcpy(ctl->plan, ctl->next, (size_t) P * sizeof *ctl->plan);
        ob_controller_rehash(ctl);
    }
    return rc;
}

/* The trust region of one decision (ob_controller.h): with on = 1, each
 * rank's upper bound becomes at most the larger of OB_CTL_MAX_GROWTH times
 * its batch and its batch plus OB_CTL_GROWTH_SHARE of the mean share, rounded
 * up to the granularity; with on = 0, the bounds of the records again.  The
 * plan held sums to B within these bounds, so they stay feasible. */
static void ob_controller_trust(ob_controller *ctl, const ob_rank_record *records, int on)
{
    int P = ctl->nranks;
    long g = ctl->params.granularity > 0 ? ctl->params.granularity : 1;
    double step = OB_CTL_GROWTH_SHARE * (double) ctl->global_batch / (double) P;

    for (int i = 0; i < P; i++) {
        ob_rank_model *m = &ctl->models[i];

        ob_controller_record_bounds(ctl, &records[i], i, m);
        if (on) {
            double b = (double) ctl->plan[i];
            double cap = OB_CTL_MAX_GROWTH * b > b + step ? OB_CTL_MAX_GROWTH * b : b + step;
            double units = -floor(-cap / (double) g);

            if (units * (double) g < (double) m->hi) {
                m->hi = (long) units * g;
            }
        }
    }
}

/* ------------------------------------------------------------------ */
/* The whole step: compute, reduction, waiting                          */

/* The step's reduction: the least of the ranks' mean blocked times.  The
 * rank that reaches the allreduce last waits for nobody, so what it spends
 * there is what the reduction costs every rank; the rest of any other
 * rank's blocked time is waiting.  A rank its quota starved of CPU stalls
 * inside the allreduce too, and everyone waits for it there: its stalls
 * are taken out of its blocked time (ob_starve.h), so that they are not
 * read as the transfer.  0 when a rank did not measure it (the judgement is then on
 * compute alone, as without this model). */
double ob_controller_reduction(const ob_rank_record *records, int P)
{
    double least = -1.0;

    for (int i = 0; i < P; i++) {
        double own = records[i].blocked_mean * (1.0 - ob_starved_record_share(&records[i]));

        if (least < 0.0 || own < least) {
            least = own;
        }
    }
    return least > 0.0 ? least : 0.0;
}

/* Whether a change of plan from expected compute \p now to \p then is
 * worth making: it must shorten the whole expected step, compute plus
 * \p reduction, by more than \p band of it.  A saving of 1 us of compute on
 * a 21 ms step is none. */
static int ob_controller_worth(double now, double then, double reduction, double band)
{
    return now - then > band * (now + reduction);
}

/* Decision timing: after a change of plan the next OB_CTL_FOLLOW_DECISIONS
 * decisions are wanted at once (ob_controller_follow_up_due()), whether or
 * not they move the plan: the models of ranks just re-learnt rest on two or
 * three samples, and each step's sample makes them markedly surer, so the
 * plan that was right for them a step ago may be a few percent off now. */
static void ob_controller_follow_window(ob_controller *ctl, int changed)
{
    if (changed) {
        ctl->follow_left = OB_CTL_FOLLOW_DECISIONS;
    } else if (ctl->follow_left > 0) {
        ctl->follow_left--;
    }
}

/* One decision on held bounds: the candidate is the planner's proportional
 * step on the hedged models, whenever it shortens their step time at all;
 * it is adopted when it lowers the expected step time by more than the
 * band: the configured dead-band, or OB_CTL_REFINE_BAND of it while
 * refining (ob_controller.h).  ctl->error holds the errors at the plan. */
static int ob_controller_decide(ob_controller *ctl, const ob_rank_record *records, ob_decision *dec)
{
    int P = ctl->nranks;
    ob_planner_params p = ctl->params;
    double error = 0.0;
    double band, now, then;
    int rc;

    for (int i = 0; i < P; i++) {
        error += ctl->error[i];
    }
    error /= (double) P;

    ctl->refining = ctl->follow_up
                    || (error < OB_CTL_REFINE_PRECISION * ctl->refine_error
                        && ctl->spread * error > OB_CTL_REFINE_FLOOR * p.deadband);
    band = ctl->refining ? OB_CTL_REFINE_BAND * p.deadband : p.deadband;
    /* Hedged where the ranks run, the optimum shows where they would go;
     * hedged there, the decision. */
    if (OMNIBATCH_SUCCESS != (rc = ob_plan_optimum(ctl->models, P, ctl->global_batch, ctl->target, NULL))) {
        return rc;
    }
    ob_controller_errors(ctl, records, ctl->target, ctl->target);
    ob_controller_hedge(ctl, records, ctl->target);
    p.deadband = 0.0;
    ob_controller_trust(ctl, records, 1);
    rc = ob_plan_decide(&p, ctl->models, P, ctl->global_batch, ctl->plan, ctl->next, dec);
    ob_controller_trust(ctl, records, 0);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    now = ob_controller_expected_step(records, P, ctl->plan, ctl->error);
    then = now;
    if (dec->changed) {
        for (int i = 0; i < P; i++) {
            ctl->target[i] = (double) ctl->next[i];
        }
        ob_controller_errors(ctl, records, ctl->target, ctl->target);
        then = ob_controller_expected_step(records, P, ctl->next, ctl->target);
    }
    ctl->reduction = ob_controller_reduction(records, P);
    dec->changed = dec->changed && ob_controller_worth(now, then, ctl->reduction, band);
    dec->t_current = now;
    dec->t_candidate = then;
    dec->t_next = dec->changed ? then : now;
    if (dec->changed) {
        memcpy(ctl->plan, ctl->next, (size_t) P * sizeof *ctl->plan);
        ob_controller_rehash(ctl);
    }
    if (dec->changed || ctl->refining) {
        ctl->refine_error = error;
    }
    ctl->follow_up = dec->changed;
    ob_controller_follow_window(ctl, dec->changed);
    return OMNIBATCH_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Parked ranks (OMNIBATCH_MIN_BATCH=0)                                 */
/*
 * A rank planned 0 samples runs none, so its model learns nothing: were it
 * to recover it would stay parked.  After OB_CTL_PROBE_FIRST_STEPS steps
 * parked it is given OB_CTL_PROBE_GRANULES granules for the next step,
 * taken from the rank with the largest batch (the first on ties, so every
 * rank makes the same plan); its step then measures its speed (a probe,
 * ob_estimator_add_probe()) and the next decision acts on it.  A probe
 * costs one short step of the parked rank (its fixed cost, when that is
 * why it was parked), so while it stays parked the gap doubles up to
 * OB_CTL_PROBE_MAX_STEPS: a rank that recovers gets work back within that
 * many steps and a few decisions.
 */
/* The rank that gives the probe's samples: the largest batch that can
 * spare them (the first on ties, so every rank picks the same), or -1. */
static int ob_controller_probe_donor(const ob_controller *ctl, long probe)
{
    int donor = -1;

    for (int j = 0; j < ctl->nranks; j++) {
        if (ctl->plan[j] - probe >= ctl->bounds[j].lo && (donor < 0 || ctl->plan[j] > ctl->plan[donor])) {
            donor = j;
        }
    }
    return donor;
}

/* Rank i is parked: count the steps, and give it a probe when its gap is
 * over.  1 when the plan moved. */
static int ob_controller_probe_rank(ob_controller *ctl, int i, long probe, long steps)
{
    int donor;

    ctl->parked[i] += steps;
    if (0 == ctl->probe_gap[i]) {
        ctl->probe_gap[i] = OB_CTL_PROBE_FIRST_STEPS;
    }
    if (ctl->parked[i] < ctl->probe_gap[i] || probe > ctl->bounds[i].hi) {
        return 0;
    }
    donor = ob_controller_probe_donor(ctl, probe);
    if (donor < 0) {
        return 0;
    }
    ctl->plan[donor] -= probe;
    ctl->plan[i] += probe;
    ctl->parked[i] = 0;
    ctl->probe_gap[i] = 2 * ctl->probe_gap[i] < OB_CTL_PROBE_MAX_STEPS ? 2 * ctl->probe_gap[i]
                                                                       : OB_CTL_PROBE_MAX_STEPS;
    ctl->probes++;
    return 1;
}

void ob_controller_probe_parked(ob_controller *ctl)
{
    long g = ctl->params.granularity > 0 ? ctl->params.granularity : 1;
    long probe = OB_CTL_PROBE_GRANULES * g;
    long steps = ctl->steps_since > 0 ? ctl->steps_since : 1;
    int moved = 0;

    ctl->steps_since = 0;
    for (int i = 0; i < ctl->nranks; i++) {
        if (0 != ctl->plan[i]) {
            /* Working (a probe included): the gap starts afresh when it is parked again,
             * unless it was a probe that showed it still slow. */
            ctl->parked[i] = 0;
            ctl->probe_gap[i] = ctl->probe_gap[i] > 0 && ctl->plan[i] == probe ? ctl->probe_gap[i] : 0;
            continue;
        }
        moved |= ob_controller_probe_rank(ctl, i, probe, steps);
    }
    if (moved) {
        /* The next decision must see the probe at once, whatever it shows. */
        ctl->follow_up = 1;
        ob_controller_rehash(ctl);
    }
}

/* The records planned on: each pooled with its peers in the last
 * decision's histogram (ob_pool.h) at the batch it runs; then this
 * decision's histogram, from the records as measured, replaces it. */
static const ob_rank_record *ob_controller_pool(ob_controller *ctl, const ob_rank_record *records)
{
    int P = ctl->nranks;
    double bref = (double) ctl->global_batch / (double) P;
    ob_pool *next = &ctl->pool[1];

    ctl->pooled_ranks = 0;
    memset(next, 0, sizeof *next);
    for (int i = 0; i < P; i++) {
        ob_pool_seen seen;

        ctl->pooled_ranks += ob_pool_apply(ctl->pool, &records[i], ctl->plan[i], &ctl->pooled[i], &seen);
        ob_pool_add(next->sums, &records[i], ctl->plan[i], bref, &seen);
    }
    ob_pool_finish(next, bref);
    ctl->pool[0] = *next;
    return ctl->pooled;
}

int ob_controller_update(ob_controller *ctl, const ob_rank_record *records, ob_decision *d)
{
    int P = ctl->nranks;
    long B = ctl->global_batch;
    ob_decision dec;
    int complete, rc;

    memset(&dec, 0, sizeof dec);
    if (NULL != d) {
        *d = dec;
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_controller_gather(ctl, records, &complete)) || !complete) {
        return rc;
    }
    if (ctl->pooling) {
        records = ob_controller_pool(ctl, records);
        if (OMNIBATCH_SUCCESS != (rc = ob_controller_gather(ctl, records, &complete))) {
            return rc;
        }
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_plan_check_bounds(ctl->models, P, B, ctl->params.granularity))
        || OMNIBATCH_SUCCESS != (rc = ob_plan_check_models(ctl->models, P))) {
        return rc;
    }
    ob_controller_errors(ctl, records, NULL, ctl->error);
    ob_controller_hedge(ctl, records, ctl->error);
    if (OMNIBATCH_SUCCESS != ob_plan_check(ctl->models, P, B, ctl->plan)) {
        rc = ob_controller_replan(ctl, &dec);
        ctl->follow_up = OMNIBATCH_SUCCESS == rc;
    } else {
        rc = ob_controller_decide(ctl, records, &dec);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    for (int i = 0; i < P; i++) {
        ctl->bounds[i].lo = ctl->models[i].lo;
        ctl->bounds[i].hi = ctl->models[i].hi;
    }
    ob_controller_probe_parked(ctl);
    ctl->decisions++;
    ctl->changes += dec.changed;
    ctl->last = dec;
    if (NULL != d) {
        *d = dec;
    }
    return OMNIBATCH_SUCCESS;
}

int ob_controller_set_plan(ob_controller *ctl, const long *plan)
{
    int rc = ob_plan_check(ctl->bounds, ctl->nranks, ctl->global_batch, plan);

    if (OMNIBATCH_SUCCESS == rc) {
        memcpy(ctl->plan, plan, (size_t) ctl->nranks * sizeof *ctl->plan);
        ctl->refine_error = OB_CTL_MAX_ERROR;
        ob_controller_rehash(ctl);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Decision timing (OMNIBATCH_REACT)                                    */

void ob_controller_advance(ob_controller *ctl, long steps)
{
    ctl->steps_since += steps > 0 ? steps : 0;
}

int ob_controller_follow_up_due(const ob_controller *ctl)
{
    return ctl->follow_up || ctl->follow_left > 0;
}

void ob_controller_note_decision(ob_controller *ctl, int changed)
{
    ctl->follow_up = changed;
    ob_controller_follow_window(ctl, changed);
}

uint64_t ob_controller_plan_hash(const ob_controller *ctl)
{
    return ctl->plan_hash;
}

int ob_controller_verify(const ob_controller *ctl, const ob_rank_record *records)
{
    uint64_t mine = ctl->plan_hash;

    for (int i = 0; i < ctl->nranks; i++) {
        if (records[i].plan_hash != mine) {
            return ob_fail(OMNIBATCH_ERR_DISAGREE, "rank %d holds plan %016llx, this rank %016llx",
                           i, (unsigned long long) records[i].plan_hash, (unsigned long long) mine);
        }
    }
    return OMNIBATCH_SUCCESS;
}
