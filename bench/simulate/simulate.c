/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The controller alone, without MPI, at up to tens of thousands of
 * simulated ranks.  Rank i's true step time on b samples is
 * t_i(b) = (alpha + beta * b) / s_i for a speed s_i drawn from a scenario;
 * every measured time carries multiplicative noise.  Each rank feeds its own
 * estimator; every period steps the P records go to ob_controller_update()
 * exactly as the API exchanges them, and the run is compared with the
 * oracle (the planner's optimum on the true models), with the best integer
 * plan, with the static equal split, and with OmniLearn's rule run side by
 * side on the same ranks.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ob_config.h"
#include "ob_controller.h"
#include "ob_error.h"
#include "ob_estimator.h"
#include "ob_planner.h"
#include "ob_planner_dist.h"
#include "sim_dist.h"
#include "sim_metrics.h"
#include "sim_omnilearn.h"
#include "sim_oracle.h"
#include "sim_random.h"
#include "sim_speeds.h"

/* Judged against the best integer plan: what any plan of integers can reach. */
#define OB_SIM_CONVERGED 1.03
#define OB_SIM_RECOVERED 1.05
#define OB_SIM_MAX_RANKS 16
/* Emulated network: per hop of a collective, and per byte. */
#define OB_SIM_DEFAULT_LATENCY 2e-6
#define OB_SIM_DEFAULT_BANDWIDTH 10e9
/* One rank's share of a decision is timed as the least of this many runs. */
#define OB_SIM_REPLAYS 3

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

static const ob_sim_scenario ob_sim_scenarios[] = {
    { "uniform", OB_SIM_KIND_UNIFORM, 0, OB_SIM_EVENT_NONE, "speeds uniform in [0.25, 1]" },
    { "bimodal", OB_SIM_KIND_BIMODAL, 0, OB_SIM_EVENT_NONE, "10% of ranks 20x faster (GPU), the rest 1 (CPU)" },
    { "hl2", OB_SIM_KIND_LEVEL, 2, OB_SIM_EVENT_NONE, "OmniLearn HL2: cores 12,12,8,16 tiled" },
    { "hl4", OB_SIM_KIND_LEVEL, 4, OB_SIM_EVENT_NONE, "OmniLearn HL4: cores 9,9,6,24 tiled" },
    { "hl8", OB_SIM_KIND_LEVEL, 8, OB_SIM_EVENT_NONE, "OmniLearn HL8: cores 6,6,4,32 tiled" },
    { "slow10", OB_SIM_KIND_UNIFORM, 0, OB_SIM_EVENT_SLOW10, "uniform, then a random 10% of ranks 2x slower" },
    { "vanish", OB_SIM_KIND_UNIFORM, 0, OB_SIM_EVENT_VANISH, "uniform, then one random rank 20x slower" },
};
#define OB_SIM_NSCENARIOS ((int) (sizeof ob_sim_scenarios / sizeof ob_sim_scenarios[0]))

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

/* The yardsticks of one phase (the true models between changes). */
typedef struct ob_sim_phase {
    double oracle;               /* ob_plan_optimum's T */
    double integer;              /* best integer plan */
    double statik;               /* equal split */
} ob_sim_phase;

static double ob_sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void ob_sim_usage(FILE *f)
{
    fputs("usage: simulate [options]\n"
          "  --ranks LIST        simulated rank counts (default 4,16,256,4096,65536)\n"
          "  --planner P         central, distributed, both (default: side by side) or auto (the\n"
          "                      library's choice: distributed from 256 ranks on)\n"
          "  --pool on|off       plan on pooled speeds (ob_pool.h; default on) or on each rank's own\n"
          "  --latency S         emulated seconds per hop of a collective (default 2e-6)\n"
          "  --bandwidth B       emulated bytes per second of a collective (default 1e10)\n"
          "  --scenarios LIST    of uniform,bimodal,hl2,hl4,hl8,slow10,vanish (default all)\n"
          "  --steps N           steps per run (default 240)\n"
          "  --big-steps N       steps per run above 4096 ranks, to save time (default 240)\n"
          "  --batch-per-rank N  global batch B = N * P (default 64)\n"
          "  --epoch N           OmniLearn adjusts every N steps (default 40)\n"
          "  --change-at F       the change happens after this fraction of the run (default 0.55)\n"
          "  --noise F           relative spread of the timing noise (default 0.1)\n"
          "  --noise-law L       normal (spread F, clipped at 3 F; default) or uniform\n"
          "                      (in [1 - F, 1 + F], spread F / sqrt(3))\n"
          "  --alpha S --beta S  fixed seconds per step and per sample of a speed-1 rank\n"
          "                      (default 0.01 and 0.001)\n"
          "  --seed N            random seed (default 1)\n"
          "  --period N --gain F --deadband F --forget F   controller settings\n"
          "                      (default: the library's defaults)\n"
          "  --summary FILE      also write the results as JSON\n"
          "  --false-changes N   instead: N noisy steps of every rank's estimator at each\n"
          "                      --ranks, the plan held (its batch moved by 10% every 100 steps, as\n"
          "                      a settling plan moves it), and count the lasting changes of speed\n"
          "                      confirmed: every one is false\n"
          "  --spikes F,X        with --false-changes: a share F of the samples are one-step\n"
          "                      spikes X times slower (GC pauses; default 0,10: none)\n"
          "  --levels S,F        with --false-changes: the change detector's alarm levels on the\n"
          "                      slow and the fast side, in standard deviations (default: the\n"
          "                      library's for each P; 0 keeps a side's)\n", f);
}

static void ob_sim_die(const char *name, const char *value, const char *allowed)
{
    fprintf(stderr, "simulate: %s='%s': expected %s\n", name, value, allowed);
    exit(2);
}

static long ob_sim_parse_long(const char *name, const char *s, long lo, long hi)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (0 != errno || end == s || '\0' != *end || v < lo || v > hi) {
        char allowed[96];
        snprintf(allowed, sizeof allowed, "an integer in [%ld, %ld]", lo, hi);
        ob_sim_die(name, s, allowed);
    }
    return v;
}

