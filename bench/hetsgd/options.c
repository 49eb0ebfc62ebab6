/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Command-line options of the training benchmark (see options.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "options.h"

static const char usage_text[] =
    "usage: mpirun -np P hetsgd [options]\n"
    "Data-parallel training of an MLP (784-256-128-10) on Fashion-MNIST, one rank per process.\n"
    "  --mode M         sync | async (default sync).  async: rank 0 is a parameter server\n"
    "                   (omnibatch_ps_*), the other ranks workers that push whenever they are done;\n"
    "                   --speeds then has one entry per worker, --policy static runs equal\n"
    "                   batches, omnibatch batches that equalise the push rates, omnilearn its\n"
    "                   rule once per epoch within [16, 96]\n"
    "  --staleness R    async: constant | inverse | adaptive, how a stale gradient's step shrinks\n"
    "                   (default adaptive)\n"
    "  --max-staleness N  async: drop gradients staler than N updates, or auto: 4 x workers\n"
    "                   (default auto)\n"
    "  --max-global-batch N  async: the most the workers' batches may sum to where a worker at\n"
    "                   its least batch cannot keep the others' push rate (omnibatch_ps_options'\n"
    "                   max_global_batch), 0 = --batch (default 0)\n"
    "  --policy P       static | omnibatch | oracle | omnilearn | chunks (default omnibatch);\n"
    "                   chunks: omnibatch's controller, each step worked in chunks that move to\n"
    "                   a rank that is free (omnibatch_next_chunk), each chunk emulated at the\n"
    "                   rank's speed while it runs\n"
    "  --speeds LIST    relative speed per rank, e.g. 1,1,0.5,0.25 (default all 1); with --bind,\n"
    "                   cores per rank\n"
    "  --schedule S     none | ramp | transient | vanish | jitter (default none)\n"
    "  --change-at F    a schedule's speed changes land F of the way into the step (F x the\n"
    "                   oracle's step at the speeds before), F in [0, 1); 0: at the step's\n"
    "                   start (default 0)\n"
    "  --alpha S        fixed per-step cost in seconds, slept by every rank (default 0)\n"
    "  --slowdown X     slow every emulated rank X times, X >= 1, or auto: 1.25 x the speeds of\n"
    "                   the ranks sharing a node / its processors (default auto); give every\n"
    "                   policy of a comparison the same value\n"
    "  --cost A,B[,C]   emulate from this cost, the same for every step and rank: a step of n\n"
    "                   samples lasts (A + B n) x slowdown / speed + alpha seconds (the real\n"
    "                   compute still runs inside it); with chunks, each chunk after a step's\n"
    "                   first lasts (C + B n) x slowdown / speed (C: measured at start-up when\n"
    "                   left out); default: the step's own CPU time instead\n"
    "  --calibrate      print the cost measured at start-up as 'hetsgd: cost A,B,C' and stop\n"
    "                   (give it to --cost of every policy of a comparison)\n"
    "  --bind           bind rank i to speeds_i cores (hwloc) with as many OpenBLAS threads;\n"
    "                   no emulation\n"
    "  --no-own-wait    wait for the other ranks only inside omnibatch_allreduce_gradient\n"
    "                   (OMNIBATCH_WAIT says how), not first in an Ibarrier tested between 50 us\n"
    "                   naps (which keeps emulated ranks that wait off the cores, and costs CPU:\n"
    "                   for ranks under a CPU quota)\n"
    "  --devices LIST   cpu or gpu per rank, e.g. cpu,cpu,cpu,gpu (default all cpu); a gpu rank\n"
    "                   computes with cuBLAS on its node's next GPU (needs --bind and a build\n"
    "                   with CUDA), the same model and data\n"
    "  --epochs N       epochs (default 8)\n"
    "  --max-steps N    stop after N global steps (default: no limit)\n"
    "  --batch B        global batch (default 1024)\n"
    "  --lr X           learning rate (default 0.1)\n"
    "  --momentum X     SGD momentum in [0, 1), 0 = plain SGD (default 0.9)\n"
    "  --seed N         seed of the weights, the data order and the schedule (default 1)\n"
    "  --subset N       train on the first N samples only (default: all)\n"
    "  --target A       test accuracy whose time is reported (default 0.85)\n"
    "  --eval-every K   also evaluate every K steps, for time-to-target resolution (default: per epoch)\n"
    "  --final-evals K  the smoothed final accuracy is the mean of the evaluations of the last\n"
    "                   K x eval-every steps, or of the last K evaluations without --eval-every\n"
    "                   (default 5)\n"
    "  --last-eval-only evaluate after the last step only, not every epoch (nor --eval-every):\n"
    "                   for runs that measure steps, under CPU quotas, where an evaluation's\n"
    "                   CPU, off the training clock, would be paid by the next steps' quota\n"
    "  --eval-after     keep a copy of the model at each evaluation point and evaluate the copies\n"
    "                   after training: no evaluation's CPU inside the run (under CPU quotas); the\n"
    "                   asynchronous mode always does so\n"
    "  --warmup N       steps left out of the steady step time (default auto: 10% of the run)\n"
    "  --data DIR       IDX files (default /usr/share/datasets/fashion-mnist)\n"
    "  --trace FILE     CSV, one row per step and rank\n"
    "  --summary FILE   append one key=value line describing the run\n"
    "  --curve FILE     every evaluation as a CSV row: train_s,samples,test_acc\n"
    "  --help           this text\n";

const char *hetsgd_options_usage(void)
{
    return usage_text;
}

const char *hetsgd_mode_name(hetsgd_mode m)
{
    return HETSGD_MODE_ASYNC == m ? "async" : "sync";
}

const char *hetsgd_policy_name(hetsgd_policy p)
{
    switch (p) {
    case HETSGD_POLICY_STATIC:
        return "static";
    case HETSGD_POLICY_ORACLE:
        return "oracle";
    case HETSGD_POLICY_OMNILEARN:
        return "omnilearn";
    case HETSGD_POLICY_CHUNKS:
        return "chunks";
    case HETSGD_POLICY_OMNIBATCH:
    default:
        return "omnibatch";
    }
}

void hetsgd_options_defaults(hetsgd_options *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = HETSGD_DEFAULT_EPOCHS;
    o->batch = HETSGD_DEFAULT_BATCH;
    o->lr = HETSGD_DEFAULT_LR;
    o->momentum = HETSGD_DEFAULT_MOMENTUM;
    o->seed = HETSGD_DEFAULT_SEED;
    o->warmup = -1;
    o->schedule = HETSGD_SCHEDULE_NONE;
    o->policy = HETSGD_POLICY_OMNIBATCH;
    o->target = HETSGD_DEFAULT_TARGET;
    o->final_evals = HETSGD_DEFAULT_FINAL_EVALS;
    o->data = HETSGD_DEFAULT_DATA;
    o->mode = HETSGD_MODE_SYNC;
    o->staleness = 2;               /* OMNIBATCH_PS_STALE_ADAPTIVE */
    o->max_staleness = -1;
    o->chunk_cost = -1.0;
}

static int parse_long(const char *name, const char *text, long lo, long hi, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if ('\0' == text[0] || '\0' != *end || 0 != errno || v < lo || v > hi) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s '%s': expected an integer from %ld to %ld", name, text, lo, hi);
    }
    *out = v;
    return OMNIBATCH_SUCCESS;
}

