/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Batch scaling in the asynchronous mode (ob_balance.h): the synchronous
 * mode's estimator and planner, fed by pushes instead of steps.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_balance.h"
#include "ob_error.h"

static int ob_balance_check(int W, long B, const ob_balance_params *p)
{
    ob_planner_params pp;

    if (W < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "workers=%d: expected at least 1 worker", W);
    }
    if (B < 1 || B > OB_PLAN_MAX_BATCH) {
        return ob_fail(OMNIBATCH_ERR_ARG, "global_batch=%ld: expected 1..%ld", B,
                       (long) OB_PLAN_MAX_BATCH);
    }
    if (p->period < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "period=%ld: expected >= 1 pushes", p->period);
    }
    if (p->warmup < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "warmup=%ld: expected >= 0 pushes", p->warmup);
    }
    if (0 != p->adaptive && 1 != p->adaptive) {
        return ob_fail(OMNIBATCH_ERR_ARG, "adaptive=%d: expected 0 or 1", p->adaptive);
    }
    pp.gain = p->gain;
    pp.deadband = p->deadband;
    pp.granularity = p->granularity;
    return ob_plan_check_params(&pp);
}

int ob_balance_init(ob_balance *b, int W, long B, const long *lo, const long *hi,
                    const ob_balance_params *p)
{
    int rc;

    memset(b, 0, sizeof *b);
    rc = ob_balance_check(W, B, p);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    b->W = W;
    b->B = B;
    b->p = *p;
    b->models = calloc((size_t) W, sizeof *b->models);
    b->est = calloc((size_t) W, sizeof *b->est);
    b->plan = calloc((size_t) W, sizeof *b->plan);
    b->next = calloc((size_t) W, sizeof *b->next);
    b->pushes = calloc((size_t) W, sizeof *b->pushes);
    if (NULL == b->models || NULL == b->est || NULL == b->plan || NULL == b->next
        || NULL == b->pushes) {
        ob_balance_free(b);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "no memory for the batches of %d workers", W);
    }
    for (int w = 0; w < W; w++) {
        b->models[w].lo = lo[w];
        b->models[w].hi = hi[w];
        ob_estimator_init(&b->est[w], p->forget);
        ob_estimator_set_ranks(&b->est[w], W);
    }
    rc = ob_plan_check_bounds(b->models, W, B, p->granularity);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_plan_equal(b->models, W, B, p->granularity, b->plan);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        ob_balance_free(b);
    }
    return rc;
}

void ob_balance_free(ob_balance *b)
{
    free(b->models);
    free(b->est);
    free(b->plan);
    free(b->next);
    free(b->pushes);
    memset(b, 0, sizeof *b);
}

/* Worker w's model as the planner takes it into \p m (its bounds kept);
 * 0 while it has none. */
static int ob_balance_model_of(const ob_balance *b, int w, ob_rank_model *m)
{
    double alpha, beta;

    if (!ob_estimator_model(&b->est[w], &alpha, &beta)) {
        return 0;
    }
    m->alpha = alpha < OB_PLAN_MAX_ALPHA ? alpha : OB_PLAN_MAX_ALPHA;
    m->beta = beta > OB_PLAN_MIN_BETA ? (beta < OB_PLAN_MAX_BETA ? beta : OB_PLAN_MAX_BETA) : OB_PLAN_MIN_BETA;
    return 1;
}

/* Every worker's model into b->models; 0 while a worker has none. */
static int ob_balance_models(ob_balance *b)
{
    for (int w = 0; w < b->W; w++) {
        if (!ob_balance_model_of(b, w, &b->models[w])) {
            return 0;
        }
    }
    return 1;
}

/* One decision on the models learnt so far: 1 when the plan moved. */
static int ob_balance_decide(ob_balance *b)
{
    ob_planner_params pp;

    if (!ob_balance_models(b)) {
        return 0;
    }
    pp.gain = b->p.gain;
    pp.deadband = b->p.deadband;
    pp.granularity = b->p.granularity;
    /* The models are valid and the plan is one of these bounds: a failure
     * here is out of memory, and the plan then stays as it is. */
    if (OMNIBATCH_SUCCESS != ob_plan_decide(&pp, b->models, b->W, b->B, b->plan, b->next, &b->last)) {
        return 0;
    }
    b->decisions++;
    if (!b->last.changed) {
        return 0;
    }
    memcpy(b->plan, b->next, (size_t) b->W * sizeof *b->plan);
    b->changes++;
    return 1;
}

