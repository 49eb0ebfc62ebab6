/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What a simulator run is asked to do: the scenarios it knows and the
 * options of its command line, each checked with one clear line.
 */
#ifndef OB_SIM_OPTIONS_H
#define OB_SIM_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "sim_random.h"

#define OB_SIM_MAX_RANKS 16
/* Emulated network: per hop of a collective, and per byte. */
#define OB_SIM_DEFAULT_LATENCY 2e-6
#define OB_SIM_DEFAULT_BANDWIDTH 10e9

typedef enum ob_sim_planner {
    OB_SIM_CENTRAL,              /* today: allgather every record, every rank solves all */
    OB_SIM_DISTRIBUTED           /* ob_dist_update over emulated collectives */
} ob_sim_planner;

typedef enum ob_sim_kind {
    OB_SIM_KIND_UNIFORM,
    OB_SIM_KIND_BIMODAL,
    OB_SIM_KIND_LEVEL
} ob_sim_kind;

typedef enum ob_sim_event {
    OB_SIM_EVENT_NONE,
    OB_SIM_EVENT_SLOW10,         /* a random 10% of ranks become 2x slower */
    OB_SIM_EVENT_VANISH          /* one random rank becomes 20x slower */
} ob_sim_event;

typedef struct ob_sim_scenario {
    const char *name;
    ob_sim_kind kind;
    int level;
    ob_sim_event event;
    const char *what;
} ob_sim_scenario;

enum { OB_SIM_NSCENARIOS = 7 };

/** The scenarios, in the order they run and print. */
extern const ob_sim_scenario ob_sim_scenarios[OB_SIM_NSCENARIOS];

typedef struct ob_sim_opts {
    int ranks[OB_SIM_MAX_RANKS];
    int nranks;
    int scenario_on[OB_SIM_NSCENARIOS];
    long steps;
    long big_steps;              /* steps when P > 4096 */
    long batch_per_rank;
    long epoch;                  /* OmniLearn's adjustment interval, steps */
    double change_at;            /* fraction of the run at which the change happens */
    double noise;
    int pool;                    /* --pool: 1 plans on pooled speeds */
    int noise_uniform;           /* 1: uniform in [1 - noise, 1 + noise]; 0: normal, spread noise */
    double alpha;                /* fixed seconds per step of a speed-1 rank */
    double beta;                 /* seconds per sample of a speed-1 rank */
    uint64_t seed;
    long period;
    double gain;
    double deadband;
    double forget;
    long false_steps;            /* > 0: only the false-change count, this many steps per P */
    double spike_rate;           /* its one-step spikes: the share of samples ... */
    double spike_factor;         /* ... this many times slower */
    double level_slow;           /* its CUSUM levels, slow and fast side (<= 0: the library's) */
    double level_fast;
    const char *summary;
    int planner_on[2];           /* by ob_sim_planner */
    int planner_auto;            /* the library's choice by P instead (OMNIBATCH_PLANNER=auto) */
    double latency;              /* seconds per hop of a collective */
    double bandwidth;            /* bytes per second */
} ob_sim_opts;

/**
 * \brief Fill \p o from the command line; on a bad option print one line naming it, its
 *        value and what is allowed, and exit with status 2 (--help: the usage, status 0).
 */
void ob_sim_parse_args(int argc, char **argv, ob_sim_opts *o);

/** \brief One timing's multiplicative noise, of the law and spread \p o asks for. */
double ob_sim_noise_of(const ob_sim_opts *o, ob_sim_rng *r);

#endif /* OB_SIM_OPTIONS_H */
