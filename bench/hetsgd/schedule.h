/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * How fast each emulated rank is at each global step.  A speed is relative
 * (1 = the machine's real speed, 0.5 = a step takes twice its measured
 * compute); every rank evaluates the same schedule from the same seed, so
 * all agree on it without talking.
 *
 *   none       the base speeds (--speeds) throughout.
 *   ramp       OmniLearn's heterogeneity levels over the run in seven equal
 *              phases, HL1 -> HL2 -> HL4 -> HL8 -> HL4 -> HL2 -> HL1.  A level
 *              is a split of cores: for 4 ranks HL1 = 12,12,12,12, HL2 =
 *              12,12,8,16, HL4 = 9,9,6,24, HL8 = 6,6,4,32 (the ratio of the
 *              fastest to the slowest rank is the level's number).  Speeds
 *              are cores / 32, so the total capacity stays that of 48 cores
 *              and the fastest rank of HL8 runs at the machine's speed.
 *              Other P: ranks play the roles middle, middle, slow, fast
 *              (rank i takes role i mod 4); with P < 4 the last P roles.
 *   transient  FlexRR-style stragglers on top of the base speeds: after a
 *              gap, one random rank is slowed by a random factor in [2, 5]
 *              for a random 20 to 60 steps, then the next gap of 20 to 60
 *              steps, and so on; one event at a time.
 *   vanish     Proteus-style: the fastest base rank (lowest index on ties)
 *              runs 20 times slower during the middle third of the run,
 *              then returns.
 *   jitter     FlexRR's injected straggler patterns (Harlap et al., SoCC
 *              2016), all three at once on top of the base speeds, so every
 *              step has speeds of its own: a random rank slowed 2-5x in each
 *              step (slow worker); now and then every rank of one machine
 *              (HETSGD_JITTER_MACHINE ranks in a row) slowed 2-5x for 5-20
 *              steps, 10-40 steps apart (disrupted machine); and every rank
 *              slowed in every step by a Pareto factor of shape 5, at least
 *              1 and at most 10 (power-law delays: median 1.15x, one step in
 *              32 at 2x or more, one in 3125 at 5x or more).  A rank's factors
 *              multiply.
 */
#ifndef HETSGD_SCHEDULE_H
#define HETSGD_SCHEDULE_H

#include <stdint.h>

typedef enum hetsgd_schedule_kind {
    HETSGD_SCHEDULE_NONE = 0,
    HETSGD_SCHEDULE_RAMP = 1,
    HETSGD_SCHEDULE_TRANSIENT = 2,
    HETSGD_SCHEDULE_VANISH = 3,
    HETSGD_SCHEDULE_JITTER = 4
} hetsgd_schedule_kind;

/* Bounds of the transient events. */
#define HETSGD_TRANSIENT_MIN_FACTOR 2.0
#define HETSGD_TRANSIENT_MAX_FACTOR 5.0
#define HETSGD_TRANSIENT_MIN_STEPS 20
#define HETSGD_TRANSIENT_MAX_STEPS 60
/* How much slower a vanishing rank runs. */
#define HETSGD_VANISH_FACTOR 20.0
/* The jitter's patterns (FlexRR's slow worker, disrupted machine, power-law delays). */
#define HETSGD_JITTER_MIN_FACTOR 2.0
#define HETSGD_JITTER_MAX_FACTOR 5.0
#define HETSGD_JITTER_MACHINE 2          /* ranks of one emulated machine */
#define HETSGD_JITTER_MIN_DISRUPTION 5   /* steps a disruption lasts */
#define HETSGD_JITTER_MAX_DISRUPTION 20
#define HETSGD_JITTER_MIN_GAP 10         /* steps between disruptions */
#define HETSGD_JITTER_MAX_GAP 40
#define HETSGD_JITTER_PARETO_SHAPE 5.0
#define HETSGD_JITTER_PARETO_CAP 10.0
/* Most steps x ranks of jitter factors drawn at create (8 bytes each). */
#define HETSGD_JITTER_MAX_FACTORS (1L << 27)

/** One transient slowdown: rank runs factor times slower during [first, first + steps). */
typedef struct hetsgd_slowdown_event {
    long first;
    long steps;
    int rank;
    double factor;
} hetsgd_slowdown_event;

typedef struct hetsgd_schedule hetsgd_schedule;

/**
 * \brief Build the schedule of a run of \p total_steps steps over \p P ranks.
 * \param[in] base  P relative speeds > 0 (ignored by ramp); divided by their maximum, so the
 *                  fastest base rank runs at speed 1.
 * \param[in] seed  drives the transient events and the jitter.
 */
int hetsgd_schedule_create(hetsgd_schedule_kind kind, int P, const double *base, long total_steps,
                           uint64_t seed, hetsgd_schedule **out);

/** \brief Free a schedule (NULL is fine). */
void hetsgd_schedule_destroy(hetsgd_schedule *s);

/** \brief Every rank's speed (in (0, 1]) at global step \p step (steps past the end keep the last). */
void hetsgd_schedule_speeds(const hetsgd_schedule *s, long step, double *speeds);

/** \brief 1 if some rank's speed at \p step differs from step - 1 (always 1 at step 0). */
int hetsgd_schedule_changes_at(const hetsgd_schedule *s, long step);

/**
 * \brief The largest sum of the speeds of \p n ranks at any step: the cores the ranks that share
 *        a node demand at the busiest point of the run.
 * \param[in] ranks the ranks (NULL: all P, and n is ignored).
 */
double hetsgd_schedule_peak_demand(const hetsgd_schedule *s, const int *ranks, int n);

/** \brief The transient events (NULL and 0 for other kinds). */
const hetsgd_slowdown_event *hetsgd_schedule_events(const hetsgd_schedule *s, int *count);

/** \brief "none", "ramp", "transient", "vanish" or "jitter". */
const char *hetsgd_schedule_name(hetsgd_schedule_kind kind);

/** \brief The HL level (1, 2, 4 or 8) of ramp phase \p phase (0..6). */
int hetsgd_ramp_level(int phase);

#endif /* HETSGD_SCHEDULE_H */
