/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One simulated run: a scenario at P ranks under one planner, the
 * controller fed every rank's noisy timings, and what it reached beside
 * the oracle, the static split and OmniLearn's rule.
 */
#ifndef OB_SIM_RUN_H
#define OB_SIM_RUN_H

#include "sim_options.h"

/* Judged against the best integer plan: what any plan of integers can reach. */
#define OB_SIM_CONVERGED 1.03
#define OB_SIM_RECOVERED 1.05

typedef struct ob_sim_result {
    const ob_sim_scenario *sc;
    ob_sim_planner planner;
    double coll_mean;            /* collectives per decision */
    long coll_max;
    double bytes_mean;           /* bytes per rank per decision */
    double lat_mean_s;           /* emulated decision latency: collectives + one rank's compute */
    double lat_max_s;
    int P;
    long B;
    long steps;
    long change_step;            /* -1: none */
    long decisions;
    long changes;
    double dec_mean_s;
    double dec_max_s;
    long settle;                 /* decisions until within 1.03x for good; -1 never */
    long converge;               /* ... and no longer changing; -1 never */
    double steady;               /* last quarter: mean true step time / oracle */
    double floor;                /* best integer plan / oracle (final models) */
    double nf_steady;            /* the noise floor over the same quarter (ob_sim_noise_floor()) x floor */
    long nf_settle;              /* the decisions the noise floor takes to come within OB_SIM_CONVERGED */
    double statik;               /* equal split / oracle (final models) */
    long recover;                /* steps after the change to within 1.05x for good; -1 never, -2 n/a */
    double ol_steady;
    long ol_excess_max;          /* largest sum b - B over the run */
    long ol_recover;
    double wall_s;
} ob_sim_result;

/**
 * \brief Run scenario \p sc at \p P ranks under \p planner, as \p o asks, into \p res.
 * \return OMNIBATCH_SUCCESS, or a code with ob_last_error().
 */
int ob_sim_run(const ob_sim_opts *o, const ob_sim_scenario *sc, int P, ob_sim_planner planner,
               ob_sim_result *res);

#endif /* OB_SIM_RUN_H */
