/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Speed schedules (see schedule.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "rng.h"
#include "schedule.h"

#define RAMP_PHASES 7

struct hetsgd_schedule {
    hetsgd_schedule_kind kind;
    int P;
    long total_steps;
    double *base;                    /* P speeds, the largest 1 */
    int vanish_rank;
    hetsgd_slowdown_event *events;
    int nevents;
    double *jitter;                  /* jitter: total_steps x P factors >= 1, step-major */
};

/* Roles of ranks in OmniLearn's levels and their cores per level. */
enum { ROLE_MIDDLE = 0, ROLE_SLOW = 1, ROLE_FAST = 2 };
static const int ramp_levels[RAMP_PHASES] = { 1, 2, 4, 8, 4, 2, 1 };
static const int role_pattern[4] = { ROLE_MIDDLE, ROLE_MIDDLE, ROLE_SLOW, ROLE_FAST };
#define RAMP_MAX_CORES 32.0

static int level_cores(int level, int role)
{
    static const int cores[4][3] = {
        /* middle, slow, fast */
        { 12, 12, 12 },          /* HL1 */
        { 12, 8, 16 },           /* HL2 */
        { 9, 6, 24 },            /* HL4 */
        { 6, 4, 32 }             /* HL8 */
    };
    int row = 1 == level ? 0 : 2 == level ? 1 : 4 == level ? 2 : 3;

    return cores[row][role];
}

static int ramp_role(int rank, int P)
{
    return P >= 4 ? role_pattern[rank % 4] : role_pattern[4 - P + rank];
}

int hetsgd_ramp_level(int phase)
{
    return phase < 0 ? 1 : phase >= RAMP_PHASES ? 1 : ramp_levels[phase];
}

const char *hetsgd_schedule_name(hetsgd_schedule_kind kind)
{
    switch (kind) {
    case HETSGD_SCHEDULE_RAMP:
        return "ramp";
    case HETSGD_SCHEDULE_TRANSIENT:
        return "transient";
    case HETSGD_SCHEDULE_VANISH:
        return "vanish";
    case HETSGD_SCHEDULE_JITTER:
        return "jitter";
    case HETSGD_SCHEDULE_NONE:
    default:
        return "none";
    }
}

static int draw_events(hetsgd_schedule *s, uint64_t seed)
{
    /* A stream of its own, so the events do not depend on how the model was
     * initialised from the same seed. */
    uint64_t state = seed ^ UINT64_C(0x7472616E7369656E);
    long pos = hetsgd_rng_range(&state, HETSGD_TRANSIENT_MIN_STEPS, HETSGD_TRANSIENT_MAX_STEPS);
    int capacity = 0;

    while (pos < s->total_steps) {
        hetsgd_slowdown_event e;

        e.first = pos;
        e.rank = (int) hetsgd_rng_range(&state, 0, s->P - 1);
        e.factor = HETSGD_TRANSIENT_MIN_FACTOR +
            (HETSGD_TRANSIENT_MAX_FACTOR - HETSGD_TRANSIENT_MIN_FACTOR) * hetsgd_rng_uniform(&state);
        e.steps = hetsgd_rng_range(&state, HETSGD_TRANSIENT_MIN_STEPS, HETSGD_TRANSIENT_MAX_STEPS);
        if (s->nevents == capacity) {
            hetsgd_slowdown_event *grown;

            capacity = 0 == capacity ? 16 : 2 * capacity;
            grown = realloc(s->events, (size_t) capacity * sizeof *grown);
            if (NULL == grown) {
                return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate %d slowdown events", capacity);
            }
            s->events = grown;
        }
        s->events[s->nevents++] = e;
        pos = e.first + e.steps +
            hetsgd_rng_range(&state, HETSGD_TRANSIENT_MIN_STEPS, HETSGD_TRANSIENT_MAX_STEPS);
    }
    return OMNIBATCH_SUCCESS;
}

/* A factor in [HETSGD_JITTER_MIN_FACTOR, HETSGD_JITTER_MAX_FACTOR]. */
static double jitter_factor(uint64_t *state)
{
    return HETSGD_JITTER_MIN_FACTOR +
        (HETSGD_JITTER_MAX_FACTOR - HETSGD_JITTER_MIN_FACTOR) * hetsgd_rng_uniform(state);
}

/* Slow worker: one random rank per step. */
static void jitter_slow_worker(hetsgd_schedule *s, uint64_t *state)
{
    for (long k = 0; k < s->total_steps; k++) {
        int rank = (int) hetsgd_rng_range(state, 0, s->P - 1);

        s->jitter[k * s->P + rank] *= jitter_factor(state);
    }
}

/* Disrupted machine: every rank of a random machine, for a while, now and then. */
static void jitter_disrupted_machine(hetsgd_schedule *s, uint64_t *state)
{
    const int machines = (s->P + HETSGD_JITTER_MACHINE - 1) / HETSGD_JITTER_MACHINE;
    long k = hetsgd_rng_range(state, HETSGD_JITTER_MIN_GAP, HETSGD_JITTER_MAX_GAP);

    while (k < s->total_steps) {
        const int first = HETSGD_JITTER_MACHINE * (int) hetsgd_rng_range(state, 0, machines - 1);
        const long steps = hetsgd_rng_range(state, HETSGD_JITTER_MIN_DISRUPTION, HETSGD_JITTER_MAX_DISRUPTION);
        const double factor = jitter_factor(state);

        for (long j = k; j < k + steps && j < s->total_steps; j++) {
            for (int i = first; i < first + HETSGD_JITTER_MACHINE && i < s->P; i++) {
                s->jitter[j * s->P + i] *= factor;
            }
        }
        k += steps + hetsgd_rng_range(state, HETSGD_JITTER_MIN_GAP, HETSGD_JITTER_MAX_GAP);
    }
}

/* Power-law delays: a Pareto factor per rank and step, by inversion (1 - u is in (0, 1]). */
static void jitter_power_law(hetsgd_schedule *s, uint64_t *state)
{
    for (long j = 0; j < s->total_steps * s->P; j++) {
        double x = pow(1.0 - hetsgd_rng_uniform(state), -1.0 / HETSGD_JITTER_PARETO_SHAPE);

        s->jitter[j] *= x < HETSGD_JITTER_PARETO_CAP ? x : HETSGD_JITTER_PARETO_CAP;
    }
}

/* The jitter's factors, each pattern from a stream of its own so that one
 * pattern's draws do not shift another's. */
static int draw_jitter(hetsgd_schedule *s, uint64_t seed)
{
    uint64_t slow = seed ^ UINT64_C(0x736c6f77776f726b);
    uint64_t machine = seed ^ UINT64_C(0x6469737275707465);
    uint64_t power = seed ^ UINT64_C(0x706f7765726c6177);

    if (s->total_steps > HETSGD_JITTER_MAX_FACTORS / s->P) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--schedule jitter: %ld steps of %d ranks: expected at most %ld "
                       "steps x ranks", s->total_steps, s->P, (long) HETSGD_JITTER_MAX_FACTORS);
    }
    s->jitter = malloc((size_t) (s->total_steps * s->P) * sizeof *s->jitter);
    if (NULL == s->jitter) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the jitter of %ld steps", s->total_steps);
    }
    for (long j = 0; j < s->total_steps * s->P; j++) {
        s->jitter[j] = 1.0;
    }
    jitter_slow_worker(s, &slow);
    jitter_disrupted_machine(s, &machine);
    jitter_power_law(s, &power);
    return OMNIBATCH_SUCCESS;
}

