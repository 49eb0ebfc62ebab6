/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One simulated run (sim_run.h).  Rank i's true step time on b samples is
 * t_i(b) = (alpha + beta * b) / s_i for a speed s_i drawn from the
 * scenario; every measured time carries multiplicative noise.  Each rank
 * feeds its own estimator; every period steps the P records go to the
 * decision exactly as the API exchanges them.  OmniLearn's rule runs side
 * by side on the same ranks with noise of its own.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_controller.h"
#include "ob_error.h"
#include "ob_estimator.h"
#include "ob_planner.h"
#include "sim_clock.h"
#include "sim_decide.h"
#include "sim_metrics.h"
#include "sim_omnilearn.h"
#include "sim_oracle.h"
#include "sim_random.h"
#include "sim_run.h"
#include "sim_speeds.h"

/* The yardsticks of one phase (the true models between changes). */
typedef struct ob_sim_phase {
    double oracle;               /* ob_plan_optimum's T */
    double integer;              /* best integer plan */
    double statik;               /* equal split */
} ob_sim_phase;

/* What the controller's decisions cost over the run. */
typedef struct ob_sim_costs {
    long decisions;
    long changes;
    double dec_sum;
    double dec_max;
    double lat_sum;
    double lat_max;
    long coll_sum;
    long coll_max;
    long bytes_sum;
} ob_sim_costs;

/* A run's whole state, carried through its steps. */
typedef struct ob_sim_state {
    const ob_sim_opts *o;
    const ob_sim_scenario *sc;
    int P;
    long B;
    long steps;
    long change;                 /* the step of the scenario's event; -1: none */
    long max_dec;
    double *speed;
    ob_rank_model *truth;
    ob_estimator *est;
    ob_rank_record *rec;
    double *acc;                 /* each rank's measured times since the last exchange */
    double *ol_acc;              /* OmniLearn's, since its last adjustment */
    long *ol_b;
    long *scratch;
    int *idx;
    int *iscratch;
    double *step_ratio;          /* / best integer plan */
    double *step_oracle;         /* / oracle */
    double *ol_ratio;
    double *ol_oracle;
    double *dec_ratio;           /* [0]: the first plan; [d]: the plan after decision d */
    int *dec_changed;
    /* One stream for the speeds and events, one per policy for its noise:
     * the policies see independent noise of the same law. */
    ob_sim_rng rng_speed;
    ob_sim_rng rng_ob;
    ob_sim_rng rng_ol;
    ob_sim_phase phase;
    ob_controller ctl;
    int have_ctl;
    ob_sim_decider dz;
    long since_exchange;
    long ol_since;
    long ol_excess_max;
    ob_sim_costs costs;
} ob_sim_state;

/* The true models for the current speeds: the whole step of a rank of
 * speed s takes 1/s times a speed-1 rank's. */
static void ob_sim_models(const ob_sim_opts *o, int P, long B, const double *speed, ob_rank_model *m)
{
    for (int i = 0; i < P; i++) {
        m[i].alpha = o->alpha / speed[i];
        m[i].beta = o->beta / speed[i];
        m[i].lo = 1;
        m[i].hi = B;
    }
}

static double ob_sim_step_time(const ob_rank_model *m, int P, const long *b)
{
    double t = 0.0;
    for (int i = 0; i < P; i++) {
        const double ti = m[i].alpha + m[i].beta * (double) b[i];
        t = ti > t ? ti : t;
    }
    return t;
}

static void ob_sim_equal_split(int P, long B, long *b)
{
    for (int i = 0; i < P; i++) {
        b[i] = B / P + (i < B % P ? 1 : 0);
    }
}

static int ob_sim_phase_of(const ob_rank_model *m, int P, long B, long *scratch, ob_sim_phase *ph)
{
    int rc = ob_plan_optimum(m, P, B, NULL, &ph->oracle);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    rc = ob_sim_integer_optimum(m, P, B, NULL, &ph->integer);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    ob_sim_equal_split(P, B, scratch);
    ph->statik = ob_sim_step_time(m, P, scratch);
    return OMNIBATCH_SUCCESS;
}

