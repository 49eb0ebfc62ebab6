/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The simulator's command line (sim_options.h): one table of options, each
 * with its range stated once, and the scenarios by name.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_config.h"
#include "sim_options.h"

const ob_sim_scenario ob_sim_scenarios[OB_SIM_NSCENARIOS] = {
    { "uniform", OB_SIM_KIND_UNIFORM, 0, OB_SIM_EVENT_NONE, "speeds uniform in [0.25, 1]" },
    { "bimodal", OB_SIM_KIND_BIMODAL, 0, OB_SIM_EVENT_NONE, "10% of ranks 20x faster (GPU), the rest 1 (CPU)" },
    { "hl2", OB_SIM_KIND_LEVEL, 2, OB_SIM_EVENT_NONE, "OmniLearn HL2: cores 12,12,8,16 tiled" },
    { "hl4", OB_SIM_KIND_LEVEL, 4, OB_SIM_EVENT_NONE, "OmniLearn HL4: cores 9,9,6,24 tiled" },
    { "hl8", OB_SIM_KIND_LEVEL, 8, OB_SIM_EVENT_NONE, "OmniLearn HL8: cores 6,6,4,32 tiled" },
    { "slow10", OB_SIM_KIND_UNIFORM, 0, OB_SIM_EVENT_SLOW10, "uniform, then a random 10% of ranks 2x slower" },
    { "vanish", OB_SIM_KIND_UNIFORM, 0, OB_SIM_EVENT_VANISH, "uniform, then one random rank 20x slower" },
};

double ob_sim_noise_of(const ob_sim_opts *o, ob_sim_rng *r)
{
    return o->noise_uniform ? ob_sim_noise_uniform(r, o->noise) : ob_sim_noise(r, o->noise);
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

/* A comma list of at most 255 characters, copied for strtok_r. */
static void ob_sim_copy_list(const char *name, const char *v, char *buf, size_t size)
{
    if (strlen(v) >= size) {
        ob_sim_die(name, v, "a short comma list");
    }
    strcpy(buf, v);
}

static void ob_sim_set_ranks(ob_sim_opts *o, const char *a, const char *v)
{
    char buf[256];
    ob_sim_copy_list(a, v, buf, sizeof buf);
    o->nranks = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); NULL != tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nranks >= OB_SIM_MAX_RANKS) {
            ob_sim_die(a, v, "at most 16 rank counts");
        }
        o->ranks[o->nranks++] = (int) ob_sim_parse_long(a, tok, 1, 1 << 24);
    }
    if (0 == o->nranks) {
        ob_sim_die(a, v, "a comma list of rank counts");
    }
}

/* Turns on the scenario named \p tok; 0 if there is none of that name. */
static int ob_sim_scenario_on(ob_sim_opts *o, const char *tok)
{
    int found = 0;
    for (int k = 0; k < OB_SIM_NSCENARIOS; k++) {
        if (0 == strcmp(tok, ob_sim_scenarios[k].name)) {
            o->scenario_on[k] = 1;
            found = 1;
        }
    }
    return found;
}

static void ob_sim_set_scenarios(ob_sim_opts *o, const char *a, const char *v)
{
    char buf[256];
    int any = 0;
    ob_sim_copy_list(a, v, buf, sizeof buf);
    memset(o->scenario_on, 0, sizeof o->scenario_on);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); NULL != tok; tok = strtok_r(NULL, ",", &save)) {
        if (!ob_sim_scenario_on(o, tok)) {
            ob_sim_die(a, v, "a comma list of uniform, bimodal, hl2, hl4, hl8, slow10, vanish");
        }
        any = 1;
    }
    if (!any) {
        ob_sim_die(a, v, "a comma list of scenarios");
    }
}

static void ob_sim_set_noise_law(ob_sim_opts *o, const char *a, const char *v)
{
    if (0 == strcmp(v, "normal")) {
        o->noise_uniform = 0;
    } else if (0 == strcmp(v, "uniform")) {
        o->noise_uniform = 1;
    } else {
        ob_sim_die(a, v, "normal or uniform");
    }
}

static void ob_sim_set_seed(ob_sim_opts *o, const char *a, const char *v)
{
    o->seed = (uint64_t) ob_sim_parse_long(a, v, 0, 0x7fffffffL);
}

static void ob_sim_set_planner(ob_sim_opts *o, const char *a, const char *v)
{
    o->planner_auto = 0 == strcmp(v, "auto");
    o->planner_on[OB_SIM_CENTRAL] = 0 == strcmp(v, "central") || 0 == strcmp(v, "both") || o->planner_auto;
    o->planner_on[OB_SIM_DISTRIBUTED] = 0 == strcmp(v, "distributed") || 0 == strcmp(v, "both")
                                        || o->planner_auto;
    if (!o->planner_on[OB_SIM_CENTRAL] && !o->planner_on[OB_SIM_DISTRIBUTED]) {
        ob_sim_die(a, v, "central, distributed, both or auto");
    }
}

static void ob_sim_set_pool(ob_sim_opts *o, const char *a, const char *v)
{
    if (0 != strcmp(v, "on") && 0 != strcmp(v, "off")) {
        ob_sim_die(a, v, "on or off");
    }
    o->pool = 0 == strcmp(v, "on");
}