int hetsgd_schedule_create(hetsgd_schedule_kind kind, int P, const double *base, long total_steps,
                           uint64_t seed, hetsgd_schedule **out)
{
    hetsgd_schedule *s;
    double top = 0.0;
    int rc = OMNIBATCH_SUCCESS;

    *out = NULL;
    if (P < 1 || total_steps < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "P=%d, total_steps=%ld: expected both >= 1", P, total_steps);
    }
    if (kind < HETSGD_SCHEDULE_NONE || kind > HETSGD_SCHEDULE_JITTER) {
        return ob_fail(OMNIBATCH_ERR_ARG, "schedule kind %d: expected none, ramp, transient, vanish or jitter",
                       (int) kind);
    }
    for (int i = 0; i < P; i++) {
        if (!(base[i] > 0.0)) {
            return ob_fail(OMNIBATCH_ERR_ARG, "speed of rank %d is %g: expected > 0", i, base[i]);
        }
        top = base[i] > top ? base[i] : top;
    }
    s = calloc(1, sizeof *s);
    if (NULL == s || NULL == (s->base = malloc((size_t) P * sizeof(double)))) {
        free(s);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate a schedule for %d ranks", P);
    }
    s->kind = kind;
    s->P = P;
    s->total_steps = total_steps;
    for (int i = 0; i < P; i++) {
        s->base[i] = base[i] / top;
        if (s->base[i] > s->base[s->vanish_rank]) {
            s->vanish_rank = i;
        }
    }
    if (HETSGD_SCHEDULE_TRANSIENT == kind) {
        rc = draw_events(s, seed);
    } else if (HETSGD_SCHEDULE_JITTER == kind) {
        rc = draw_jitter(s, seed);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        hetsgd_schedule_destroy(s);
        return rc;
    }
    *out = s;
    return OMNIBATCH_SUCCESS;
}