static int ob_sim_state_alloc(ob_sim_state *st)
{
    const size_t P = (size_t) st->P;
    const size_t n = (size_t) st->steps;

    st->speed = malloc(P * sizeof *st->speed);
    st->truth = malloc(P * sizeof *st->truth);
    st->est = malloc(P * sizeof *st->est);
    st->rec = malloc(P * sizeof *st->rec);
    st->acc = calloc(P, sizeof *st->acc);
    st->ol_acc = calloc(P, sizeof *st->ol_acc);
    st->ol_b = malloc(P * sizeof *st->ol_b);
    st->scratch = malloc(P * sizeof *st->scratch);
    st->idx = malloc(P * sizeof *st->idx);
    st->iscratch = malloc(P * sizeof *st->iscratch);
    st->step_ratio = malloc(n * sizeof *st->step_ratio);
    st->step_oracle = malloc(n * sizeof *st->step_oracle);
    st->ol_ratio = malloc(n * sizeof *st->ol_ratio);
    st->ol_oracle = malloc(n * sizeof *st->ol_oracle);
    st->dec_ratio = malloc((size_t) st->max_dec * sizeof *st->dec_ratio);
    st->dec_changed = calloc((size_t) st->max_dec, sizeof *st->dec_changed);
    if (NULL == st->speed || NULL == st->truth || NULL == st->est || NULL == st->rec || NULL == st->acc ||
        NULL == st->ol_acc || NULL == st->ol_b || NULL == st->scratch || NULL == st->idx || NULL == st->iscratch ||
        NULL == st->step_ratio || NULL == st->step_oracle || NULL == st->ol_ratio || NULL == st->ol_oracle ||
        NULL == st->dec_ratio || NULL == st->dec_changed) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: P=%d", st->P);
    }
    return OMNIBATCH_SUCCESS;
}

static void ob_sim_state_free(ob_sim_state *st)
{
    if (st->have_ctl) {
        ob_controller_free(&st->ctl);
        ob_sim_decider_free(&st->dz);
    }
    free(st->speed);
    free(st->truth);
    free(st->est);
    free(st->rec);
    free(st->acc);
    free(st->ol_acc);
    free(st->ol_b);
    free(st->scratch);
    free(st->idx);
    free(st->iscratch);
    free(st->step_ratio);
    free(st->step_oracle);
    free(st->ol_ratio);
    free(st->ol_oracle);
    free(st->dec_ratio);
    free(st->dec_changed);
}

