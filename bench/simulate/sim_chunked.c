/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A run's steps worked in chunks with stealing, beside the plan alone
 * (sim_chunked.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "sim_chunked.h"
#include "sim_steal.h"
#include "sim_work.h"

struct ob_sim_chunked {
    const ob_sim_opts *o;
    int P;
    long B;
    long steps;
    ob_sim_stealer *stealer;
    ob_sim_work *w;
    long *equal;                 /* the equal split */
    /* per step, over its per-step oracle */
    double *steal;
    double *plain;
    double *statik;
    double *moved;               /* / B */
    double *chunks;              /* per rank */
    double *floor;               /* the per-step oracle (whole samples) / the same in real numbers */
    long once;                   /* samples found done exactly once, over the run's steps */
};

int ob_sim_chunked_new(const ob_sim_opts *o, int P, long B, long steps, ob_sim_chunked **out)
{
    const ob_sim_steal_params sp = {
        { o->chunk_floor, 1, o->chunk_divisor }, (int) o->node_size, (int) o->helpers, (int) o->asks, o->lat_node, o->lat_net,
        o->chunk_cost, o->floor_time, o->answer_at_once, o->seed
    };
    ob_sim_chunked *c = calloc(1, sizeof *c);
    int rc;

    *out = NULL;
    if (NULL == c) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: P=%d", P);
    }
    c->o = o;
    c->P = P;
    c->B = B;
    c->steps = steps;
    rc = ob_sim_stealer_new(P, B, &sp, &c->stealer);
    c->w = malloc((size_t) P * sizeof *c->w);
    c->equal = malloc((size_t) P * sizeof *c->equal);
    c->steal = malloc((size_t) steps * sizeof *c->steal);
    c->plain = malloc((size_t) steps * sizeof *c->plain);
    c->statik = malloc((size_t) steps * sizeof *c->statik);
    c->moved = malloc((size_t) steps * sizeof *c->moved);
    c->chunks = malloc((size_t) steps * sizeof *c->chunks);
    c->floor = malloc((size_t) steps * sizeof *c->floor);
    if (OMNIBATCH_SUCCESS == rc && (NULL == c->w || NULL == c->equal || NULL == c->steal || NULL == c->plain ||
                                    NULL == c->statik || NULL == c->moved || NULL == c->chunks || NULL == c->floor)) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: P=%d", P);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        ob_sim_chunked_free(c);
        return rc;
    }
    for (int i = 0; i < P; i++) {
        c->equal[i] = B / P + (i < B % P ? 1 : 0);
    }
    *out = c;
    return OMNIBATCH_SUCCESS;
}

void ob_sim_chunked_free(ob_sim_chunked *c)
{
    if (NULL == c) {
        return;
    }
    ob_sim_stealer_free(c->stealer);
    free(c->w);
    free(c->equal);
    free(c->steal);
    free(c->plain);
    free(c->statik);
    free(c->moved);
    free(c->chunks);
    free(c->floor);
    free(c);
}

/* This step's true work of every rank; the event's ranks at their old
 * speed until o->slow_at of their planned step, then factor times slower. */
static void ob_sim_chunked_work(ob_sim_chunked *c, const ob_rank_model *truth, const double *noise, const long *plan,
                                const ob_sim_event_at *ev)
{
    for (int i = 0; i < c->P; i++) {
        c->w[i] = (ob_sim_work) { truth[i].alpha * noise[i], truth[i].beta * noise[i], HUGE_VAL, 1.0,
                                  truth[i].alpha, truth[i].beta };
    }
    for (int k = 0; k < ev->n; k++) {
        ob_sim_work *w = &c->w[ev->idx[k]];
        const long b = plan[ev->idx[k]];
        w->alpha /= ev->factor;
        w->beta /= ev->factor;
        w->alpha_hint /= ev->factor;
        w->beta_hint /= ev->factor;
        w->slow_at = c->o->slow_at * (w->alpha + w->beta * (double) b);
        w->slow_factor = ev->factor;
    }
}

int ob_sim_chunked_step(ob_sim_chunked *c, long k, const ob_rank_model *truth, const double *noise, const long *plan,
                        const ob_sim_event_at *ev, double horizon)
{
    ob_sim_steal_result r;
    double oracle;
    double real;
    int rc;

    ob_sim_chunked_work(c, truth, noise, plan, ev);
    rc = ob_sim_work_optimum(c->w, c->P, c->B, 1, &oracle);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_sim_work_optimum(c->w, c->P, c->B, 0, &real);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_sim_steal_step(c->stealer, plan, c->w, horizon, &r);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    c->steal[k] = r.time / oracle;
    c->plain[k] = ob_sim_work_time(c->w, c->P, plan) / oracle;
    c->statik[k] = ob_sim_work_time(c->w, c->P, c->equal) / oracle;
    c->moved[k] = (double) r.moved / (double) c->B;
    c->chunks[k] = (double) r.chunks / (double) c->P;
    c->floor[k] = oracle / real;
    c->once += c->B;             /* ob_sim_steal_step() fails a step with a sample not done once */
    return OMNIBATCH_SUCCESS;
}

static double ob_sim_mean(const double *x, long from, long to)
{
    double sum = 0.0;
    for (long k = from; k < to; k++) {
        sum += x[k];
    }
    return sum / (double) (to - from);
}

void ob_sim_chunked_conclude(const ob_sim_chunked *c, long change, ob_sim_result *res)
{
    const long q = c->steps - c->steps / 4;

    res->steal_steady = ob_sim_mean(c->steal, q, c->steps);
    res->plain_steady = ob_sim_mean(c->plain, q, c->steps);
    res->static_steady = ob_sim_mean(c->statik, q, c->steps);
    res->moved = ob_sim_mean(c->moved, q, c->steps);
    res->chunks = ob_sim_mean(c->chunks, q, c->steps);
    res->step_floor = ob_sim_mean(c->floor, q, c->steps);
    res->steal_event = change >= 0 ? c->steal[change] : -1.0;
    res->plain_event = change >= 0 ? c->plain[change] : -1.0;
    res->steal_once = c->once;
}