/* A finite real in [lo, hi], or in (lo, hi] / [lo, hi) when the open flags say so. */
static int parse_double(const char *name, const char *text, double lo, int lo_open, double hi,
                        int hi_open, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if ('\0' == text[0] || '\0' != *end || 0 != errno || !isfinite(v) ||
        v < lo || (lo_open && v == lo) || v > hi || (hi_open && v == hi)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s '%s': expected a number in %c%g, %g%c",
                       name, text, lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
    }
    *out = v;
    return OMNIBATCH_SUCCESS;
}

static int parse_speeds(const char *text, hetsgd_options *o)
{
    const char *p = text;

    o->nspeeds = 0;
    for (;;) {
        char item[64];
        size_t len = strcspn(p, ",");
        double v;
        int rc;

        if (0 == len || len >= sizeof item || HETSGD_MAX_SPEEDS == o->nspeeds) {
            return ob_fail(OMNIBATCH_ERR_ARG,
                           "--speeds '%s': expected up to %d comma-separated numbers > 0, e.g. 1,1,0.5,0.25",
                           text, HETSGD_MAX_SPEEDS);
        }
        memcpy(item, p, len);
        item[len] = '\0';
        rc = parse_double("--speeds", item, 0.0, 1, 1e6, 0, &v);
        if (OMNIBATCH_SUCCESS != rc) {
            return ob_fail(OMNIBATCH_ERR_ARG,
                           "--speeds '%s': entry '%s' is not a number > 0 (e.g. 1,1,0.5,0.25)", text, item);
        }
        o->speeds[o->nspeeds++] = v;
        if ('\0' == p[len]) {
            return OMNIBATCH_SUCCESS;
        }
        p += len + 1;
    }
}

