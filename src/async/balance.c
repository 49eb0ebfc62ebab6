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
    if (p->max_total < 0 || p->max_total > OB_PLAN_MAX_BATCH) {
        return ob_fail(OMNIBATCH_ERR_ARG, "max_total=%ld: expected 0 (the global batch) or up to %ld",
                       p->max_total, (long) OB_PLAN_MAX_BATCH);
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
    b->total = B;
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

/* Worker w's least batch: its lower bound in granules, at least one. */
static long ob_balance_least(const ob_balance *b, const ob_rank_model *m)
{
    const long g = b->p.granularity > 1 ? b->p.granularity : 1;
    const long least = (m->lo + g - 1) / g * g;

    return least > g ? least : g;
}

/* The sum of batches at which every worker but \p w could cycle in \p cycle_s
 * beside w's \p batch: each other's batch that lasts as long, within its
 * bounds (its largest counted only where \p hi_below is 0 or it is below
 * it). */
static double ob_balance_lasting(const ob_balance *b, const ob_rank_model *m, int w, long batch,
                                 double cycle_s, long hi_below)
{
    double need = (double) batch;

    for (int j = 0; j < b->W; j++) {
        double bj;

        if (j == w) {
            continue;
        }
        bj = ceil((cycle_s - m[j].alpha) / m[j].beta);
        bj = bj > (double) m[j].lo ? bj : (double) m[j].lo;
        bj = (0 == hi_below || m[j].hi < hi_below) && bj > (double) m[j].hi ? (double) m[j].hi : bj;
        need += bj;
    }
    return need;
}

/* The sum the batches should have on models \p m: B, or where a worker at
 * its least batch cycles longer than the others could sharing the rest of
 * B, the sum at which all last that cycle, at most p.max_total and the
 * workers' largest batches. */
static long ob_balance_total_for(const ob_balance *b, const ob_rank_model *m)
{
    double cycle = 0.0, need;
    long most = 0;
    int held = 0;

    if (b->p.max_total <= b->B) {
        return b->B;
    }
    for (int w = 0; w < b->W; w++) {
        const double c = m[w].alpha + m[w].beta * (double) ob_balance_least(b, &m[w]);

        held = c > cycle ? w : held;
        cycle = c > cycle ? c : cycle;
        most += m[w].hi;
    }
    need = ob_balance_lasting(b, m, held, ob_balance_least(b, &m[held]), cycle, 0);
    most = most < b->p.max_total ? most : b->p.max_total;
    return need <= (double) b->B ? b->B : need >= (double) most ? most : (long) need;
}

/* The plan rescaled to sum to \p total, each worker's share kept (within its
 * bounds): 1 when it was. */
static int ob_balance_regrow(ob_balance *b, long total)
{
    double *weights = malloc((size_t) b->W * sizeof *weights);
    int rc = OMNIBATCH_ERR_NOMEM;

    if (NULL != weights) {
        for (int w = 0; w < b->W; w++) {
            weights[w] = (double) b->plan[w];
        }
        rc = ob_plan_proportional(b->models, b->W, total, b->p.granularity, weights, b->next);
        free(weights);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return 0;
    }
    memcpy(b->plan, b->next, (size_t) b->W * sizeof *b->plan);
    b->total = total;
    return 1;
}

/* One decision on the models learnt so far: 1 when the plan moved.  The
 * sum moves first where it should (a new total past the dead-band, or back
 * to B), then the batches toward the best split of it. */
static int ob_balance_decide(ob_balance *b)
{
    ob_planner_params pp;
    long total;
    int moved = 0;

    if (!ob_balance_models(b)) {
        return 0;
    }
    total = ob_balance_total_for(b, b->models);
    if (total != b->total
        && (total == b->B || fabs((double) (total - b->total)) > b->p.deadband * (double) b->total)) {
        moved = ob_balance_regrow(b, total);
    }
    pp.gain = b->p.gain;
    pp.deadband = b->p.deadband;
    pp.granularity = b->p.granularity;
    /* The models are valid and the plan is one of these bounds: a failure
     * here is out of memory, and the plan then stays as it is. */
    if (OMNIBATCH_SUCCESS == ob_plan_decide(&pp, b->models, b->W, b->total, b->plan, b->next, &b->last)) {
        b->decisions++;
        if (b->last.changed) {
            memcpy(b->plan, b->next, (size_t) b->W * sizeof *b->plan);
            moved = 1;
        }
    }
    b->changes += moved;
    return moved;
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
    long sum = 0;
    int rc;

    for (int w = 0; w < b->W; w++) {
        sum += plan[w] > 0 && plan[w] <= OB_PLAN_MAX_BATCH ? plan[w] : 0;
    }
    /* A sum other than B is checked as B (the line names the sum at fault)
     * unless the caller allowed it. */
    sum = sum > b->B && sum <= b->p.max_total ? sum : b->B;
    rc = ob_plan_check(b->models, b->W, sum, plan);
    if (OMNIBATCH_SUCCESS == rc) {
        memcpy(b->plan, plan, (size_t) b->W * sizeof *b->plan);
        b->total = sum;
    }
    return rc;
}

/* Worker w held at its least batch (its lower bound, or one granule where
 * that is larger): its cycle there, and the others' level sharing the rest
 * of B (models \p m of all, \p others scratch of W - 1). */
static int ob_balance_held(const ob_balance *b, const ob_rank_model *m, ob_rank_model *others, int w,
                           double *cycle, double *level)
{
    int n = 0;

    if (b->plan[w] > ob_balance_least(b, &m[w])) {
        return 0;
    }
    for (int j = 0; j < b->W; j++) {
        if (j != w) {
            others[n++] = m[j];
        }
    }
    *cycle = m[w].alpha + m[w].beta * (double) b->plan[w];
    return OMNIBATCH_SUCCESS == ob_plan_optimum(others, n, b->total - b->plan[w], NULL, level) && *level > 0.0;
}

/* The global batch at which every worker could cycle in out->cycle_s: the
 * bound worker's batch and each other's that lasts as long, within its
 * bounds (a largest batch counts where it is below B). */
static long ob_balance_need(const ob_balance *b, const ob_rank_model *m, const ob_balance_limit *out)
{
    const double need = ob_balance_lasting(b, m, out->worker, out->batch, out->cycle_s, b->B);

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