void hetsgd_schedule_destroy(hetsgd_schedule *s)
{
    if (NULL == s) {
        return;
    }
    free(s->base);
    free(s->events);
    free(s->jitter);
    free(s);
}

void hetsgd_schedule_speeds(const hetsgd_schedule *s, long step, double *speeds)
{
    if (step >= s->total_steps) {
        step = s->total_steps - 1;
    }
    if (step < 0) {
        step = 0;
    }
    if (HETSGD_SCHEDULE_RAMP == s->kind) {
        int phase = (int) (step * RAMP_PHASES / s->total_steps);
        int level = hetsgd_ramp_level(phase);

        for (int i = 0; i < s->P; i++) {
            speeds[i] = level_cores(level, ramp_role(i, s->P)) / RAMP_MAX_CORES;
        }
        return;
    }
    memcpy(speeds, s->base, (size_t) s->P * sizeof(double));
    if (HETSGD_SCHEDULE_VANISH == s->kind && step >= s->total_steps / 3 &&
        step < 2 * s->total_steps / 3) {
        speeds[s->vanish_rank] /= HETSGD_VANISH_FACTOR;
    }
    if (HETSGD_SCHEDULE_TRANSIENT == s->kind) {
        for (int e = 0; e < s->nevents && s->events[e].first <= step; e++) {
            if (step < s->events[e].first + s->events[e].steps) {
                speeds[s->events[e].rank] /= s->events[e].factor;
            }
        }
    }
    if (HETSGD_SCHEDULE_JITTER == s->kind) {
        for (int i = 0; i < s->P; i++) {
            speeds[i] /= s->jitter[step * s->P + i];
        }
    }
}

int hetsgd_schedule_changes_at(const hetsgd_schedule *s, long step)
{
    int changed = 0;
    double *a;
    double *b;

    if (step <= 0) {
        return 1;
    }
    a = malloc(2 * (size_t) s->P * sizeof(double));
    if (NULL == a) {
        return 1;                /* re-planning when unsure is safe */
    }
    b = a + s->P;
    hetsgd_schedule_speeds(s, step - 1, a);
    hetsgd_schedule_speeds(s, step, b);
    for (int i = 0; i < s->P; i++) {
        changed |= a[i] != b[i];
    }
    free(a);
    return changed;
}

double hetsgd_schedule_peak_demand(const hetsgd_schedule *s, const int *ranks, int n)
{
    double *speeds = malloc((size_t) s->P * sizeof(double));
    double peak = 0.0;

    if (NULL == speeds) {
        return (double) s->P;    /* every rank at full speed bounds any schedule */
    }
    for (long k = 0; k < s->total_steps; k++) {
        double sum = 0.0;

        hetsgd_schedule_speeds(s, k, speeds);
        for (int i = 0; i < (NULL == ranks ? s->P : n); i++) {
            sum += speeds[NULL == ranks ? i : ranks[i]];
        }
        peak = sum > peak ? sum : peak;
    }
    free(speeds);
    return peak;
}

const hetsgd_slowdown_event *hetsgd_schedule_events(const hetsgd_schedule *s, int *count)
{
    *count = s->nevents;
    return s->events;
}