int ob_balance_observe(ob_balance *b, int w, long batch, double seconds)
{
    if (w < 0 || w >= b->W) {
        return 0;
    }
    if (b->pushes[w] >= b->p.warmup && batch > 0) {
        ob_estimator_add(&b->est[w], (double) batch, seconds);
    }
    b->pushes[w]++;
    b->since++;
    if (!b->p.adaptive || b->since < b->p.period) {
        return 0;
    }
    b->since = 0;
    return ob_balance_decide(b);
}

long ob_balance_batch(const ob_balance *b, int w)
{
    return w >= 0 && w < b->W ? b->plan[w] : 0;
}

int ob_balance_set_plan(ob_balance *b, const long *plan)
{
    int rc = ob_plan_check(b->models, b->W, b->B, plan);

    if (OMNIBATCH_SUCCESS == rc) {
        memcpy(b->plan, plan, (size_t) b->W * sizeof *b->plan);
    }
    return rc;
}

/* Worker w held at its least batch (its lower bound, or one granule where
 * that is larger): its cycle there, and the others' level sharing the rest
 * of B (models \p m of all, \p others scratch of W - 1). */
static int ob_balance_held(const ob_balance *b, const ob_rank_model *m, ob_rank_model *others, int w,
                           double *cycle, double *level)
{
    const long g = b->p.granularity > 1 ? b->p.granularity : 1;
    const long least = (m[w].lo + g - 1) / g * g;
    int n = 0;

    if (b->plan[w] > (least > g ? least : g)) {
        return 0;
    }
    for (int j = 0; j < b->W; j++) {
        if (j != w) {
            others[n++] = m[j];
        }
    }
    *cycle = m[w].alpha + m[w].beta * (double) b->plan[w];
    return OMNIBATCH_SUCCESS == ob_plan_optimum(others, n, b->B - b->plan[w], NULL, level) && *level > 0.0;
}

/* The global batch at which every worker could cycle in out->cycle_s: the
 * bound worker's batch and each other's that lasts as long, within its
 * bounds (a largest batch counts where it is below B). */
static long ob_balance_need(const ob_balance *b, const ob_rank_model *m, const ob_balance_limit *out)
{
    double need = (double) out->batch;

    for (int j = 0; j < b->W; j++) {
        double bj;

        if (j == out->worker) {
            continue;
        }
        bj = ceil((out->cycle_s - m[j].alpha) / m[j].beta);
        bj = bj > (double) m[j].lo ? bj : (double) m[j].lo;
        bj = m[j].hi < b->B && bj > (double) m[j].hi ? (double) m[j].hi : bj;
        need += bj;
    }
    return need < 1e15 ? (long) need : (long) 1e15;
}

int ob_balance_bound(const ob_balance *b, ob_balance_limit *out)
{
    ob_rank_model *m;
    double worst = 1.1;
    int found = 0;

    memset(out, 0, sizeof *out);
    out->worker = -1;
    if (b->W < 2 || NULL == (m = malloc(2 * (size_t) b->W * sizeof *m))) {
        return 0;
    }
    for (int w = 0; w < b->W; w++) {
        m[w] = b->models[w];
        if (!ob_balance_model_of(b, w, &m[w])) {
            free(m);
            return 0;
        }
    }
    for (int w = 0; w < b->W; w++) {
        double cycle, level;

        if (ob_balance_held(b, m, m + b->W, w, &cycle, &level) && cycle / level > worst) {
            worst = cycle / level;
            out->worker = w;
            out->batch = b->plan[w];
            out->cycle_s = cycle;
            out->level_s = level;
            found = 1;
        }
    }
    if (found) {
        out->need = ob_balance_need(b, m, out);
    }
    free(m);
    return found;
}

int ob_balance_model(const ob_balance *b, int w, double *alpha, double *beta)
{
    *alpha = 0.0;
    *beta = 0.0;
    return w >= 0 && w < b->W && ob_estimator_model(&b->est[w], alpha, beta);
}

double ob_quota_cycle_learn(ob_quota_cycle *q, double quota, double wall, double cpu)
{
    double keep, need;

    if (!(quota > 0.0) || cpu < 0.0 || !(wall >= 0.0)) {
        return wall;
    }
    keep = exp(-wall / OB_QUOTA_CYCLE_WINDOW_S);
    q->wall = q->wall * keep + wall;
    q->cpu = q->cpu * keep + cpu;
    need = cpu / quota;
    if (q->cpu > 0.0 && cpu * (q->wall / q->cpu) > need) {
        need = cpu * (q->wall / q->cpu);
    }
    return need;
}