static void ob_sim_set_summary(ob_sim_opts *o, const char *a, const char *v)
{
    (void) a;
    o->summary = v;
}

static void ob_sim_set_spikes(ob_sim_opts *o, const char *a, const char *v)
{
    ob_sim_parse_pair(a, v, 0.0, 0.5, 1.0, 1000.0, "F,X with F in [0, 0.5] and X in [1, 1000]", &o->spike_rate,
                      &o->spike_factor);
}

static void ob_sim_set_levels(ob_sim_opts *o, const char *a, const char *v)
{
    ob_sim_parse_pair(a, v, 0.0, 100.0, 0.0, 100.0, "S,F with S and F in [0, 100] (0: the library's)",
                      &o->level_slow, &o->level_fast);
}

typedef enum ob_sim_opt_kind {
    OB_SIM_OPT_LONG,             /* a long field of ob_sim_opts, in [lo, hi] */
    OB_SIM_OPT_DOUBLE,           /* a double field, in [lo, hi] */
    OB_SIM_OPT_OTHER             /* its own setter */
} ob_sim_opt_kind;

typedef struct ob_sim_option {
    const char *name;
    ob_sim_opt_kind kind;
    size_t offset;               /* of the field in ob_sim_opts */
    double lo;
    double hi;
    void (*set)(ob_sim_opts *o, const char *name, const char *value);
} ob_sim_option;

#define OB_SIM_LONG(n, f, lo, hi) { n, OB_SIM_OPT_LONG, offsetof(ob_sim_opts, f), lo, hi, NULL }
#define OB_SIM_DOUBLE(n, f, lo, hi) { n, OB_SIM_OPT_DOUBLE, offsetof(ob_sim_opts, f), lo, hi, NULL }
#define OB_SIM_OTHER(n, fn) { n, OB_SIM_OPT_OTHER, 0, 0.0, 0.0, fn }

static const ob_sim_option ob_sim_options[] = {
    OB_SIM_OTHER("--ranks", ob_sim_set_ranks),
    OB_SIM_OTHER("--scenarios", ob_sim_set_scenarios),
    OB_SIM_LONG("--steps", steps, 8, 10000000),
    OB_SIM_LONG("--big-steps", big_steps, 8, 10000000),
    OB_SIM_LONG("--batch-per-rank", batch_per_rank, 1, 1000000),
    OB_SIM_LONG("--epoch", epoch, 1, 10000000),
    OB_SIM_DOUBLE("--change-at", change_at, 0.0, 1.0),
    OB_SIM_DOUBLE("--noise", noise, 0.0, 0.3),
    OB_SIM_OTHER("--noise-law", ob_sim_set_noise_law),
    OB_SIM_DOUBLE("--alpha", alpha, 0.0, 1e3),
    OB_SIM_DOUBLE("--beta", beta, 1e-9, 1e3),
    OB_SIM_OTHER("--seed", ob_sim_set_seed),
    OB_SIM_LONG("--period", period, 1, 1000000),
    OB_SIM_DOUBLE("--gain", gain, 1e-6, 1.0),
    OB_SIM_DOUBLE("--deadband", deadband, 0.0, 0.5),
    OB_SIM_DOUBLE("--forget", forget, 0.5, 1.0),
    OB_SIM_OTHER("--planner", ob_sim_set_planner),
    OB_SIM_OTHER("--pool", ob_sim_set_pool),
    OB_SIM_DOUBLE("--latency", latency, 0.0, 1.0),
    OB_SIM_DOUBLE("--bandwidth", bandwidth, 1e3, 1e15),
    OB_SIM_OTHER("--summary", ob_sim_set_summary),
    OB_SIM_LONG("--false-changes", false_steps, 1, 1000000000L),
    OB_SIM_OTHER("--spikes", ob_sim_set_spikes),
    OB_SIM_OTHER("--levels", ob_sim_set_levels),
};
#define OB_SIM_NOPTIONS ((int) (sizeof ob_sim_options / sizeof ob_sim_options[0]))

static void ob_sim_defaults(ob_sim_opts *o)
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
}

static void ob_sim_unknown(const char *a)
{
    fprintf(stderr, "simulate: unknown option %s\n", a);
    ob_sim_usage(stderr);
    exit(2);
}

/* Option \p a with its value \p v into \p o, through the table. */
static void ob_sim_apply(ob_sim_opts *o, const char *a, const char *v)
{
    for (int k = 0; k < OB_SIM_NOPTIONS; k++) {
        const ob_sim_option *opt = &ob_sim_options[k];
        char *field = (char *) o + opt->offset;
        if (0 != strcmp(a, opt->name)) {
            continue;
        }
        if (OB_SIM_OPT_LONG == opt->kind) {
            *(long *) (void *) field = ob_sim_parse_long(a, v, (long) opt->lo, (long) opt->hi);
        } else if (OB_SIM_OPT_DOUBLE == opt->kind) {
            *(double *) (void *) field = ob_sim_parse_double(a, v, opt->lo, opt->hi);
        } else {
            opt->set(o, a, v);
        }
        return;
    }
    ob_sim_unknown(a);
}

void ob_sim_parse_args(int argc, char **argv, ob_sim_opts *o)
{
    ob_sim_defaults(o);
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
        ob_sim_apply(o, a, argv[++i]);
    }
}
