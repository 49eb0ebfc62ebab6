/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The false-change count (sim_false.h).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ob_error.h"
#include "ob_estimator.h"
#include "sim_clock.h"
#include "sim_false.h"
#include "sim_random.h"
#include "sim_speeds.h"

/* Steps a false-change count lets the estimators settle before counting
 * (the first samples of a cold start may themselves be outliers). */
#define OB_SIM_FALSE_WARMUP 20
/* Every this many steps the held plan moves a rank's batch by 10%. */
#define OB_SIM_FALSE_MOVE 100

/* What a false-change count found: the changes each side confirmed, and its levels. */
typedef struct ob_sim_false {
    long slow;                   /* changes to a slower speed */
    long fast;                   /* and to a faster one */
    double level_slow;           /* the CUSUM's levels the estimators ran at */
    double level_fast;
    double wall;                 /* seconds the count took */
} ob_sim_false;

/* --false-changes: \p steps noisy steps of P estimators at a held plan;
 * returns the lasting changes they confirmed after the warm-up (-1: out of memory). */
static long ob_sim_false_changes(const ob_sim_opts *o, int P, long steps, ob_sim_false *res)
{
    const double t0 = ob_sim_now();
    ob_estimator *est = malloc((size_t) P * sizeof *est);
    double *speed = malloc((size_t) P * sizeof *speed);
    ob_sim_rng rng;
    long changes = 0;

    if (NULL == est || NULL == speed) {
        free(est);
        free(speed);
        return -1;
    }
    ob_sim_rng_seed(&rng, o->seed * UINT64_C(1000003) + (uint64_t) P);
    if (OMNIBATCH_SUCCESS != ob_sim_speeds_uniform(&rng, P, 0.25, 1.0, speed)) {
        free(est);
        free(speed);
        return -1;
    }
    for (int i = 0; i < P; i++) {
        ob_estimator_init(&est[i], o->forget);
        ob_estimator_set_ranks(&est[i], P);
        ob_estimator_set_levels(&est[i], o->level_slow, o->level_fast);
    }
    res->level_slow = est[0].cusum_limit;
    res->level_fast = est[0].cusum_limit_fast;
    res->slow = res->fast = 0;
    for (long k = 0; k < steps; k++) {
        for (int i = 0; i < P; i++) {
            /* The plan's batch: proportional to the speed, moved now and then. */
            const double b = floor((double) o->batch_per_rank * speed[i] * 1.6
                                   * (0 == (k / OB_SIM_FALSE_MOVE + (long) i) % 2 ? 1.0 : 1.1)) + 1.0;
            double t = (o->alpha + o->beta * b) / speed[i] * ob_sim_noise_of(o, &rng);

            if (ob_sim_rng_uniform(&rng) < o->spike_rate) {
                t *= o->spike_factor;
            }
            const long faster = est[i].changes_faster;

            if (OB_SAMPLE_CHANGE == ob_estimator_add(&est[i], b, t) && k >= OB_SIM_FALSE_WARMUP) {
                changes++;
                if (est[i].changes_faster > faster) {
                    res->fast++;
                } else {
                    res->slow++;
                }
            }
        }
    }
    free(est);
    free(speed);
    res->wall = ob_sim_now() - t0;
    return changes;
}

int ob_sim_false_main(const ob_sim_opts *o)
{
    int status = 0;

    for (int j = 0; j < o->nranks; j++) {
        ob_sim_false res = { 0, 0, 0.0, 0.0, 0.0 };
        const long n = ob_sim_false_changes(o, o->ranks[j], o->false_steps, &res);

        if (n < 0) {
            fprintf(stderr, "simulate: out of memory at P=%d\n", o->ranks[j]);
            return 1;
        }
        printf("false changes: P=%d: %ld in %ld steps (%.3g rank-steps) of %s noise %.3g and %.3g%% "
               "one-step spikes of %gx, %.1f s; %ld slower, %ld faster (levels %g slow, %g fast)\n",
               o->ranks[j], n, o->false_steps, (double) o->false_steps * (double) o->ranks[j],
               o->noise_uniform ? "uniform" : "normal", o->noise, 100.0 * o->spike_rate, o->spike_factor,
               res.wall, res.slow, res.fast, res.level_slow, res.level_fast);
        status |= n > 0;
    }
    return status;
}