static double ob_sim_parse_double(const char *name, const char *s, double lo, double hi)
{
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (0 != errno || end == s || '\0' != *end || !(v >= lo && v <= hi)) {
        char allowed[96];
        snprintf(allowed, sizeof allowed, "a number in [%g, %g]", lo, hi);
        ob_sim_die(name, s, allowed);
    }
    return v;
}

/* Two numbers "A,B", A in [lo_a, hi_a] and B in [lo_b, hi_b], into *a and *b. */
static void ob_sim_parse_pair(const char *name, const char *s, double lo_a, double hi_a, double lo_b, double hi_b,
                              const char *allowed, double *a, double *b)
{
    char *end = NULL;
    const char *second;

    *a = strtod(s, &end);
    *b = (double) NAN;
    if (end != s && ',' == *end) {
        second = end + 1;
        *b = strtod(second, &end);
        if (end == second) {
            *b = (double) NAN;
        }
    }
    if ('\0' != *end || !(*a >= lo_a && *a <= hi_a) || !(*b >= lo_b && *b <= hi_b)) {
        ob_sim_die(name, s, allowed);
    }
}

static void ob_sim_parse_args(int argc, char **argv, ob_sim_opts *o)
{
    static const int default_ranks[] = { 4, 16, 256, 4096, 65536 };
    memset(o, 0, sizeof *o);
    o->nranks = 5;
    memcpy(o->ranks, default_ranks, sizeof default_ranks);
    for (int k = 0; k < OB_SIM_NSCENARIOS; k++) {
        o->scenario_on[k] = 1;
    }
    o->steps = 240;
    o->big_steps = 240;
    o->batch_per_rank = 64;
    o->epoch = 40;
    o->change_at = 0.55;
    o->noise = 0.1;
    o->alpha = 0.01;
    o->beta = 0.001;
    o->seed = 1;
    o->period = OB_DEFAULT_PERIOD;
    o->gain = OB_DEFAULT_GAIN;
    o->deadband = OB_DEFAULT_DEADBAND;
    o->forget = OB_DEFAULT_FORGET;
    o->planner_on[OB_SIM_CENTRAL] = 1;
    o->pool = 1;
    o->planner_on[OB_SIM_DISTRIBUTED] = 1;
    o->latency = OB_SIM_DEFAULT_LATENCY;
    o->bandwidth = OB_SIM_DEFAULT_BANDWIDTH;
    o->spike_rate = 0.0;
    o->spike_factor = 10.0;
    o->level_slow = 0.0;
    o->level_fast = 0.0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (0 == strcmp(a, "--help") || 0 == strcmp(a, "-h")) {
            ob_sim_usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "simulate: %s: missing value or unknown option\n", a);
            ob_sim_usage(stderr);
            exit(2);
        }
        const char *v = argv[++i];
        if (0 == strcmp(a, "--ranks")) {
            char buf[256];
            if (strlen(v) >= sizeof buf) {
                ob_sim_die(a, v, "a short comma list");
            }
            strcpy(buf, v);
            o->nranks = 0;
            for (char *save = NULL, *tok = strtok_r(buf, ",", &save); NULL != tok;
                 tok = strtok_r(NULL, ",", &save)) {
                if (o->nranks >= OB_SIM_MAX_RANKS) {
                    ob_sim_die(a, v, "at most 16 rank counts");
                }
                o->ranks[o->nranks++] = (int) ob_sim_parse_long(a, tok, 1, 1 << 24);
            }
            if (0 == o->nranks) {
                ob_sim_die(a, v, "a comma list of rank counts");
            }
        } else if (0 == strcmp(a, "--scenarios")) {
            char buf[256];
            if (strlen(v) >= sizeof buf) {
                ob_sim_die(a, v, "a short comma list");
            }
            strcpy(buf, v);
            memset(o->scenario_on, 0, sizeof o->scenario_on);
            int any = 0;
            for (char *save = NULL, *tok = strtok_r(buf, ",", &save); NULL != tok;
                 tok = strtok_r(NULL, ",", &save)) {
                int found = 0;
                for (int k = 0; k < OB_SIM_NSCENARIOS; k++) {
                    if (0 == strcmp(tok, ob_sim_scenarios[k].name)) {
                        o->scenario_on[k] = 1;
                        found = 1;
                    }
                }
                if (!found) {
                    ob_sim_die(a, v, "a comma list of uniform, bimodal, hl2, hl4, hl8, slow10, vanish");
                }
                any = 1;
            }
            if (!any) {
                ob_sim_die(a, v, "a comma list of scenarios");
            }
        } else if (0 == strcmp(a, "--steps")) {
            o->steps = ob_sim_parse_long(a, v, 8, 10000000);
        } else if (0 == strcmp(a, "--big-steps")) {
            o->big_steps = ob_sim_parse_long(a, v, 8, 10000000);
        } else if (0 == strcmp(a, "--batch-per-rank")) {
            o->batch_per_rank = ob_sim_parse_long(a, v, 1, 1000000);
        } else if (0 == strcmp(a, "--epoch")) {
            o->epoch = ob_sim_parse_long(a, v, 1, 10000000);
        } else if (0 == strcmp(a, "--change-at")) {
            o->change_at = ob_sim_parse_double(a, v, 0.0, 1.0);
        } else if (0 == strcmp(a, "--noise")) {
            o->noise = ob_sim_parse_double(a, v, 0.0, 0.3);
        } else if (0 == strcmp(a, "--noise-law")) {
            if (0 == strcmp(v, "normal")) {
                o->noise_uniform = 0;
            } else if (0 == strcmp(v, "uniform")) {
                o->noise_uniform = 1;
            } else {
                ob_sim_die(a, v, "normal or uniform");
            }
        } else if (0 == strcmp(a, "--alpha")) {
            o->alpha = ob_sim_parse_double(a, v, 0.0, 1e3);
        } else if (0 == strcmp(a, "--beta")) {
            o->beta = ob_sim_parse_double(a, v, 1e-9, 1e3);
        } else if (0 == strcmp(a, "--seed")) {
            o->seed = (uint64_t) ob_sim_parse_long(a, v, 0, 0x7fffffffL);
        } else if (0 == strcmp(a, "--period")) {
            o->period = ob_sim_parse_long(a, v, 1, 1000000);
        } else if (0 == strcmp(a, "--gain")) {
            o->gain = ob_sim_parse_double(a, v, 1e-6, 1.0);
        } else if (0 == strcmp(a, "--deadband")) {
            o->deadband = ob_sim_parse_double(a, v, 0.0, 0.5);
        } else if (0 == strcmp(a, "--forget")) {
            o->forget = ob_sim_parse_double(a, v, 0.5, 1.0);
        } else if (0 == strcmp(a, "--planner")) {
            o->planner_auto = 0 == strcmp(v, "auto");
            o->planner_on[OB_SIM_CENTRAL] = 0 == strcmp(v, "central") || 0 == strcmp(v, "both") || o->planner_auto;
            o->planner_on[OB_SIM_DISTRIBUTED] = 0 == strcmp(v, "distributed") || 0 == strcmp(v, "both")
                                                || o->planner_auto;
            if (!o->planner_on[OB_SIM_CENTRAL] && !o->planner_on[OB_SIM_DISTRIBUTED]) {
                ob_sim_die(a, v, "central, distributed, both or auto");
            }
        } else if (0 == strcmp(a, "--pool")) {
            if (0 != strcmp(v, "on") && 0 != strcmp(v, "off")) {
                ob_sim_die(a, v, "on or off");
            }
            o->pool = 0 == strcmp(v, "on");
        } else if (0 == strcmp(a, "--latency")) {
            o->latency = ob_sim_parse_double(a, v, 0.0, 1.0);
        } else if (0 == strcmp(a, "--bandwidth")) {
            o->bandwidth = ob_sim_parse_double(a, v, 1e3, 1e15);
        } else if (0 == strcmp(a, "--summary")) {
            o->summary = v;
        } else if (0 == strcmp(a, "--false-changes")) {
            o->false_steps = ob_sim_parse_long(a, v, 1, 1000000000L);
        } else if (0 == strcmp(a, "--spikes")) {
            ob_sim_parse_pair(a, v, 0.0, 0.5, 1.0, 1000.0, "F,X with F in [0, 0.5] and X in [1, 1000]",
                              &o->spike_rate, &o->spike_factor);
        } else if (0 == strcmp(a, "--levels")) {
            ob_sim_parse_pair(a, v, 0.0, 100.0, 0.0, 100.0, "S,F with S and F in [0, 100] (0: the library's)",
                              &o->level_slow, &o->level_fast);
        } else {
            fprintf(stderr, "simulate: unknown option %s\n", a);
            ob_sim_usage(stderr);
            exit(2);
        }
    }
}

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