static int parse_devices(const char *text, hetsgd_options *o)
{
    const char *p = text;

    o->ndevices = 0;
    for (;;) {
        size_t len = strcspn(p, ",");

        if (HETSGD_MAX_SPEEDS == o->ndevices) {
            return ob_fail(OMNIBATCH_ERR_ARG, "--devices '%.64s...': expected at most %d entries", text,
                           HETSGD_MAX_SPEEDS);
        }
        if (3 == len && 0 == strncmp(p, "cpu", 3)) {
            o->gpu[o->ndevices++] = 0;
        } else if (3 == len && 0 == strncmp(p, "gpu", 3)) {
            o->gpu[o->ndevices++] = 1;
        } else {
            return ob_fail(OMNIBATCH_ERR_ARG, "--devices '%s': entry '%.*s' is not cpu or gpu (e.g. "
                           "cpu,cpu,cpu,gpu)", text, (int) (len < 64 ? len : 64), p);
        }
        if ('\0' == p[len]) {
            return OMNIBATCH_SUCCESS;
        }
        p += len + 1;
    }
}

/* One number of --cost, ended by \p stop (',' or '\0'), in [lo, hi] (lo itself excluded when
 * \p lo_open); *text moves past it. */
static int cost_number(const char **text, char stop, double lo, int lo_open, double hi, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(*text, &end);
    if (end == *text || stop != *end || 0 != errno || !isfinite(*out) || *out < lo || (lo_open && *out == lo) ||
        *out > hi) {
        return 0;
    }
    *text = '\0' == *end ? end : end + 1;
    return 1;
}

/* "A,B[,C]": seconds per step and per sample of CPU, A >= 0, B > 0; C >= 0 per later chunk. */
static int parse_cost(const char *text, hetsgd_options *o)
{
    const char *p = text;
    const char *comma = strchr(text, ',');
    const int three = NULL != comma && NULL != strchr(comma + 1, ',');
    double a, b, c = -1.0;

    if (cost_number(&p, ',', 0.0, 0, 60.0, &a) && cost_number(&p, three ? ',' : '\0', 0.0, 1, 60.0, &b) &&
        (!three || cost_number(&p, '\0', 0.0, 0, 60.0, &c))) {
        o->cost[0] = a;
        o->cost[1] = b;
        o->chunk_cost = c;
        o->has_cost = 1;
        return OMNIBATCH_SUCCESS;
    }
    return ob_fail(OMNIBATCH_ERR_ARG, "--cost '%s': expected A,B or A,B,C: seconds per step in [0, 60], per "
                   "sample in (0, 60] and per later chunk in [0, 60], e.g. 0.0005,2e-5,0.0001 (what "
                   "--calibrate prints)", text);
}

/* The number of gpu entries of --devices. */
static int count_gpus(const hetsgd_options *o)
{
    int n = 0;

    for (int i = 0; i < o->ndevices; i++) {
        n += o->gpu[i];
    }
    return n;
}

/* The options that take one entry per rank; 0 when \p name is none of them. */
static int parse_per_rank(const char *name, const char *value, hetsgd_options *o, int *rc)
{
    if (0 == strcmp(name, "--speeds")) {
        *rc = parse_speeds(value, o);
        return 1;
    }
    if (0 == strcmp(name, "--devices")) {
        *rc = parse_devices(value, o);
        return 1;
    }
    return 0;
}

static int parse_choice(const char *name, const char *text, const char *const *names, int n, int *out)
{
    char allowed[256];
    size_t used = 0;

    for (int i = 0; i < n; i++) {
        if (0 == strcmp(text, names[i])) {
            *out = i;
            return OMNIBATCH_SUCCESS;
        }
    }
    /* "a, b, c or d" */
    allowed[0] = '\0';
    for (int i = 0; i < n && used < sizeof allowed; i++) {
        int w = snprintf(allowed + used, sizeof allowed - used, "%s%s", 0 == i ? "" : i + 1 == n ? " or " : ", ",
                         names[i]);

        used += w > 0 ? (size_t) w : 0;
    }
    return ob_fail(OMNIBATCH_ERR_ARG, "%s '%s': expected %s", name, text, allowed);
}

