/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The plan of one run: the first plan from prior weights, then one planner
 * decision per exchange of records (see ob_controller.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_controller.h"
#include "ob_error.h"

/* Largest effective dead-band: the planner takes [0, 1). */
#define OB_CTL_MAX_BAND 0.99

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

void ob_controller_free(ob_controller *ctl)
{
    free(ctl->plan);
    free(ctl->bounds);
    free(ctl->models);
    free(ctl->next);
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
    if (NULL == ctl->plan || NULL == ctl->bounds || NULL == ctl->models || NULL == ctl->next) {
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
    rec->plan_hash = ctl->plan_hash;
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
        if ((long) rec->lo != rec->lo || (long) rec->hi != rec->hi) {
            return ob_fail(OMNIBATCH_ERR_ARG, "record of rank %d: bounds [%lld, %lld] do not fit a long",
                           i, (long long) rec->lo, (long long) rec->hi);
        }
        *complete = *complete && rec->samples > 0;
        m->alpha = rec->alpha;
        m->beta = rec->beta;
        if (0 == rec->lo && 0 == rec->hi) {
            m->lo = ctl->bounds[i].lo;
            m->hi = ctl->bounds[i].hi;
        } else {
            m->lo = (long) rec->lo;
            m->hi = (long) rec->hi;
        }
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

/* OB_CTL_CONFIDENCE standard errors of a predicted gain, as a fraction of
 * the step time.  The gain compares the slowest rank with a weighted mean of
 * all, so its error is about sqrt(2) times the largest rank's. */
static double ob_controller_margin(const ob_controller *ctl, const ob_rank_record *records)
{
    double worst = 0.0;

    for (int i = 0; i < ctl->nranks; i++) {
        worst = records[i].rel_error > worst ? records[i].rel_error : worst;
    }
    return OB_CTL_CONFIDENCE * 1.4142135623730951 * worst;
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
    if (OMNIBATCH_SUCCESS != (rc = ob_plan_check_bounds(ctl->models, P, B, ctl->params.granularity))) {
        return rc;
    }
    if (OMNIBATCH_SUCCESS != ob_plan_check(ctl->models, P, B, ctl->plan)) {
        rc = ob_controller_replan(ctl, &dec);
    } else {
        ob_planner_params p = ctl->params;
        double margin = ob_controller_margin(ctl, records);
        double band = ctl->refining ? OB_CTL_REFINE_BAND * p.deadband : p.deadband;

        p.deadband = band > margin ? band : margin;
        p.deadband = p.deadband < OB_CTL_MAX_BAND ? p.deadband : OB_CTL_MAX_BAND;
        rc = ob_plan_decide(&p, ctl->models, P, B, ctl->plan, ctl->plan, &dec);
        if (OMNIBATCH_SUCCESS == rc && dec.changed) {
            ob_controller_rehash(ctl);
        }
        if (OMNIBATCH_SUCCESS == rc && !dec.changed && ctl->refining
            && dec.t_current - dec.t_candidate + margin * dec.t_current <= ctl->params.deadband * dec.t_current) {
            /* Confidently inside the band: the full band applies again. */
            ctl->refining = 0;
        }
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    for (int i = 0; i < P; i++) {
        ctl->bounds[i].lo = ctl->models[i].lo;
        ctl->bounds[i].hi = ctl->models[i].hi;
    }
    ctl->decisions++;
    ctl->changes += dec.changed;
    ctl->refining = ctl->refining || dec.changed;
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
        ob_controller_rehash(ctl);
    }
    return rc;
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