/* The scenario's speeds, its true models and their yardsticks. */
static int ob_sim_start_speeds(ob_sim_state *st)
{
    const uint64_t base = st->o->seed * UINT64_C(1000003) + (uint64_t) st->P * UINT64_C(7919) +
                          (uint64_t) (st->sc - ob_sim_scenarios) * UINT64_C(104729);
    int rc = OMNIBATCH_SUCCESS;

    ob_sim_rng_seed(&st->rng_speed, base);
    ob_sim_rng_seed(&st->rng_ob, base ^ UINT64_C(0x5bd1e995));
    ob_sim_rng_seed(&st->rng_ol, base ^ UINT64_C(0x27d4eb2f165667c5));
    switch (st->sc->kind) {
    case OB_SIM_KIND_UNIFORM:
        rc = ob_sim_speeds_uniform(&st->rng_speed, st->P, 0.25, 1.0, st->speed);
        break;
    case OB_SIM_KIND_BIMODAL:
        rc = ob_sim_speeds_bimodal(&st->rng_speed, st->P, 0.1, 20.0, st->speed);
        break;
    case OB_SIM_KIND_LEVEL:
        rc = ob_sim_speeds_level(st->sc->level, st->P, st->speed);
        break;
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    ob_sim_models(st->o, st->P, st->B, st->speed, st->truth);
    return ob_sim_phase_of(st->truth, st->P, st->B, st->scratch, &st->phase);
}

/* The controller and its decider, every rank's estimator (sized as the
 * API sizes it), OmniLearn's equal start. */
static int ob_sim_start_policies(ob_sim_state *st, ob_sim_planner planner)
{
    const ob_sim_opts *o = st->o;
    const ob_planner_params params = { o->gain, o->deadband, 1 };
    int rc = ob_controller_init(&st->ctl, st->P, st->B, &params, NULL, NULL, NULL);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    st->have_ctl = 1;
    st->ctl.pooling = o->pool;
    rc = ob_sim_decider_init(&st->dz, planner, &st->ctl, &params, o->pool);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    for (int i = 0; i < st->P; i++) {
        ob_estimator_init(&st->est[i], o->forget);
        ob_estimator_set_ranks(&st->est[i], st->P);
    }
    ob_sim_equal_split(st->P, st->B, st->ol_b);
    st->dec_ratio[0] = ob_sim_step_time(st->truth, st->P, st->ctl.plan) / st->phase.integer;
    return OMNIBATCH_SUCCESS;
}

/* The scenario's event: a random 10% of ranks 2x slower, or one 20x. */
static int ob_sim_apply_event(ob_sim_state *st)
{
    const int slow10 = OB_SIM_EVENT_SLOW10 == st->sc->event;
    const int n = slow10 ? ob_sim_count_of(0.1, st->P) : 1;
    const int rc = ob_sim_choose(&st->rng_speed, st->P, n, st->idx, st->iscratch);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    ob_sim_slow_down(st->speed, st->idx, n, slow10 ? 2.0 : 20.0);
    ob_sim_models(st->o, st->P, st->B, st->speed, st->truth);
    return ob_sim_phase_of(st->truth, st->P, st->B, st->scratch, &st->phase);
}

/* OmniLearn, once per epoch, from the epoch's mean times. */
static int ob_sim_omnilearn_epoch(ob_sim_state *st)
{
    long sum = 0;
    int rc;

    for (int i = 0; i < st->P; i++) {
        st->ol_acc[i] /= (double) st->ol_since;
    }
    rc = ob_sim_omnilearn_adjust(st->P, st->B, st->ol_acc, OB_SIM_OMNILEARN_DEADBAND, 1, st->B, st->ol_b, &sum,
                                 NULL);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    st->ol_excess_max = sum - st->B > st->ol_excess_max ? sum - st->B : st->ol_excess_max;
    memset(st->ol_acc, 0, (size_t) st->P * sizeof *st->ol_acc);
    st->ol_since = 0;
    return OMNIBATCH_SUCCESS;
}

/* Step k of both policies: every rank's true time, its noisy measurement
 * fed to its estimator (omnibatch) or summed for the epoch (OmniLearn). */
static void ob_sim_run_step(ob_sim_state *st, long k)
{
    const ob_rank_model *truth = st->truth;
    const long *plan = st->ctl.plan;
    double t_ob = 0.0;
    double t_ol = 0.0;

    for (int i = 0; i < st->P; i++) {
        const double ti = truth[i].alpha + truth[i].beta * (double) plan[i];
        const double measured = ti * ob_sim_noise_of(st->o, &st->rng_ob);
        ob_estimator_add(&st->est[i], (double) plan[i], measured);
        st->acc[i] += measured;
        t_ob = ti > t_ob ? ti : t_ob;

        const double tl = truth[i].alpha + truth[i].beta * (double) st->ol_b[i];
        st->ol_acc[i] += tl * ob_sim_noise_of(st->o, &st->rng_ol);
        t_ol = tl > t_ol ? tl : t_ol;
    }
    st->since_exchange++;
    st->ol_since++;
    st->step_ratio[k] = t_ob / st->phase.integer;
    st->step_oracle[k] = t_ob / st->phase.oracle;
    st->ol_ratio[k] = t_ol / st->phase.integer;
    st->ol_oracle[k] = t_ol / st->phase.oracle;
}

static void ob_sim_count_cost(ob_sim_costs *c, const ob_sim_cost *cost)
{
    c->dec_sum += cost->compute;
    c->dec_max = cost->compute > c->dec_max ? cost->compute : c->dec_max;
    c->lat_sum += cost->latency;
    c->lat_max = cost->latency > c->lat_max ? cost->latency : c->lat_max;
    c->coll_sum += cost->collectives;
    c->coll_max = cost->collectives > c->coll_max ? cost->collectives : c->coll_max;
    c->bytes_sum += cost->bytes;
}

/* The exchange at the end of step k: every rank's record from its mean
 * time since the last one, and the decision. */
static int ob_sim_exchange(ob_sim_state *st, long k)
{
    ob_decision d;
    ob_sim_cost cost = { 0.0, 0, 0, 0.0 };
    int rc;

    for (int i = 0; i < st->P; i++) {
        st->acc[i] /= (double) st->since_exchange;
    }
    /* Every rank's record, as the API fills it on that rank (O(1) each:
     * the controller keeps its plan's hash). */
    for (int i = 0; i < st->P; i++) {
        ob_controller_record(&st->ctl, i, &st->est[i], st->acc[i], &st->rec[i]);
    }
    memset(st->acc, 0, (size_t) st->P * sizeof *st->acc);
    st->since_exchange = 0;
    rc = ob_sim_decide(st->o, &st->dz, &st->ctl, st->rec, &d, &cost);
    if (OMNIBATCH_SUCCESS != rc) {
        fprintf(stderr, "simulate: %s P=%d step %ld: decision: %s\n", st->sc->name, st->P, k, ob_last_error());
        return rc;
    }
    ob_sim_count_cost(&st->costs, &cost);
    st->costs.decisions++;
    st->dec_ratio[st->costs.decisions] = ob_sim_step_time(st->truth, st->P, st->ctl.plan) / st->phase.integer;
    st->dec_changed[st->costs.decisions] = d.changed;
    st->costs.changes += d.changed ? 1 : 0;
    return OMNIBATCH_SUCCESS;
}

/* Step k: the event when due, OmniLearn's adjustment when due, the step,
 * the exchange when due. */
static int ob_sim_step(ob_sim_state *st, long k)
{
    int rc = OMNIBATCH_SUCCESS;

    if (k == st->change) {
        rc = ob_sim_apply_event(st);
    }
    if (OMNIBATCH_SUCCESS == rc && k > 0 && 0 == k % st->o->epoch) {
        rc = ob_sim_omnilearn_epoch(st);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    ob_sim_run_step(st, k);
    return 0 == (k + 1) % st->o->period ? ob_sim_exchange(st, k) : OMNIBATCH_SUCCESS;
}

/* The noise floor beside the run: its mean over the last quarter (times
 * the integer floor, to compare with steady) and the first decision at
 * which it is within OB_SIM_CONVERGED. */
static void ob_sim_noise_floors(const ob_sim_opts *o, int P, long steps, ob_sim_result *res)
{
    /* The clipped normal's deviation is 0.9975 sigma; the uniform's width / sqrt(3). */
    const double sd = o->noise_uniform ? o->noise / sqrt(3.0) : 0.9975 * o->noise;
    const double em = ob_sim_expected_max_normal(P);
    const long q = steps - steps / 4;
    double sum = 0.0;

    for (long k = q; k < steps; k++) {
        sum += ob_sim_noise_floor(em, sd, o->forget, k + 1);
    }
    res->nf_steady = res->floor * sum / (double) (steps - q);
    res->nf_settle = -1;
    for (long d = 1; d * o->period <= 100000; d++) {
        if (ob_sim_noise_floor(em, sd, o->forget, d * o->period) <= OB_SIM_CONVERGED) {
            res->nf_settle = d;
            break;
        }
    }
}

/* Steady figures: the last quarter's mean step over the oracle. */
static void ob_sim_steady(const ob_sim_state *st, ob_sim_result *res)
{
    const long q = st->steps - st->steps / 4;
    double s_ob = 0.0;
    double s_ol = 0.0;

    for (long k = q; k < st->steps; k++) {
        s_ob += st->step_oracle[k];
        s_ol += st->ol_oracle[k];
    }
    res->steady = s_ob / (double) (st->steps - q);
    res->ol_steady = s_ol / (double) (st->steps - q);
}

/* Steps after the change until each policy is within OB_SIM_RECOVERED
 * for good (-1: never; -2: no change in this scenario). */
static void ob_sim_recovery(const ob_sim_state *st, ob_sim_result *res)
{
    if (st->change < 0) {
        res->recover = -2;
        res->ol_recover = -2;
        return;
    }
    const long r = ob_sim_first_for_good(st->step_ratio, st->change, st->steps, OB_SIM_RECOVERED);
    const long rl = ob_sim_first_for_good(st->ol_ratio, st->change, st->steps, OB_SIM_RECOVERED);
    res->recover = r < st->steps ? r - st->change : -1;
    res->ol_recover = rl < st->steps ? rl - st->change : -1;
}

static void ob_sim_conclude(const ob_sim_state *st, ob_sim_planner planner, ob_sim_result *res)
{
    const ob_sim_costs *c = &st->costs;
    const double n = c->decisions > 0 ? (double) c->decisions : 1.0;
    /* Convergence, in decisions, before any change: within 1.03x of the
     * best integer plan from some decision on, and no change after it.
     * Decision d happens at the end of step d * period - 1, so those before
     * the change are 1 .. change / period. */
    long dec_end = c->decisions;

    if (st->change >= 0 && st->change / st->o->period < c->decisions) {
        dec_end = st->change / st->o->period;
    }
    res->converge = ob_sim_converged(st->dec_ratio, st->dec_changed, dec_end, OB_SIM_CONVERGED, &res->settle);
    ob_sim_steady(st, res);
    res->floor = st->phase.integer / st->phase.oracle;
    ob_sim_noise_floors(st->o, st->P, st->steps, res);
    res->statik = st->phase.statik / st->phase.oracle;
    ob_sim_recovery(st, res);
    res->sc = st->sc;
    res->P = st->P;
    res->B = st->B;
    res->steps = st->steps;
    res->change_step = st->change;
    res->decisions = c->decisions;
    res->changes = c->changes;
    res->dec_mean_s = c->decisions > 0 ? c->dec_sum / n : 0.0;
    res->dec_max_s = c->dec_max;
    res->planner = planner;
    res->coll_mean = c->decisions > 0 ? (double) c->coll_sum / n : 0.0;
    res->coll_max = c->coll_max;
    res->bytes_mean = c->decisions > 0 ? (double) c->bytes_sum / n : 0.0;
    res->lat_mean_s = c->decisions > 0 ? c->lat_sum / n : 0.0;
    res->lat_max_s = c->lat_max;
    res->ol_excess_max = st->ol_excess_max;
}

int ob_sim_run(const ob_sim_opts *o, const ob_sim_scenario *sc, int P, ob_sim_planner planner,
               ob_sim_result *res)
{
    const double wall0 = ob_sim_now();
    ob_sim_state st;
    int rc;

    memset(&st, 0, sizeof st);
    st.o = o;
    st.sc = sc;
    st.P = P;
    st.B = o->batch_per_rank * (long) P;
    st.steps = P > 4096 ? o->big_steps : o->steps;
    st.change = OB_SIM_EVENT_NONE == sc->event ? -1 : (long) ((double) st.steps * o->change_at);
    st.max_dec = st.steps / o->period + 2;
    rc = ob_sim_state_alloc(&st);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_sim_start_speeds(&st);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_sim_start_policies(&st, planner);
    }
    for (long k = 0; k < st.steps && OMNIBATCH_SUCCESS == rc; k++) {
        rc = ob_sim_step(&st, k);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        ob_sim_conclude(&st, planner, res);
    }
    ob_sim_state_free(&st);
    res->wall_s = ob_sim_now() - wall0;
    return rc;
}