/* The asynchronous mode's limits: one server on rank 0, emulated CPU workers. */
static int check_async(const hetsgd_options *o)
{
    if (HETSGD_MODE_ASYNC != o->mode) {
        return 0 == o->max_global_batch
                   ? OMNIBATCH_SUCCESS
                   : ob_fail(OMNIBATCH_ERR_ARG, "--max-global-batch %ld with --mode sync: expected 0 (a "
                             "synchronous step is --batch)", o->max_global_batch);
    }
    if (HETSGD_POLICY_ORACLE == o->policy || HETSGD_POLICY_CHUNKS == o->policy) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--policy %s with --mode async: expected static, omnibatch "
                       "or omnilearn", hetsgd_policy_name(o->policy));
    }
    if (o->bind || o->ndevices > 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--mode async with --%s: the asynchronous mode runs emulated CPU "
                       "workers only", o->bind ? "bind" : "devices");
    }
    if (NULL != o->trace) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--trace with --mode async: the per-step trace is the synchronous "
                       "mode's (the asynchronous run's per-worker figures are in its report)");
    }
    if (o->change_at > 0.0) {
        /* A worker's speed changes between its pushes; there is no common step to land inside. */
        return ob_fail(OMNIBATCH_ERR_ARG, "--change-at %g with --mode async: expected 0 (the asynchronous "
                       "mode has no common step to place a change in)", o->change_at);
    }
    return OMNIBATCH_SUCCESS;
}

/* Options whose value is checked after all are read, in relation to each other. */
static int check_combinations(const hetsgd_options *o)
{
    int rc = check_async(o);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (HETSGD_SCHEDULE_RAMP == o->schedule && o->nspeeds > 0) {
        return ob_fail(OMNIBATCH_ERR_ARG,
                       "--schedule ramp sets every rank's speed itself: leave out --speeds");
    }
    if (o->bind && HETSGD_SCHEDULE_NONE != o->schedule) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--bind with --schedule %s: --bind takes --schedule none only",
                       hetsgd_schedule_name(o->schedule));
    }
    if (o->bind && (o->has_cost || o->calibrate)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--bind with --%s: bound ranks are not emulated",
                       o->has_cost ? "cost" : "calibrate");
    }
    if (o->change_at > 0.0 && HETSGD_SCHEDULE_NONE == o->schedule) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--change-at %g with --schedule none: no speed changes to place",
                       o->change_at);
    }
    if (count_gpus(o) > 0 && !o->bind) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--devices with gpu ranks: expected --bind too (a GPU rank "
                       "runs at its real speed, not an emulated one)");
    }
    for (int i = 0; o->bind && i < o->nspeeds; i++) {
        if (o->speeds[i] != floor(o->speeds[i]) || o->speeds[i] > 4096) {
            return ob_fail(OMNIBATCH_ERR_ARG,
                           "--speeds entry %d is %g: with --bind, expected whole numbers of cores (1 to 4096)",
                           i, o->speeds[i]);
        }
    }
    return OMNIBATCH_SUCCESS;
}

/* The field an option without a value sets, NULL for the others. */
static int *flag_of(hetsgd_options *o, const char *name)
{
    if (0 == strcmp(name, "--help")) {
        return &o->help;
    }
    if (0 == strcmp(name, "--bind")) {
        return &o->bind;
    }
    if (0 == strcmp(name, "--calibrate")) {
        return &o->calibrate;
    }
    if (0 == strcmp(name, "--no-own-wait")) {
        return &o->no_own_wait;
    }
    if (0 == strcmp(name, "--last-eval-only")) {
        return &o->last_eval_only;
    }
    if (0 == strcmp(name, "--eval-after")) {
        return &o->eval_after;
    }
    return NULL;
}