static double ob_sim_noise_of(const ob_sim_opts *o, ob_sim_rng *r)
{
    return o->noise_uniform ? ob_sim_noise_uniform(r, o->noise) : ob_sim_noise(r, o->noise);
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

/* Every rank's record, as the API fills it on that rank with
 * ob_controller_record() (O(1) each: the controller keeps its plan's hash). */
static void ob_sim_records(const ob_controller *ctl, const ob_estimator *est, const double *compute_mean,
                           ob_rank_record *rec)
{
    for (int i = 0; i < ctl->nranks; i++) {
        ob_controller_record(ctl, i, &est[i], compute_mean[i], &rec[i]);
    }
}

/* The decision of one policy, and what it cost. */
typedef struct ob_sim_decider {
    ob_sim_planner planner;
    ob_dist_state st;            /* distributed: the controller's state, the same on every rank */
    ob_sim_dist sd;
    long *plan;                  /* distributed: every rank's batch (each rank holds its own) */
    long *offset;
    long plan_before0;           /* rank 0's batch before the decision, for its replays */
    long coll_max;
} ob_sim_decider;

typedef struct ob_sim_cost {
    double compute;              /* seconds of one rank's compute */
    long collectives;
    long bytes;                  /* per rank */
    double latency;              /* emulated seconds of the whole decision */
} ob_sim_cost;

/* Today's design: one allgather of every record, then every rank solves all. */
static int ob_sim_decide_central(const ob_sim_opts *o, ob_controller *ctl, const ob_rank_record *rec,
                                 ob_decision *d, ob_sim_cost *cost)
{
    const double t0 = ob_sim_now();
    const int rc = ob_controller_update(ctl, rec, d);

    cost->compute = ob_sim_now() - t0;
    cost->collectives = 1;
    cost->bytes = (long) ((size_t) ctl->nranks * sizeof *rec);
    cost->latency = ob_sim_dist_cost(1, cost->bytes, ctl->nranks, o->latency, o->bandwidth) + cost->compute;
    return rc;
}

/* The distributed decision: every rank in one block over the emulated
 * collectives, then rank 0 alone against their logged results, timed (its
 * share of the work is what one rank computes), and checked to reach the
 * same state and batch. */
static int ob_sim_decide_distributed(const ob_sim_opts *o, ob_sim_decider *dz, ob_controller *ctl,
                                     const ob_rank_record *rec, ob_decision *d, ob_sim_cost *cost)
{
    const int P = ctl->nranks;
    ob_dist_state before = dz->st;
    ob_dist_state again = before;
    long b0 = dz->plan[0];
    long o0 = 0;
    ob_decision d0;
    ob_dist_comm comm;
    ob_dist_comm replay;
    double t0;
    int rc;

    dz->plan_before0 = b0;
    ob_sim_dist_reset(&dz->sd, 0);
    comm = ob_sim_dist_comm(&dz->sd);
    rc = ob_dist_update(&dz->st, &comm, (ob_dist_block) { P, 0 }, rec, dz->plan, dz->offset, d, NULL);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    /* The least of a few runs: the machine's own interruptions are not the decision's. */
    cost->compute = HUGE_VAL;
    for (int k = 0; k < OB_SIM_REPLAYS; k++) {
        again = before;
        b0 = dz->plan_before0;
        ob_sim_dist_reset(&dz->sd, 1);
        replay = ob_sim_dist_comm(&dz->sd);
        t0 = ob_sim_now();
        rc = ob_dist_update(&again, &replay, (ob_dist_block) { 1, 0 }, rec, &b0, &o0, &d0, NULL);
        t0 = ob_sim_now() - t0;
        cost->compute = t0 < cost->compute ? t0 : cost->compute;
        if (OMNIBATCH_SUCCESS != rc) {
            break;
        }
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (b0 != dz->plan[0] || 0 != o0 || again.digest != dz->st.digest || dz->sd.pos != dz->sd.n) {
        return ob_fail(OMNIBATCH_ERR_STATE, "simulate: rank 0 alone reached another decision than all ranks "
                       "together");
    }
    cost->collectives = comm.collectives;
    cost->bytes = comm.bytes;
    cost->latency = ob_sim_dist_cost(comm.collectives, comm.bytes, P, o->latency, o->bandwidth) + cost->compute;
    return d->changed ? ob_controller_set_plan(ctl, dz->plan) : OMNIBATCH_SUCCESS;
}

static int ob_sim_run(const ob_sim_opts *o, const ob_sim_scenario *sc, int P, ob_sim_planner planner,
                      ob_sim_result *res)
{
    const double wall0 = ob_sim_now();
    const long B = o->batch_per_rank * (long) P;
    const long steps = P > 4096 ? o->big_steps : o->steps;
    const long change = OB_SIM_EVENT_NONE == sc->event ? -1 : (long) ((double) steps * o->change_at);
    const long max_dec = steps / o->period + 2;
    int rc = OMNIBATCH_SUCCESS;

    double *speed = malloc((size_t) P * sizeof *speed);
    ob_rank_model *truth = malloc((size_t) P * sizeof *truth);
    ob_estimator *est = malloc((size_t) P * sizeof *est);
    ob_rank_record *rec = malloc((size_t) P * sizeof *rec);
    double *acc = calloc((size_t) P, sizeof *acc);
    double *ol_acc = calloc((size_t) P, sizeof *ol_acc);
    long *ol_b = malloc((size_t) P * sizeof *ol_b);
    long *scratch = malloc((size_t) P * sizeof *scratch);
    int *idx = malloc((size_t) P * sizeof *idx);
    int *iscratch = malloc((size_t) P * sizeof *iscratch);
    double *step_ratio = malloc((size_t) steps * sizeof *step_ratio);   /* / best integer plan */
    double *step_oracle = malloc((size_t) steps * sizeof *step_oracle); /* / oracle */
    double *ol_ratio = malloc((size_t) steps * sizeof *ol_ratio);
    double *ol_oracle = malloc((size_t) steps * sizeof *ol_oracle);
    /* [0]: the first plan; [d]: the plan after decision d. */
    double *dec_ratio = malloc((size_t) max_dec * sizeof *dec_ratio);
    int *dec_changed = calloc((size_t) max_dec, sizeof *dec_changed);
    if (NULL == speed || NULL == truth || NULL == est || NULL == rec || NULL == acc || NULL == ol_acc ||
        NULL == ol_b || NULL == scratch || NULL == idx || NULL == iscratch || NULL == step_ratio ||
        NULL == step_oracle || NULL == ol_ratio || NULL == ol_oracle || NULL == dec_ratio ||
        NULL == dec_changed) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: P=%d", P);
        goto out;
    }

    /* One stream for the speeds and events, one per policy for its noise:
     * the policies see independent noise of the same law. */
    ob_sim_rng rng_speed;
    ob_sim_rng rng_ob;
    ob_sim_rng rng_ol;
    const uint64_t base = o->seed * UINT64_C(1000003) + (uint64_t) P * UINT64_C(7919) +
                          (uint64_t) (sc - ob_sim_scenarios) * UINT64_C(104729);
    ob_sim_rng_seed(&rng_speed, base);
    ob_sim_rng_seed(&rng_ob, base ^ UINT64_C(0x5bd1e995));
    ob_sim_rng_seed(&rng_ol, base ^ UINT64_C(0x27d4eb2f165667c5));

    switch (sc->kind) {
    case OB_SIM_KIND_UNIFORM:
        rc = ob_sim_speeds_uniform(&rng_speed, P, 0.25, 1.0, speed);
        break;
    case OB_SIM_KIND_BIMODAL:
        rc = ob_sim_speeds_bimodal(&rng_speed, P, 0.1, 20.0, speed);
        break;
    case OB_SIM_KIND_LEVEL:
        rc = ob_sim_speeds_level(sc->level, P, speed);
        break;
    }
    if (OMNIBATCH_SUCCESS != rc) {
        goto out;
    }
    ob_sim_models(o, P, B, speed, truth);
    ob_sim_phase phase;
    rc = ob_sim_phase_of(truth, P, B, scratch, &phase);
    if (OMNIBATCH_SUCCESS != rc) {
        goto out;
    }

    ob_controller ctl;
    const ob_planner_params params = { o->gain, o->deadband, 1 };
    ob_sim_decider dz;
    memset(&dz, 0, sizeof dz);
    dz.planner = planner;
    rc = ob_controller_init(&ctl, P, B, &params, NULL, NULL, NULL);
    if (OMNIBATCH_SUCCESS != rc) {
        goto out;
    }
    ctl.pooling = o->pool;
    if (OB_SIM_DISTRIBUTED == planner) {
        dz.plan = malloc((size_t) P * sizeof *dz.plan);
        dz.offset = malloc((size_t) P * sizeof *dz.offset);
        rc = NULL == dz.plan || NULL == dz.offset ? ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: P=%d", P)
                                                  : ob_dist_init(&dz.st, P, B, &params);
        if (OMNIBATCH_SUCCESS != rc) {
            goto out_ctl;
        }
        dz.st.pooling = o->pool;
        memcpy(dz.plan, ctl.plan, (size_t) P * sizeof *dz.plan);
    }
    for (int i = 0; i < P; i++) {
        ob_estimator_init(&est[i], o->forget);
        ob_estimator_set_ranks(&est[i], P);   /* as the API sizes it */
    }
    ob_sim_equal_split(P, B, ol_b);
    dec_ratio[0] = ob_sim_step_time(truth, P, ctl.plan) / phase.integer;

    long decisions = 0;
    long changes = 0;
    long since_exchange = 0;
    long ol_since = 0;
    long ol_excess_max = 0;
    double dec_sum = 0.0;
    double dec_max = 0.0;
    double lat_sum = 0.0;
    double lat_max = 0.0;
    long coll_sum = 0;
    long coll_max = 0;
    long bytes_sum = 0;
    for (long k = 0; k < steps; k++) {
        if (k == change) {
            const int n = OB_SIM_EVENT_SLOW10 == sc->event ? ob_sim_count_of(0.1, P) : 1;
            const double factor = OB_SIM_EVENT_SLOW10 == sc->event ? 2.0 : 20.0;
            rc = ob_sim_choose(&rng_speed, P, n, idx, iscratch);
            if (OMNIBATCH_SUCCESS != rc) {
                goto out_ctl;
            }
            ob_sim_slow_down(speed, idx, n, factor);
            ob_sim_models(o, P, B, speed, truth);
            rc = ob_sim_phase_of(truth, P, B, scratch, &phase);
            if (OMNIBATCH_SUCCESS != rc) {
                goto out_ctl;
            }
        }
        if (k > 0 && 0 == k % o->epoch) {
            /* OmniLearn, once per epoch, from the epoch's mean times. */
            for (int i = 0; i < P; i++) {
                ol_acc[i] /= (double) ol_since;
            }
            long sum = 0;
            rc = ob_sim_omnilearn_adjust(P, B, ol_acc, OB_SIM_OMNILEARN_DEADBAND, 1, B, ol_b, &sum, NULL);
            if (OMNIBATCH_SUCCESS != rc) {
                goto out_ctl;
            }
            ol_excess_max = sum - B > ol_excess_max ? sum - B : ol_excess_max;
            memset(ol_acc, 0, (size_t) P * sizeof *ol_acc);
            ol_since = 0;
        }

        double t_ob = 0.0;
        double t_ol = 0.0;
        for (int i = 0; i < P; i++) {
            const double ti = truth[i].alpha + truth[i].beta * (double) ctl.plan[i];
            const double measured = ti * ob_sim_noise_of(o, &rng_ob);
            ob_estimator_add(&est[i], (double) ctl.plan[i], measured);
            acc[i] += measured;
            t_ob = ti > t_ob ? ti : t_ob;

            const double tl = truth[i].alpha + truth[i].beta * (double) ol_b[i];
            ol_acc[i] += tl * ob_sim_noise_of(o, &rng_ol);
            t_ol = tl > t_ol ? tl : t_ol;
        }
        since_exchange++;
        ol_since++;
        step_ratio[k] = t_ob / phase.integer;
        step_oracle[k] = t_ob / phase.oracle;
        ol_ratio[k] = t_ol / phase.integer;
        ol_oracle[k] = t_ol / phase.oracle;

        if (0 == (k + 1) % o->period) {
            for (int i = 0; i < P; i++) {
                acc[i] /= (double) since_exchange;
            }
            ob_sim_records(&ctl, est, acc, rec);
            memset(acc, 0, (size_t) P * sizeof *acc);
            since_exchange = 0;
            ob_decision d;
            ob_sim_cost cost = { 0.0, 0, 0, 0.0 };
            rc = OB_SIM_CENTRAL == planner ? ob_sim_decide_central(o, &ctl, rec, &d, &cost)
                                           : ob_sim_decide_distributed(o, &dz, &ctl, rec, &d, &cost);
            if (OMNIBATCH_SUCCESS != rc) {
                fprintf(stderr, "simulate: %s P=%d step %ld: decision: %s\n", sc->name, P, k, ob_last_error());
                goto out_ctl;
            }
            dec_sum += cost.compute;
            dec_max = cost.compute > dec_max ? cost.compute : dec_max;
            lat_sum += cost.latency;
            lat_max = cost.latency > lat_max ? cost.latency : lat_max;
            coll_sum += cost.collectives;
            coll_max = cost.collectives > coll_max ? cost.collectives : coll_max;
            bytes_sum += cost.bytes;
            decisions++;
            dec_ratio[decisions] = ob_sim_step_time(truth, P, ctl.plan) / phase.integer;
            dec_changed[decisions] = d.changed;
            changes += d.changed ? 1 : 0;
        }
    }

    /* Convergence, in decisions, before any change: within 1.03x of the
     * best integer plan from some decision on, and no change after it.
     * Decision d happens at the end of step d * period - 1, so those before
     * the change are 1 .. change / period. */
    long dec_end = decisions;
    if (change >= 0 && change / o->period < decisions) {
        dec_end = change / o->period;
    }
    res->converge = ob_sim_converged(dec_ratio, dec_changed, dec_end, OB_SIM_CONVERGED, &res->settle);

    const long q = steps - steps / 4;
    double s_ob = 0.0;
    double s_ol = 0.0;
    for (long k = q; k < steps; k++) {
        s_ob += step_oracle[k];
        s_ol += ol_oracle[k];
    }
    res->steady = s_ob / (double) (steps - q);
    res->ol_steady = s_ol / (double) (steps - q);
    res->floor = phase.integer / phase.oracle;
    ob_sim_noise_floors(o, P, steps, res);
    res->statik = phase.statik / phase.oracle;
    if (change >= 0) {
        const long r = ob_sim_first_for_good(step_ratio, change, steps, OB_SIM_RECOVERED);
        res->recover = r < steps ? r - change : -1;
        const long rl = ob_sim_first_for_good(ol_ratio, change, steps, OB_SIM_RECOVERED);
        res->ol_recover = rl < steps ? rl - change : -1;
    } else {
        res->recover = -2;
        res->ol_recover = -2;
    }
    res->sc = sc;
    res->P = P;
    res->B = B;
    res->steps = steps;
    res->change_step = change;
    res->decisions = decisions;
    res->changes = changes;
    res->dec_mean_s = decisions > 0 ? dec_sum / (double) decisions : 0.0;
    res->dec_max_s = dec_max;
    res->planner = planner;
    res->coll_mean = decisions > 0 ? (double) coll_sum / (double) decisions : 0.0;
    res->coll_max = coll_max;
    res->bytes_mean = decisions > 0 ? (double) bytes_sum / (double) decisions : 0.0;
    res->lat_mean_s = decisions > 0 ? lat_sum / (double) decisions : 0.0;
    res->lat_max_s = lat_max;
    res->ol_excess_max = ol_excess_max;

out_ctl:
    ob_controller_free(&ctl);
    ob_sim_dist_free(&dz.sd);
    free(dz.plan);
    free(dz.offset);
out:
    free(speed);
    free(truth);
    free(est);
    free(rec);
    free(acc);
    free(ol_acc);
    free(ol_b);
    free(scratch);
    free(idx);
    free(iscratch);
    free(step_ratio);
    free(step_oracle);
    free(ol_ratio);
    free(ol_oracle);
    free(dec_ratio);
    free(dec_changed);
    res->wall_s = ob_sim_now() - wall0;
    return rc;
}

/* "-" for not applicable, "never" for a target not reached. */
static const char *ob_sim_count_text(long v, char *buf, size_t size)
{
    if (-2 == v) {
        return "-";
    }
    if (v < 0) {
        return "never";
    }
    snprintf(buf, size, "%ld", v);
    return buf;
}

static void ob_sim_print_header(const ob_sim_opts *o)
{
    printf("simulate: the controller alone (no MPI); rank i takes (alpha + beta*b) / s_i seconds for b samples,\n"
           "  alpha = %g s, beta = %g s/sample at speed 1; noise %s %g on every timing (seed %llu);\n"
           "  B = %ld * P; decisions every %ld steps (gain %g, dead-band %g, forget %g);\n"
           "  OmniLearn's rule side by side on the same ranks, adjusting every %ld steps (an \"epoch\").\n",
           o->alpha, o->beta, o->noise_uniform ? "uniform within +-" : "normal, spread", o->noise,
           (unsigned long long) o->seed, o->batch_per_rank, o->period, o->gain, o->deadband, o->forget,
           o->epoch);
    printf("  oracle = the planner's optimum T on the true models (continuous); floor = best integer plan / oracle;\n"
           "  settle / conv = decisions until the plan is within %.2fx of the best integer plan for good / and\n"
           "  no longer changes (before any change event); steady = mean true step time of the plan / oracle\n"
           "  over the last quarter of the run; static = equal split / oracle; recover = steps after the change\n"
           "  until within %.2fx of the best integer plan for good; OL-sum-B = largest excess of OmniLearn's\n"
           "  batches over B, in percent of B.\n"
           "  nf = the noise floor: where a plan that makes the times estimated from each rank's own timings\n"
           "  so far equal lands on average (1 + E[max of P normal errors of deviation noise / sqrt(samples)],\n"
           "  samples counted under the forgetting factor; a guide, not a bound: planning near a rank's bounds\n"
           "  or on ranks of one speed can do better):\n"
           "  nf-stdy = its mean over the last quarter x floor (to compare with steady), nf-set = the\n"
           "  decisions it takes to come within %.2fx (to compare with settle).\n", OB_SIM_CONVERGED, OB_SIM_RECOVERED,
           OB_SIM_CONVERGED);
    if (o->big_steps != o->steps) {
        printf("  Runs above 4096 ranks take %ld steps instead of %ld.\n", o->big_steps, o->steps);
    }
    for (int k = 0; k < OB_SIM_NSCENARIOS; k++) {
        if (o->scenario_on[k]) {
            printf("  %-8s %s\n", ob_sim_scenarios[k].name, ob_sim_scenarios[k].what);
        }
    }
    printf("  planner: cen = today's design (one allgather of every record, every rank solves all), dist =\n"
           "  the distributed decision (ob_planner_dist.h) over emulated collectives, each costing %g s x\n"
           "  ceil(log2 P) plus its bytes at %g B/s; cmp = one rank's compute per decision (dist: rank 0 run\n"
           "  alone against the collectives' results); coll = collectives per decision (mean, cmax = most),\n"
           "  KB = bytes per rank per decision;\n"
           "  lat = emulated decision latency (collectives + cmp).\n", o->latency, o->bandwidth);
    printf("\n%-8s %6s %4s %5s %8s %8s %5s %4s %8s %8s %6s %5s %4s %7s %6s %7s %6s %7s %7s %9s %9s %7s %7s\n",
           "scenario", "P", "plan", "steps", "cmp-mean", "cmp-max", "coll", "cmax", "KB", "lat-mean", "settle", "conv",
           "chg", "steady", "floor", "nf-stdy", "nf-set", "static", "recover", "OL-steady", "OL-sum-B", "OL-rec",
           "wall-s");
    printf("%-8s %6s %4s %5s %8s %8s %5s %4s %8s %8s %6s %5s %4s %7s %6s %7s %6s %7s %7s %9s %9s %7s %7s\n", "", "",
           "", "", "ms", "ms", "/dec", "", "/rank", "ms", "dec", "dec", "", "/orc", "", "/orc", "dec", "/orc", "steps",
           "/orc", "", "steps", "");
    fflush(stdout);
}

static void ob_sim_print_row(const ob_sim_result *r)
{
    char b1[32];
    char b2[32];
    char b3[32];
    char b4[32];
    char b5[32];
    char excess[32];
    snprintf(excess, sizeof excess, "+%.1f%%", 100.0 * (double) r->ol_excess_max / (double) r->B);
    printf("%-8s %6d %4s %5ld %8.3f %8.3f %5.1f %4ld %8.2f %8.3f %6s %5s %4ld %7.3f %6.3f %7.3f %6s %7.3f %7s %9.3f "
           "%9s %7s %7.2f\n", r->sc->name, r->P, OB_SIM_CENTRAL == r->planner ? "cen" : "dist", r->steps,
           1e3 * r->dec_mean_s, 1e3 * r->dec_max_s, r->coll_mean, r->coll_max, r->bytes_mean / 1024.0,
           1e3 * r->lat_mean_s, ob_sim_count_text(r->settle, b1, sizeof b1),
           ob_sim_count_text(r->converge, b2, sizeof b2), r->changes, r->steady, r->floor, r->nf_steady,
           ob_sim_count_text(r->nf_settle, b5, sizeof b5), r->statik,
           ob_sim_count_text(r->recover, b3, sizeof b3), r->ol_steady, excess,
           ob_sim_count_text(r->ol_recover, b4, sizeof b4), r->wall_s);
    fflush(stdout);
}

static int ob_sim_write_summary(const ob_sim_opts *o, const ob_sim_result *r, int n, double total_s)
{
    FILE *f = fopen(o->summary, "w");
    if (NULL == f) {
        fprintf(stderr, "simulate: --summary='%s': cannot write it\n", o->summary);
        return 1;
    }
    fprintf(f, "{\n  \"benchmark\": \"simulate\",\n");
    fprintf(f, "  \"settings\": {\"alpha\": %g, \"beta\": %g, \"noise\": %g, \"noise_law\": \"%s\", "
               "\"seed\": %llu, "
               "\"batch_per_rank\": %ld, \"period\": %ld, \"gain\": %g, \"deadband\": %g, \"forget\": %g, "
               "\"omnilearn_epoch\": %ld, \"steps\": %ld, \"big_steps\": %ld, \"change_at\": %g, "
               "\"converged\": %g, \"recovered\": %g},\n",
            o->alpha, o->beta, o->noise, o->noise_uniform ? "uniform" : "normal", (unsigned long long) o->seed,
            o->batch_per_rank, o->period, o->gain,
            o->deadband, o->forget, o->epoch, o->steps, o->big_steps, o->change_at, OB_SIM_CONVERGED,
            OB_SIM_RECOVERED);
    fprintf(f, "  \"runs\": [\n");
    for (int k = 0; k < n; k++) {
        /* -1: never reached; null: not applicable. */
        char rec[32];
        char olrec[32];
        if (-2 == r[k].recover) {
            strcpy(rec, "null");
            strcpy(olrec, "null");
        } else {
            snprintf(rec, sizeof rec, "%ld", r[k].recover);
            snprintf(olrec, sizeof olrec, "%ld", r[k].ol_recover);
        }
        fprintf(f, "    {\"planner\": \"%s\", \"collectives_mean\": %.3f, \"collectives_max\": %ld, "
                   "\"bytes_per_rank_mean\": %.1f, \"latency_ms_mean\": %.6f, \"latency_ms_max\": %.6f, ",
                OB_SIM_CENTRAL == r[k].planner ? "central" : "distributed", r[k].coll_mean, r[k].coll_max, r[k].bytes_mean,
                1e3 * r[k].lat_mean_s, 1e3 * r[k].lat_max_s);
        fprintf(f, "\"scenario\": \"%s\", \"ranks\": %d, \"global_batch\": %ld, \"steps\": %ld, "
                   "\"change_step\": %ld, \"decisions\": %ld, \"plan_changes\": %ld, "
                   "\"decision_ms_mean\": %.6f, \"decision_ms_max\": %.6f, \"settle_decisions\": %ld, "
                   "\"converge_decisions\": %ld, \"steady_over_oracle\": %.6f, \"floor_over_oracle\": %.6f, "
                   "\"noise_floor_steady_over_oracle\": %.6f, \"noise_floor_settle_decisions\": %ld, "
                   "\"static_over_oracle\": %.6f, \"recover_steps\": %s, \"omnilearn_steady_over_oracle\": %.6f, "
                   "\"omnilearn_sum_excess_max\": %ld, \"omnilearn_sum_excess_fraction\": %.6f, "
                   "\"omnilearn_recover_steps\": %s, \"wall_s\": %.3f}%s\n",
                r[k].sc->name, r[k].P, r[k].B, r[k].steps, r[k].change_step, r[k].decisions, r[k].changes,
                1e3 * r[k].dec_mean_s, 1e3 * r[k].dec_max_s, r[k].settle, r[k].converge, r[k].steady, r[k].floor,
                r[k].nf_steady, r[k].nf_settle, r[k].statik, rec, r[k].ol_steady, r[k].ol_excess_max,
                (double) r[k].ol_excess_max / (double) r[k].B, olrec, r[k].wall_s, k + 1 < n ? "," : "");
    }
    fprintf(f, "  ],\n  \"wall_s\": %.3f\n}\n", total_s);
    if (0 != fclose(f)) {
        fprintf(stderr, "simulate: --summary='%s': write failed\n", o->summary);
        return 1;
    }
    return 0;
}

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

static int ob_sim_false_main(const ob_sim_opts *o)
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

int main(int argc, char **argv)
{
    ob_sim_opts o;
    ob_sim_parse_args(argc, argv, &o);
    if (o.false_steps > 0) {
        return ob_sim_false_main(&o);
    }

    const int most = 2 * OB_SIM_NSCENARIOS * o.nranks;
    ob_sim_result *results = calloc((size_t) most, sizeof *results);
    if (NULL == results) {
        fprintf(stderr, "simulate: out of memory\n");
        return 1;
    }
    ob_sim_print_header(&o);
    const double t0 = ob_sim_now();
    int n = 0;
    int status = 0;
    for (int k = 0; k < OB_SIM_NSCENARIOS; k++) {
        if (!o.scenario_on[k]) {
            continue;
        }
        for (int j = 0; j < o.nranks; j++) {
            for (int pl = OB_SIM_CENTRAL; pl <= OB_SIM_DISTRIBUTED; pl++) {
                if (!o.planner_on[pl]
                    || (o.planner_auto && (OB_SIM_DISTRIBUTED == pl) != (o.ranks[j] >= OB_PLANNER_AUTO_RANKS))) {
                    continue;
                }
                const int rc = ob_sim_run(&o, &ob_sim_scenarios[k], o.ranks[j], (ob_sim_planner) pl, &results[n]);
                if (OMNIBATCH_SUCCESS != rc) {
                    fprintf(stderr, "simulate: %s at P=%d failed: %s (%s)\n", ob_sim_scenarios[k].name,
                            o.ranks[j], omnibatch_strerror(rc), ob_last_error());
                    status = 1;
                    continue;
                }
                ob_sim_print_row(&results[n]);
                n++;
            }
        }
    }
    const double total = ob_sim_now() - t0;
    printf("\nsimulate: %d runs in %.1f s\n", n, total);
    if (NULL != o.summary) {
        status |= ob_sim_write_summary(&o, results, n, total);
        if (0 == status) {
            printf("simulate: summary written to %s\n", o.summary);
        }
    }
    free(results);
    return status;
}