int hetsgd_options_parse(int argc, const char *const *argv, hetsgd_options *o)
{
    static const char *const policies[] = { "static", "omnibatch", "oracle", "omnilearn", "chunks" };
    static const char *const schedules[] = { "none", "ramp", "transient", "vanish", "jitter" };
    static const char *const modes[] = { "sync", "async" };
    static const char *const stalenesses[] = HETSGD_STALENESS_NAMES;

    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        const char *value = NULL;
        size_t len = NULL != eq ? (size_t) (eq - arg) : strlen(arg);
        long lv = 0;
        int choice = 0;
        int rc = OMNIBATCH_SUCCESS;

        if (0 != strncmp(arg, "--", 2) || len >= sizeof name) {
            return ob_fail(OMNIBATCH_ERR_ARG, "unexpected argument '%s': options start with -- (see --help)",
                           arg);
        }
        memcpy(name, arg, len);
        name[len] = '\0';
        if (NULL != flag_of(o, name)) {
            if (NULL != eq) {
                return ob_fail(OMNIBATCH_ERR_ARG, "%s takes no value, got '%s'", name, eq + 1);
            }
            *flag_of(o, name) = 1;
            continue;
        }
        if (NULL != eq) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return ob_fail(OMNIBATCH_ERR_ARG, "%s needs a value (see --help)", name);
        }
        if (0 == strcmp(name, "--epochs")) {
            rc = parse_long(name, value, 1, 1000000, &o->epochs);
        } else if (0 == strcmp(name, "--max-steps")) {
            rc = parse_long(name, value, 1, 1000000000, &o->max_steps);
        } else if (0 == strcmp(name, "--batch")) {
            rc = parse_long(name, value, 1, 100000000, &o->batch);
        } else if (0 == strcmp(name, "--lr")) {
            rc = parse_double(name, value, 0.0, 1, 100.0, 0, &o->lr);
        } else if (0 == strcmp(name, "--momentum")) {
            rc = parse_double(name, value, 0.0, 0, 1.0, 1, &o->momentum);
        } else if (0 == strcmp(name, "--seed")) {
            rc = parse_long(name, value, 0, 0x7fffffffffffffffL, &lv);
            o->seed = (uint64_t) lv;
        } else if (0 == strcmp(name, "--subset")) {
            rc = parse_long(name, value, 1, 100000000, &o->subset);
        } else if (0 == strcmp(name, "--eval-every")) {
            rc = parse_long(name, value, 0, 1000000000, &o->eval_every);
        } else if (0 == strcmp(name, "--final-evals")) {
            rc = parse_long(name, value, 1, 1000000, &o->final_evals);
        } else if (parse_per_rank(name, value, o, &rc)) {
            /* --speeds or --devices: rc says how it went */
        } else if (0 == strcmp(name, "--alpha")) {
            rc = parse_double(name, value, 0.0, 0, 60.0, 0, &o->alpha);
        } else if (0 == strcmp(name, "--slowdown")) {
            if (0 == strcmp(value, "auto")) {
                o->slowdown = 0.0;
            } else if (OMNIBATCH_SUCCESS != parse_double(name, value, 1.0, 0, 1000.0, 0, &o->slowdown)) {
                rc = ob_fail(OMNIBATCH_ERR_ARG, "--slowdown '%s': expected auto or a number in [1, 1000]",
                             value);
            }
        } else if (0 == strcmp(name, "--cost")) {
            rc = parse_cost(value, o);
        } else if (0 == strcmp(name, "--change-at")) {
            rc = parse_double(name, value, 0.0, 0, 1.0, 1, &o->change_at);
        } else if (0 == strcmp(name, "--warmup")) {
            if (0 == strcmp(value, "auto")) {
                o->warmup = -1;
            } else if (OMNIBATCH_SUCCESS != parse_long(name, value, 0, 1000000000, &o->warmup)) {
                rc = ob_fail(OMNIBATCH_ERR_ARG, "--warmup '%s': expected auto or an integer >= 0", value);
            }
        } else if (0 == strcmp(name, "--schedule")) {
            rc = parse_choice(name, value, schedules, 5, &choice);
            o->schedule = (hetsgd_schedule_kind) choice;
        } else if (0 == strcmp(name, "--policy")) {
            rc = parse_choice(name, value, policies, 5, &choice);
            o->policy = (hetsgd_policy) choice;
        } else if (0 == strcmp(name, "--mode")) {
            rc = parse_choice(name, value, modes, 2, &choice);
            o->mode = (hetsgd_mode) choice;
        } else if (0 == strcmp(name, "--staleness")) {
            rc = parse_choice(name, value, stalenesses, 3, &o->staleness);
        } else if (0 == strcmp(name, "--max-staleness")) {
            if (0 == strcmp(value, "auto")) {
                o->max_staleness = -1;
            } else if (OMNIBATCH_SUCCESS != parse_long(name, value, 0, 1000000000, &o->max_staleness)) {
                rc = ob_fail(OMNIBATCH_ERR_ARG, "--max-staleness '%s': expected auto or an integer from 0 "
                             "to 1000000000", value);
            }
        } else if (0 == strcmp(name, "--max-global-batch")) {
            rc = parse_long(name, value, 0, 100000000, &o->max_global_batch);
        } else if (0 == strcmp(name, "--curve")) {
            o->curve = value;
        } else if (0 == strcmp(name, "--target")) {
            rc = parse_double(name, value, 0.0, 1, 1.0, 0, &o->target);
        } else if (0 == strcmp(name, "--data")) {
            o->data = value;
        } else if (0 == strcmp(name, "--trace")) {
            o->trace = value;
        } else if (0 == strcmp(name, "--summary")) {
            o->summary = value;
        } else {
            return ob_fail(OMNIBATCH_ERR_ARG, "unknown option '%s' (see --help)", name);
        }
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
        if ('\0' == value[0]) {
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: empty value", name);
        }
    }
    return check_combinations(o);
}
