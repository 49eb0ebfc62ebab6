/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The OMNIBATCH_* settings (ob_config.h).  One table drives everything: the
 * parser, the error lines and the table of docs/configuration.md (and the
 * man page), so they cannot drift apart.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ob_config.h"
#include "ob_error.h"
#include "ob_log.h"

extern char **environ;

#define OB_STR_(x) #x
#define OB_STR(x) OB_STR_(x)

#define OB_PREFIX "OMNIBATCH_"
#define OB_PREFIX_LEN (sizeof OB_PREFIX - 1)

/* A value is shown in an error line at most this long, so that the line
 * stays readable and the "expected ..." part is never cut off. */
#define OB_SHOWN_VALUE_MAX 64

typedef enum ob_var_kind {
    OB_VAR_BOOL,                 /* int: 1/0, on/off, true/false, yes/no */
    OB_VAR_REAL,                 /* double in [lo, hi], lo excluded when lo_open */
    OB_VAR_LONG,                 /* long in [min, max], or 0 when zero_means is set */
    OB_VAR_LEVEL,                /* int in [min, max] */
    OB_VAR_BYTES,                /* size_t in [min, max], suffix K/M/G */
    OB_VAR_CHOICE,               /* an enum, by name */
    OB_VAR_PATH                  /* char[PATH_MAX], non-empty */
} ob_var_kind;

typedef struct ob_choice {
    const char *name;
    int value;
} ob_choice;

/* One setting.  The text of what is allowed is not written here: it is
 * generated from the kind and the range (ob_allowed_text), so the range is
 * stated once and the error lines, the configuration page and the man page
 * cannot drift. */
typedef struct ob_var {
    const char *name;            /* "OMNIBATCH_GAIN" */
    const char *default_value;   /* a value that parses to the default, or NULL: unset */
    const char *meaning;         /* one sentence */
    ob_var_kind kind;
    size_t offset;               /* of the field in ob_config */
    double lo, hi;               /* REAL */
    int lo_open;                 /* REAL: lo itself is excluded */
    long min, max;               /* LONG, LEVEL, BYTES */
    const char *zero_means;      /* LONG: 0 is also allowed and means this ("no limit"), or NULL */
    const ob_choice *choices;    /* CHOICE: NULL-terminated */
} ob_var;

static const ob_choice ob_report_choices[] = {
    { "off", OB_REPORT_OFF }, { "text", OB_REPORT_TEXT }, { "json", OB_REPORT_JSON }, { NULL, 0 }
};

static const ob_choice ob_convention_choices[] = {
    { "auto", OB_CONVENTION_AUTO }, { "mean", OB_CONVENTION_MEAN },
    { "divide-by-p", OB_CONVENTION_DIVIDE_BY_P }, { NULL, 0 }
};

static const ob_choice ob_planner_choices[] = {
    { "auto", OB_PLANNER_AUTO }, { "central", OB_PLANNER_CENTRAL }, { "distributed", OB_PLANNER_DISTRIBUTED },
    { NULL, 0 }
};

static const ob_choice ob_prior_choices[] = {
    { "equal", OB_PRIOR_EQUAL }, { "cores", OB_PRIOR_CORES }, { "gpus", OB_PRIOR_GPUS }, { NULL, 0 }
};

static const ob_choice ob_wait_choices[] = {
    { "auto", OB_WAIT_AUTO }, { "poll", OB_WAIT_POLL }, { "sleep", OB_WAIT_SLEEP }, { NULL, 0 }
};

#define OB_BOOL_ALLOWED "a boolean: 1/0, on/off, true/false or yes/no"
#define OB_PATH_ALLOWED "a non-empty path shorter than " OB_STR(PATH_MAX) " bytes"
#define OB_OFF(field) offsetof(ob_config, field)

/* The configuration page's order: what most users touch first. */
static const ob_var ob_vars[] = {
    { .name = "OMNIBATCH_ENABLE", .default_value = "on", .kind = OB_VAR_BOOL, .offset = OB_OFF(enable),
      .meaning = "On: the plan follows the measured speeds; off: every call passes through and the "
                 "plan stays the equal split." },
    { .name = "OMNIBATCH_GAIN", .default_value = OB_STR(OB_DEFAULT_GAIN),
      .kind = OB_VAR_REAL, .offset = OB_OFF(gain), .lo = OB_GAIN_LO, .hi = OB_GAIN_HI, .lo_open = 1,
      .meaning = "Proportional gain: the fraction of the way to the best split taken at each decision." },
    { .name = "OMNIBATCH_DEADBAND", .default_value = OB_STR(OB_DEFAULT_DEADBAND),
      .kind = OB_VAR_REAL, .offset = OB_OFF(deadband), .lo = OB_DEADBAND_LO, .hi = OB_DEADBAND_HI,
      .meaning = "The plan changes only when the predicted step time, the reduction included, falls by more "
                 "than this fraction." },
    { .name = "OMNIBATCH_FORGET", .default_value = OB_STR(OB_DEFAULT_FORGET),
      .kind = OB_VAR_REAL, .offset = OB_OFF(forget), .lo = OB_FORGET_LO, .hi = OB_FORGET_HI,
      .meaning = "Forgetting factor of the per-rank speed estimate (1: never forget)." },
    { .name = "OMNIBATCH_PERIOD", .default_value = OB_STR(OB_DEFAULT_PERIOD),
      .kind = OB_VAR_LONG, .offset = OB_OFF(period), .min = 1, .max = OB_CONFIG_STEPS_LIMIT,
      .meaning = "Steps between two exchanges of measurements (and a new plan) among the ranks." },
    { .name = "OMNIBATCH_REACT", .default_value = "on", .kind = OB_VAR_BOOL, .offset = OB_OFF(react),
      .meaning = "On: a rank whose step time changed for good (or was first measured, or a plan still "
                 "moving) brings the next exchange forward to the next step, at the cost of one small "
                 "collective per step started with the gradient allreduce (the records' allgather "
                 "where ranks poll, nothing more where they wait asleep, a one-integer allreduce with "
                 "the distributed decision); off: exchanges only every OMNIBATCH_PERIOD steps." },
    { .name = "OMNIBATCH_CHUNKS", .default_value = "off", .kind = OB_VAR_BOOL, .offset = OB_OFF(chunks),
      .meaning = "API: on: the code works each step in chunks (omnibatch_next_chunk), its own range first, "
                 "then the tail of a slower rank's, so that no rank waits for one that slowed down "
                 "inside the step; every rank must then work in chunks. off: one slice per step." },
    { .name = "OMNIBATCH_CHUNK_FLOOR", .default_value = "0",
      .kind = OB_VAR_LONG, .offset = OB_OFF(chunk_floor), .min = 1, .max = OB_CONFIG_BATCH_LIMIT,
      .zero_means = "auto",
      .meaning = "API, with OMNIBATCH_CHUNKS: least samples of a chunk (a range's last may be less), a "
                 "multiple of OMNIBATCH_GRANULARITY; 0: auto, the global batch over 32 ranks' worth "
                 "(B / (32 P)), at least the granularity, raised on each rank so that a chunk's "
                 "fixed cost (measured: its time as a + b x samples) is at most a tenth of its "
                 "time (by the median of the latest three steps' fits; a quarter before), at most the "
                 "rank's plan; a rank with nothing left of its own then takes shares below it, down to "
                 "three chunks' fixed parts." },
    { .name = "OMNIBATCH_WARMUP", .default_value = OB_STR(OB_DEFAULT_WARMUP),
      .kind = OB_VAR_LONG, .offset = OB_OFF(warmup), .min = 0, .max = OB_CONFIG_STEPS_LIMIT,
      .meaning = "First steps not measured (cold caches, lazy initialisation)." },
    { .name = "OMNIBATCH_MIN_BATCH", .default_value = "1",
      .kind = OB_VAR_LONG, .offset = OB_OFF(min_batch), .min = 0, .max = OB_CONFIG_BATCH_LIMIT,
      .meaning = "Least local batch of every rank. 0: a rank far slower than the others may be parked "
                 "(local batch 0: it joins every collective with gradient weight 0) and is probed with a "
                 "small batch now and then, so that it gets work back when it recovers." },
    { .name = "OMNIBATCH_MAX_BATCH", .default_value = "0",
      .kind = OB_VAR_LONG, .offset = OB_OFF(max_batch), .min = 1, .max = OB_CONFIG_BATCH_LIMIT,
      .zero_means = "no limit",
      .meaning = "Largest local batch of every rank (memory limit); at least OMNIBATCH_MIN_BATCH and "
                 "OMNIBATCH_GRANULARITY; 0: no limit." },
    { .name = "OMNIBATCH_GRANULARITY", .default_value = "1",
      .kind = OB_VAR_LONG, .offset = OB_OFF(granularity), .min = 1, .max = OB_CONFIG_BATCH_LIMIT,
      .meaning = "Local batches are multiples of this (8 suits GPUs); one rank also carries what is "
                 "left of the global batch." },
    { .name = "OMNIBATCH_GLOBAL_BATCH", .default_value = "0",
      .kind = OB_VAR_LONG, .offset = OB_OFF(global_batch), .min = 1, .max = OB_CONFIG_BATCH_LIMIT,
      .zero_means = "unknown",
      .meaning = "Preload mode: the global batch of the unmodified code, so the report can give the "
                 "split in samples; 0: unknown. Checked at start-up against the ranks: at least "
                 "OMNIBATCH_MIN_BATCH times P, at most OMNIBATCH_MAX_BATCH times P, at least "
                 "OMNIBATCH_GRANULARITY. An API context's global batch wins (a different value is "
                 "warned about)." },
    { .name = "OMNIBATCH_MIN_BYTES", .default_value = OB_STR(OB_DEFAULT_MIN_BYTES),
      .kind = OB_VAR_BYTES, .offset = OB_OFF(min_bytes), .min = 1, .max = (long) OB_CONFIG_BYTES_LIMIT,
      .meaning = "Preload mode: least payload, in bytes, of an allreduce taken for a gradient allreduce." },
    { .name = "OMNIBATCH_CALLS_PER_STEP", .default_value = "0",
      .kind = OB_VAR_LONG, .offset = OB_OFF(calls_per_step), .min = 1, .max = OB_CONFIG_CALLS_LIMIT,
      .zero_means = "detect",
      .meaning = "Preload mode: gradient allreduces per training step (bucketed codes issue several); "
                 "0: found from the repeating pattern." },
    { .name = "OMNIBATCH_WEIGHT", .default_value = "off", .kind = OB_VAR_BOOL, .offset = OB_OFF(weight),
      .meaning = "Preload mode: scale each rank's gradient by its share of the global batch, for a "
                 "code that takes its batch from the API but reduces itself: only the learned step's "
                 "gradient allreduces on the API context's communicator (or a congruent one), never "
                 "before the step's pattern is known." },
    { .name = "OMNIBATCH_CONVENTION", .default_value = "auto",
      .kind = OB_VAR_CHOICE, .offset = OB_OFF(convention), .choices = ob_convention_choices,
      .meaning = "What the code does with the summed gradient. mean: uses it as the gradient (each "
                 "rank scales by `b_i/B`); divide-by-p: divides it by P (each rank scales by "
                 "`P*b_i/B`); auto: the API's option, divide-by-p in preload mode." },
    { .name = "OMNIBATCH_REPORT", .default_value = "text",
      .kind = OB_VAR_CHOICE, .offset = OB_OFF(report), .choices = ob_report_choices,
      .meaning = "Format of the report rank 0 writes at MPI_Finalize, when some rank saw a "
                 "training step or this (or OMNIBATCH_REPORT_FILE) is set." },
    { .name = "OMNIBATCH_REPORT_FILE", .kind = OB_VAR_PATH, .offset = OB_OFF(report_file),
      .meaning = "Where the report goes; unset: standard error. Opened at start-up: a path that "
                 "cannot be written stops the run there." },
    { .name = "OMNIBATCH_TRACE", .kind = OB_VAR_PATH, .offset = OB_OFF(trace_file),
      .meaning = "CSV file with one row per step and rank (step, rank, batch, compute_s, blocked_s, "
                 "reduction_s, waiting_s, time_s: the step's end in seconds since the epoch, host, and "
                 "what the kernel gave the rank in the step: cpu_s, involuntary_switches, off_cpu_s, "
                 "throttled_s; for a step worked in chunks, the samples taken from other ranks' "
                 "ranges and given of its own: taken, given), written as the run goes (rows reach it within a few seconds); unset: no trace. "
                 "Opened at start-up; must be another file than OMNIBATCH_REPORT_FILE." },
    { .name = "OMNIBATCH_TIMELINE", .kind = OB_VAR_PATH, .offset = OB_OFF(timeline_file),
      .meaning = "Chrome trace-event JSON file (Perfetto, chrome://tracing): one track per rank with "
                 "compute, waiting and reduction spans per step, the batch as an argument, and plan "
                 "changes as instant events, written as the run goes; unset: no timeline. Opened at "
                 "start-up; must differ from OMNIBATCH_TRACE and OMNIBATCH_REPORT_FILE." },
    { .name = "OMNIBATCH_PROFILE", .kind = OB_VAR_PATH, .offset = OB_OFF(profile_file),
      .meaning = "Preload mode: rank 0 writes the measured split (each rank's host, cores and model) "
                 "there at MPI_Finalize; when the file already holds one, the report first compares "
                 "this run's split with it. Unset: none." },
    { .name = "OMNIBATCH_PRIOR", .default_value = "equal",
      .kind = OB_VAR_CHOICE, .offset = OB_OFF(prior), .choices = ob_prior_choices,
      .meaning = "First plan, before anything is measured: equal shares, or in proportion to the "
                 "cores (hwloc) or GPUs of each rank (its own: those CUDA_VISIBLE_DEVICES lists, else "
                 "those near its cores)." },
    { .name = "OMNIBATCH_PLANNER", .default_value = "auto",
      .kind = OB_VAR_CHOICE, .offset = OB_OFF(planner), .choices = ob_planner_choices,
      .meaning = "Who decides the plan. central: every rank gathers every rank's record and solves the "
                 "whole plan (O(P) per rank); distributed: each rank keeps its own, and a few small "
                 "collectives give every rank the same plan (O(1) per rank); auto: distributed from "
                 OB_STR(OB_PLANNER_AUTO_RANKS) " ranks on (central when the granularity does not divide "
                 "the global batch)." },
    { .name = "OMNIBATCH_WAIT", .default_value = "auto",
      .kind = OB_VAR_CHOICE, .offset = OB_OFF(wait), .choices = ob_wait_choices,
      .meaning = "How omnibatch_allreduce_gradient() (and omnibatch_next_step()'s plan exchange and "
                 "OMNIBATCH_REACT's collective) waits for the other ranks. poll: in the "
                 "MPI library's blocking allreduce (Open MPI polls, a core busy all the wait); "
                 "sleep: a nonblocking allreduce tested between naps, long while the last rank's arrival (learnt from the last steps) is far, short near it "
                 "and while the data move, so that a rank under a CPU quota (containers, "
                 "cgroups) does not spend in polling the quota its compute needs; auto: sleep where "
                 "the rank's CPU quota is under one core, else poll. May differ between ranks: where any rank "
                 "sleeps, all do (a blocking allreduce does not match a nonblocking one)." },
    { .name = "OMNIBATCH_NODE_SUM", .default_value = "on", .kind = OB_VAR_BOOL, .offset = OB_OFF(node_sum),
      .meaning = "Where the ranks wait asleep (OMNIBATCH_WAIT) and all share one node: on: "
                 "omnibatch_allreduce_gradient() sums host gradients in shared memory, a waiting "
                 "rank asleep in the kernel until the last rank arrives or the sum is done (one wake, "
                 "not a nap's tens); each rank adds its share of the parts, in rank order, then any part "
                 "left of a rank the kernel stopped; off: MPI's nonblocking allreduce, tested between "
                 "naps. Where any rank has it off, every rank has." },
    { .name = "OMNIBATCH_CPU_QUOTA", .default_value = "on", .kind = OB_VAR_BOOL, .offset = OB_OFF(cpu_quota),
      .meaning = "On: a rank under a CPU quota (cgroup v1 cpu.cfs_quota_us, v2 cpu.max, read at "
                 "omnibatch_create and again every second, so that a resized one is followed) also "
                 "measures its CPU time per step, outside its waits for the other ranks, and the "
                 "controller plans on that CPU time over the quota (or on the least compute of its "
                 "last steps at its batch, where that is longer); in the asynchronous mode a "
                 "worker's cycle is learnt as the wall its CPU takes, at least its CPU over the "
                 "quota (docs/async.md); off: on its compute alone (a worker's cycles as they "
                 "were)." },
    { .name = "OMNIBATCH_POOL", .default_value = "on", .kind = OB_VAR_BOOL, .offset = OB_OFF(pool),
      .meaning = "On: a rank whose time per sample lies among those of " OB_STR(OB_POOL_MIN_RANKS)
                 " or more ranks (bins 1.25x wide) is planned on its own model shrunk towards their mean, as far "
                 "as their true speeds agree (empirical Bayes): ranks of one kind of node are planned "
                 "on what all of them measured; off: each rank on its own timings." },
    { .name = "OMNIBATCH_VERIFY", .default_value = "off", .kind = OB_VAR_BOOL, .offset = OB_OFF(verify),
      .meaning = "Check at every exchange that all ranks computed the same plan." },
    { .name = "OMNIBATCH_DEBUG", .default_value = "0",
      .kind = OB_VAR_LEVEL, .offset = OB_OFF(debug), .min = 0, .max = OB_CONFIG_DEBUG_LIMIT,
      .meaning = "Debug messages on standard error, more at each level (0: none). May differ "
                 "between ranks (as OMNIBATCH_WAIT may)." },
    { .name = "OMNIBATCH_LIBRARY", .kind = OB_VAR_PATH, .offset = OB_OFF(library),
      .meaning = "Python package: the libomnibatch.so to load when none is in the process already "
                 "(before the installed one)." },
};

#define OB_NVARS (sizeof ob_vars / sizeof ob_vars[0])

/* The generated "allowed" text of each row, and the rows as handed out. */
#define OB_ALLOWED_MAX 160
static char ob_allowed[OB_NVARS][OB_ALLOWED_MAX];
static ob_config_doc ob_docs[OB_NVARS];
static pthread_once_t ob_docs_once = PTHREAD_ONCE_INIT;

/* A byte count as the parser reads it: the largest suffix that divides it. */
static void ob_bytes_text(long n, char *out, size_t size)
{
    static const char suffix[] = { 'G', 'M', 'K' };
    static const int shift[] = { 30, 20, 10 };

    for (size_t k = 0; k < sizeof suffix; k++) {
        long unit = 1L << shift[k];

        if (n >= unit && 0 == n % unit) {
            snprintf(out, size, "%ld%c", n / unit, suffix[k]);
            return;
        }
    }
    snprintf(out, size, "%ld", n);
}

/* "a, b or c" from the names of a choice. */
static void ob_choices_text(const ob_choice *c, char *out, size_t size)
{
    size_t len = 0;

    out[0] = '\0';
    for (size_t k = 0; NULL != c[k].name; k++) {
        const char *sep = 0 == k ? "" : NULL == c[k + 1].name ? " or " : ", ";

        len += (size_t) snprintf(out + len, len < size ? size - len : 0, "%s%s", sep, c[k].name);
        if (len >= size) {
            return;
        }
    }
}

static void ob_allowed_text(const ob_var *v, char *out, size_t size)
{
    char lo[32], hi[32];

    switch (v->kind) {
    case OB_VAR_BOOL:
        snprintf(out, size, "%s", OB_BOOL_ALLOWED);
        break;
    case OB_VAR_REAL:
        snprintf(out, size, "a number in %c%g, %g]", v->lo_open ? '(' : '[', v->lo, v->hi);
        break;
    case OB_VAR_LONG:
    case OB_VAR_LEVEL:
        if (NULL != v->zero_means) {
            snprintf(out, size, "0 (%s) or an integer in [%ld, %ld]", v->zero_means, v->min, v->max);
        } else {
            snprintf(out, size, "an integer in [%ld, %ld]", v->min, v->max);
        }
        break;
    case OB_VAR_BYTES:
        ob_bytes_text(v->min, lo, sizeof lo);
        ob_bytes_text(v->max, hi, sizeof hi);
        snprintf(out, size, "a byte count in [%s, %s], with an optional suffix K, M or G "
                 "(KiB, MiB, GiB)", lo, hi);
        break;
    case OB_VAR_CHOICE:
        ob_choices_text(v->choices, out, size);
        break;
    case OB_VAR_PATH:
        snprintf(out, size, "%s", OB_PATH_ALLOWED);
        break;
    }
}

static void ob_docs_build(void)
{
    for (size_t i = 0; i < OB_NVARS; i++) {
        ob_allowed_text(&ob_vars[i], ob_allowed[i], sizeof ob_allowed[i]);
        ob_docs[i].name = ob_vars[i].name;
        ob_docs[i].allowed = ob_allowed[i];
        ob_docs[i].default_value = ob_vars[i].default_value;
        ob_docs[i].meaning = ob_vars[i].meaning;
    }
}

static const char *ob_allowed_of(const ob_var *v)
{
    pthread_once(&ob_docs_once, ob_docs_build);
    return ob_allowed[v - ob_vars];
}

const char *ob_config_allowed(const char *name)
{
    for (size_t i = 0; i < OB_NVARS; i++) {
        if (0 == strcmp(ob_vars[i].name, name)) {
            return ob_allowed_of(&ob_vars[i]);
        }
    }
    return NULL;
}

static const char *ob_choice_name(const ob_choice *choices, int value);

_Static_assert(OB_NVARS <= OB_CONFIG_MAX_VARS, "the agreement at MPI_Init carries OB_CONFIG_MAX_VARS settings");

/* The choice fields are written through int: an enum with these values has
 * int's size and representation. */
_Static_assert(sizeof(ob_convention) == sizeof(int), "ob_convention stored as int");
_Static_assert(sizeof(ob_report_format) == sizeof(int), "ob_report_format stored as int");
_Static_assert(sizeof(ob_prior) == sizeof(int), "ob_prior stored as int");
_Static_assert(sizeof(ob_planner_kind) == sizeof(int), "ob_planner_kind stored as int");

void ob_config_defaults(ob_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->enable = 1;
    cfg->gain = OB_DEFAULT_GAIN;
    cfg->deadband = OB_DEFAULT_DEADBAND;
    cfg->forget = OB_DEFAULT_FORGET;
    cfg->period = OB_DEFAULT_PERIOD;
    cfg->warmup = OB_DEFAULT_WARMUP;
    cfg->min_batch = 1;
    cfg->max_batch = 0;
    cfg->granularity = 1;
    cfg->global_batch = 0;
    cfg->min_bytes = OB_DEFAULT_MIN_BYTES;
    cfg->calls_per_step = 0;
    cfg->weight = 0;
    cfg->convention = OB_CONVENTION_AUTO;
    cfg->report = OB_REPORT_TEXT;
    cfg->report_file[0] = '\0';
    cfg->trace_file[0] = '\0';
    cfg->timeline_file[0] = '\0';
    cfg->profile_file[0] = '\0';
    cfg->prior = OB_PRIOR_EQUAL;
    cfg->planner = OB_PLANNER_AUTO;
    cfg->verify = 0;
    cfg->react = 1;
    cfg->chunks = 0;
    cfg->chunk_floor = 0;
    cfg->wait = OB_WAIT_AUTO;
    cfg->node_sum = 1;
    cfg->cpu_quota = 1;
    cfg->pool = 1;
    cfg->debug = 0;
    cfg->library[0] = '\0';
}

/* ---- the value, as shown in an error line -------------------------------- */

/* Control characters are escaped so that the error stays one line; a long
 * value is cut, so the line still says what is allowed. */
static void ob_show_value(const char *value, char *out, size_t size)
{
    size_t n = 0;
    size_t shown = 0;

    for (const unsigned char *p = (const unsigned char *) value; '\0' != *p; p++, shown++) {
        if (OB_SHOWN_VALUE_MAX == shown) {
            snprintf(out + n, size - n, "...");
            return;
        }
        if (n + 5 >= size) {
            break;
        }
        if (*p < 0x20 || 0x7f == *p) {
            n += (size_t) snprintf(out + n, size - n, "\\x%02x", *p);
        } else {
            out[n++] = (char) *p;
        }
    }
    out[n] = '\0';
}

static int ob_bad_value(const ob_var *v, const char *value)
{
    char shown[4 * OB_SHOWN_VALUE_MAX + 8];

    ob_show_value(value, shown, sizeof shown);
    return ob_fail(OMNIBATCH_ERR_CONFIG, "%s='%s': expected %s", v->name, shown, ob_allowed_of(v));
}

/* ---- spellings ------------------------------------------------------------ */

static int ob_all_digits(const char *s, const char **end)
{
    const char *p = s;

    while (isdigit((unsigned char) *p)) {
        p++;
    }
    *end = p;
    return p != s;
}

/* [+-]digits: strtol alone would also take leading spaces and "0x". */
static int ob_parse_long(const char *s, long *out)
{
    const char *p = s;
    const char *end;
    char *stop;
    long x;

    if ('+' == *p || '-' == *p) {
        p++;
    }
    if (!ob_all_digits(p, &end) || '\0' != *end) {
        return -1;
    }
    errno = 0;
    x = strtol(s, &stop, 10);
    if (0 != errno || '\0' != *stop) {
        return -1;
    }
    *out = x;
    return 0;
}

/* [+-](digits[.digits]|.digits)([eE][+-]digits): no hex, inf or nan, which
 * strtod would take.  Converted in the C locale, so an application that
 * set a locale with a decimal comma still reads "0.5" as a half. */
static int ob_parse_real(const char *s, double *out)
{
    const char *p = s;
    const char *end;
    int digits = 0;
    char *stop;
    double x;
    locale_t c_locale;
    locale_t old = (locale_t) 0;

    if ('+' == *p || '-' == *p) {
        p++;
    }
    if (ob_all_digits(p, &end)) {
        digits = 1;
    }
    p = end;
    if ('.' == *p) {
        p++;
        if (ob_all_digits(p, &end)) {
            digits = 1;
        }
        p = end;
    }
    if (!digits) {
        return -1;
    }
    if ('e' == *p || 'E' == *p) {
        p++;
        if ('+' == *p || '-' == *p) {
            p++;
        }
        if (!ob_all_digits(p, &end)) {
            return -1;
        }
        p = end;
    }
    if ('\0' != *p) {
        return -1;
    }
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t) 0);
    if ((locale_t) 0 != c_locale) {
        old = uselocale(c_locale);
    }
    errno = 0;
    x = strtod(s, &stop);
    if ((locale_t) 0 != c_locale) {
        uselocale(old);
        freelocale(c_locale);
    }
    /* ERANGE: overflow, or an underflow that lost the value. */
    if (0 != errno || '\0' != *stop || !isfinite(x)) {
        return -1;
    }
    *out = x;
    return 0;
}

static int ob_parse_bytes(const char *s, long max, size_t *out)
{
    const char *end;
    char digits[32];
    size_t len;
    long x;
    long mult = 1;

    if (!ob_all_digits(s, &end)) {
        return -1;
    }
    len = (size_t) (end - s);
    if ('\0' != *end) {
        switch (*end) {
        case 'K':
        case 'k':
            mult = 1L << 10;
            break;
        case 'M':
        case 'm':
            mult = 1L << 20;
            break;
        case 'G':
        case 'g':
            mult = 1L << 30;
            break;
        default:
            return -1;
        }
        if ('\0' != end[1]) {
            return -1;
        }
    }
    if (len >= sizeof digits) {
        return -1;
    }
    memcpy(digits, s, len);
    digits[len] = '\0';
    if (0 != ob_parse_long(digits, &x) || x < 1 || x > max / mult) {
        return -1;
    }
    *out = (size_t) (x * mult);
    return 0;
}

static int ob_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = { "1", "on", "true", "yes" };
    static const char *const no[] = { "0", "off", "false", "no" };

    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (0 == strcasecmp(s, yes[i])) {
            *out = 1;
            return 0;
        }
        if (0 == strcasecmp(s, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

static int ob_parse_choice(const ob_choice *choices, const char *s, int *out)
{
    for (const ob_choice *c = choices; NULL != c->name; c++) {
        if (0 == strcasecmp(s, c->name)) {
            *out = c->value;
            return 0;
        }
    }
    return -1;
}

/* ---- one variable ----------------------------------------------------------- */

static int ob_set_var(const ob_var *v, const char *value, ob_config *cfg)
{
    char *field = (char *) cfg + v->offset;
    double real;
    long count;
    size_t bytes;
    int flag;

    switch (v->kind) {
    case OB_VAR_BOOL:
        if (0 != ob_parse_bool(value, &flag)) {
            return ob_bad_value(v, value);
        }
        *(int *) (void *) field = flag;
        break;
    case OB_VAR_REAL:
        if (0 != ob_parse_real(value, &real) || real > v->hi
            || (v->lo_open ? real <= v->lo : real < v->lo)) {
            return ob_bad_value(v, value);
        }
        *(double *) (void *) field = real;
        break;
    case OB_VAR_LONG:
    case OB_VAR_LEVEL:
        if (0 != ob_parse_long(value, &count)
            || !((count >= v->min && count <= v->max) || (NULL != v->zero_means && 0 == count))) {
            return ob_bad_value(v, value);
        }
        if (OB_VAR_LONG == v->kind) {
            *(long *) (void *) field = count;
        } else {
            *(int *) (void *) field = (int) count;
        }
        break;
    case OB_VAR_BYTES:
        if (0 != ob_parse_bytes(value, v->max, &bytes)) {
            return ob_bad_value(v, value);
        }
        *(size_t *) (void *) field = bytes;
        break;
    case OB_VAR_CHOICE:
        if (0 != ob_parse_choice(v->choices, value, &flag)) {
            return ob_bad_value(v, value);
        }
        *(int *) (void *) field = flag;
        break;
    case OB_VAR_PATH:
        if ('\0' == value[0] || strlen(value) >= PATH_MAX) {
            return ob_bad_value(v, value);
        }
        memcpy(field, value, strlen(value) + 1);
        break;
    }
    return OMNIBATCH_SUCCESS;
}

/* Two outputs set to the same file would overwrite each other. */
static int ob_check_distinct_files(const char *name, const char *file, const char *other_name,
                                   const char *other)
{
    char shown[4 * OB_SHOWN_VALUE_MAX + 8];

    if ('\0' == file[0] || 0 != strcmp(file, other)) {
        return OMNIBATCH_SUCCESS;
    }
    ob_show_value(file, shown, sizeof shown);
    return ob_fail(OMNIBATCH_ERR_CONFIG, "%s='%s': expected a file other than %s", name, shown,
                   other_name);
}

/* Rules between variables, checked once all are read. */
static int ob_check_together(const ob_config *cfg)
{
    if (0 != cfg->max_batch && cfg->max_batch < cfg->min_batch) {
        return ob_fail(OMNIBATCH_ERR_CONFIG,
                       "OMNIBATCH_MAX_BATCH='%ld': expected 0 (no limit) or at least "
                       "OMNIBATCH_MIN_BATCH=%ld", cfg->max_batch, cfg->min_batch);
    }
    if (0 != cfg->max_batch && cfg->max_batch < cfg->granularity) {
        return ob_fail(OMNIBATCH_ERR_CONFIG,
                       "OMNIBATCH_MAX_BATCH='%ld': expected 0 (no limit) or at least "
                       "OMNIBATCH_GRANULARITY=%ld", cfg->max_batch, cfg->granularity);
    }
    if (0 != cfg->global_batch && cfg->global_batch < cfg->min_batch) {
        return ob_fail(OMNIBATCH_ERR_CONFIG,
                       "OMNIBATCH_GLOBAL_BATCH='%ld': expected 0 (unknown) or at least "
                       "OMNIBATCH_MIN_BATCH=%ld", cfg->global_batch, cfg->min_batch);
    }
    if (OMNIBATCH_SUCCESS != ob_check_distinct_files("OMNIBATCH_TRACE", cfg->trace_file,
                                                     "OMNIBATCH_REPORT_FILE", cfg->report_file)
        || OMNIBATCH_SUCCESS != ob_check_distinct_files("OMNIBATCH_TIMELINE", cfg->timeline_file,
                                                        "OMNIBATCH_REPORT_FILE", cfg->report_file)
        || OMNIBATCH_SUCCESS != ob_check_distinct_files("OMNIBATCH_TIMELINE", cfg->timeline_file,
                                                        "OMNIBATCH_TRACE", cfg->trace_file)) {
        return OMNIBATCH_ERR_CONFIG;
    }
    return OMNIBATCH_SUCCESS;
}

/* ---- agreement between ranks ------------------------------------------------ */

/* The settings each rank may have its own: how much it says, and how it
 * waits in the gradient allreduce (neither changes what the ranks compute). */
static int ob_var_per_rank(const ob_var *v)
{
    return OB_OFF(debug) == v->offset || OB_OFF(wait) == v->offset;
}

size_t ob_config_count(void)
{
    return OB_NVARS;
}

int ob_config_must_agree(size_t i)
{
    return i < OB_NVARS && !ob_var_per_rank(&ob_vars[i]);
}

const char *ob_config_name(size_t i)
{
    return i < OB_NVARS ? ob_vars[i].name : NULL;
}

void ob_config_value(const ob_config *cfg, size_t i, char *buf, size_t size)
{
    const ob_var *v;
    const char *field;

    if (0 == size) {
        return;
    }
    buf[0] = '\0';
    if (i >= OB_NVARS) {
        return;
    }
    v = &ob_vars[i];
    field = (const char *) cfg + v->offset;
    switch (v->kind) {
    case OB_VAR_BOOL:
        snprintf(buf, size, "%s", *(const int *) (const void *) field ? "on" : "off");
        break;
    case OB_VAR_REAL:
        snprintf(buf, size, "%.17g", *(const double *) (const void *) field);
        break;
    case OB_VAR_LONG:
        snprintf(buf, size, "%ld", *(const long *) (const void *) field);
        break;
    case OB_VAR_LEVEL:
        snprintf(buf, size, "%d", *(const int *) (const void *) field);
        break;
    case OB_VAR_BYTES:
        snprintf(buf, size, "%zu", *(const size_t *) (const void *) field);
        break;
    case OB_VAR_CHOICE:
        snprintf(buf, size, "%s", ob_choice_name(v->choices, *(const int *) (const void *) field));
        break;
    case OB_VAR_PATH:
        if ('\0' == field[0]) {
            snprintf(buf, size, "(unset)");
        } else {
            char shown[4 * OB_SHOWN_VALUE_MAX + 8];

            ob_show_value(field, shown, sizeof shown);
            snprintf(buf, size, "%s", shown);
        }
        break;
    }
}

uint64_t ob_config_hash(const ob_config *cfg, size_t i)
{
    /* FNV-1a over the full value (a path is not cut as ob_config_value
     * shows it), folded below OB_CONFIG_HASH_TOP. */
    char value[PATH_MAX + 32];
    uint64_t h = 14695981039346656037ULL;
    const ob_var *v;

    if (!ob_config_must_agree(i)) {
        return 0;
    }
    v = &ob_vars[i];
    if (OB_VAR_PATH == v->kind) {
        snprintf(value, sizeof value, "%s", (const char *) cfg + v->offset);
    } else {
        ob_config_value(cfg, i, value, sizeof value);
    }
    for (const unsigned char *p = (const unsigned char *) value; '\0' != *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h % OB_CONFIG_HASH_TOP;
}

int ob_config_check_ranks(const ob_config *cfg, int nranks)
{
    long B = cfg->global_batch;
    long P = nranks;

    if (B <= 0 || P <= 0) {
        return OMNIBATCH_SUCCESS;
    }
    /* Each product stays below 2^61: both factors are at most 10^9 and 2^31. */
    if (cfg->min_batch * P > B) {
        return ob_fail(OMNIBATCH_ERR_CONFIG,
                       "OMNIBATCH_MIN_BATCH='%ld': %ld ranks need at least %ld samples, more than "
                       "OMNIBATCH_GLOBAL_BATCH=%ld; expected at most %ld", cfg->min_batch, P,
                       cfg->min_batch * P, B, B / P);
    }
    if (0 != cfg->max_batch && cfg->max_batch * P < B) {
        return ob_fail(OMNIBATCH_ERR_CONFIG,
                       "OMNIBATCH_MAX_BATCH='%ld': %ld ranks hold at most %ld samples, fewer than "
                       "OMNIBATCH_GLOBAL_BATCH=%ld; expected 0 (no limit) or at least %ld",
                       cfg->max_batch, P, cfg->max_batch * P, B, (B + P - 1) / P);
    }
    if (cfg->granularity > B) {
        return ob_fail(OMNIBATCH_ERR_CONFIG,
                       "OMNIBATCH_GRANULARITY='%ld': expected at most OMNIBATCH_GLOBAL_BATCH=%ld",
                       cfg->granularity, B);
    }
    return OMNIBATCH_SUCCESS;
}

/* ---- unknown names ------------------------------------------------------------ */

/* Edit distance with transpositions (optimal string alignment), ignoring
 * case: "GIAN" is one edit from "GAIN". */
static size_t ob_edit_distance(const char *a, const char *b)
{
    enum { OB_NAME_MAX = 64 };
    size_t la = strlen(a);
    size_t lb = strlen(b);
    unsigned char d[OB_NAME_MAX + 1][OB_NAME_MAX + 1];

    if (la > OB_NAME_MAX || lb > OB_NAME_MAX) {
        return (size_t) -1;
    }
    for (size_t i = 0; i <= la; i++) {
        d[i][0] = (unsigned char) i;
    }
    for (size_t j = 0; j <= lb; j++) {
        d[0][j] = (unsigned char) j;
    }
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = toupper((unsigned char) a[i - 1]) == toupper((unsigned char) b[j - 1]) ? 0 : 1;
            size_t del = (size_t) d[i - 1][j] + 1;
            size_t ins = (size_t) d[i][j - 1] + 1;
            size_t sub = (size_t) d[i - 1][j - 1] + cost;
            size_t best = del < ins ? del : ins;

            if (sub < best) {
                best = sub;
            }
            if (i > 1 && j > 1
                && toupper((unsigned char) a[i - 1]) == toupper((unsigned char) b[j - 2])
                && toupper((unsigned char) a[i - 2]) == toupper((unsigned char) b[j - 1])
                && (size_t) d[i - 2][j - 2] + 1 < best) {
                best = (size_t) d[i - 2][j - 2] + 1;
            }
            d[i][j] = (unsigned char) best;
        }
    }
    return d[la][lb];
}

/* The known name closest to \p name, or NULL when none is a plausible
 * typo: within 2 edits or a third of its length, or a known name with
 * something appended (OMNIBATCH_TRACE_FILE for OMNIBATCH_TRACE). */
static const char *ob_closest_name(const char *name)
{
    const char *best = NULL;
    size_t best_d = (size_t) -1;

    for (size_t i = 0; i < OB_NVARS; i++) {
        const char *known = ob_vars[i].name + OB_PREFIX_LEN;
        size_t d = ob_edit_distance(name + OB_PREFIX_LEN, known);
        size_t limit = strlen(known) / 3 > 2 ? strlen(known) / 3 : 2;
        int extended = 0 == strncasecmp(name + OB_PREFIX_LEN, known, strlen(known));

        if ((d <= limit || extended) && d < best_d) {
            best = ob_vars[i].name;
            best_d = d;
        }
    }
    return best;
}

static void ob_default_warn(void *ctx, const char *name, const char *suggestion)
{
    (void) ctx;
    if (NULL != suggestion) {
        ob_log_warn_rank0("unknown setting %s ignored (did you mean %s?)", name, suggestion);
    } else {
        ob_log_warn_rank0("unknown setting %s ignored", name);
    }
}

static const ob_var *ob_find_var(const char *name, size_t len)
{
    for (size_t i = 0; i < OB_NVARS; i++) {
        if (strlen(ob_vars[i].name) == len && 0 == strncmp(ob_vars[i].name, name, len)) {
            return &ob_vars[i];
        }
    }
    return NULL;
}

static void ob_warn_unknown(char *const *envp, ob_config_warn_fn warn, void *ctx)
{
    for (char *const *e = envp; NULL != *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t len = NULL != eq ? (size_t) (eq - *e) : strlen(*e);
        char name[128];

        if (0 != strncmp(*e, OB_PREFIX, OB_PREFIX_LEN) || NULL != ob_find_var(*e, len)) {
            continue;
        }
        if (len >= sizeof name) {
            len = sizeof name - 1;
        }
        memcpy(name, *e, len);
        name[len] = '\0';
        warn(ctx, name, ob_closest_name(name));
    }
}

/* The OMNIBATCH_* names of envp that are no setting, hashed whatever their
 * order (a sum of each name's FNV-1a), folded below OB_CONFIG_HASH_TOP; 0
 * when there are none. */
static void ob_hash_unknown(void *ctx, const char *name, const char *suggestion)
{
    uint64_t *sum = ctx;
    uint64_t h = 14695981039346656037ULL;

    (void) suggestion;
    for (const unsigned char *p = (const unsigned char *) name; '\0' != *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    *sum += h % OB_CONFIG_HASH_TOP + 1;
}

uint64_t ob_config_unknown_hash(char *const *envp)
{
    uint64_t sum = 0;

    if (NULL != envp) {
        ob_warn_unknown(envp, ob_hash_unknown, &sum);
    }
    return sum % OB_CONFIG_HASH_TOP;
}

static void ob_rank_warn(void *ctx, const char *name, const char *suggestion)
{
    (void) ctx;
    if (NULL != suggestion) {
        ob_log_warn("unknown setting %s ignored (did you mean %s?)", name, suggestion);
    } else {
        ob_log_warn("unknown setting %s ignored", name);
    }
}

void ob_config_warn_unknown(char *const *envp)
{
    if (NULL != envp) {
        ob_warn_unknown(envp, ob_rank_warn, NULL);
    }
}

/* The first "NAME=value" of envp for this variable, as getenv() finds it. */
static const char *ob_lookup(char *const *envp, const char *name)
{
    size_t len = strlen(name);

    for (char *const *e = envp; NULL != *e; e++) {
        if (0 == strncmp(*e, name, len) && '=' == (*e)[len]) {
            return *e + len + 1;
        }
    }
    return NULL;
}

int ob_config_from_env(ob_config *cfg, char *const *envp, ob_config_warn_fn warn, void *ctx)
{
    ob_config next;
    int rc;

    if (NULL == cfg) {
        return ob_fail(OMNIBATCH_ERR_ARG, "cfg=NULL: expected settings to fill");
    }
    if (NULL == envp) {
        return OMNIBATCH_SUCCESS;
    }
    ob_warn_unknown(envp, NULL != warn ? warn : ob_default_warn, ctx);

    /* Into a copy: on failure the caller's settings stay as they were. */
    next = *cfg;
    for (size_t i = 0; i < OB_NVARS; i++) {
        const char *value = ob_lookup(envp, ob_vars[i].name);

        if (NULL != value) {
            rc = ob_set_var(&ob_vars[i], value, &next);
            if (OMNIBATCH_SUCCESS != rc) {
                return rc;
            }
        }
    }
    rc = ob_check_together(&next);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    *cfg = next;
    return OMNIBATCH_SUCCESS;
}

/* ---- the process-wide settings -------------------------------------------------- */

static pthread_once_t ob_global_once = PTHREAD_ONCE_INIT;
static ob_config ob_global_cfg;
static int ob_global_status;
static char ob_global_detail[512];

static void ob_global_parse(void)
{
    ob_config cfg;

    ob_config_defaults(&cfg);
    ob_global_status = ob_config_from_env(&cfg, environ, NULL, NULL);
    if (OMNIBATCH_SUCCESS != ob_global_status) {
        snprintf(ob_global_detail, sizeof ob_global_detail, "%s", ob_last_error());
        ob_config_defaults(&cfg);
    }
    ob_global_cfg = cfg;
    ob_log_set_debug(ob_global_cfg.debug);
}

int ob_config_global(const ob_config **cfg)
{
    pthread_once(&ob_global_once, ob_global_parse);
    if (NULL != cfg) {
        *cfg = &ob_global_cfg;
    }
    if (OMNIBATCH_SUCCESS != ob_global_status) {
        return ob_fail(ob_global_status, "%s", ob_global_detail);
    }
    return OMNIBATCH_SUCCESS;
}

/* ---- names and the configuration page's table ------------------------------------- */

static const char *ob_choice_name(const ob_choice *choices, int value)
{
    for (const ob_choice *c = choices; NULL != c->name; c++) {
        if (c->value == value) {
            return c->name;
        }
    }
    return "unknown";
}

const char *ob_config_report_name(ob_report_format f)
{
    return ob_choice_name(ob_report_choices, (int) f);
}

const char *ob_config_convention_name(ob_convention c)
{
    return ob_choice_name(ob_convention_choices, (int) c);
}

const char *ob_config_prior_name(ob_prior p)
{
    return ob_choice_name(ob_prior_choices, (int) p);
}

const ob_config_doc *ob_config_doc_at(size_t i)
{
    pthread_once(&ob_docs_once, ob_docs_build);
    return i < OB_NVARS ? &ob_docs[i] : NULL;
}

/* snprintf that keeps counting past the end of the buffer. */
static void ob_append(char *buf, size_t size, size_t *len, const char *text)
{
    size_t n = strlen(text);

    if (*len < size) {
        size_t room = size - *len - 1;

        memcpy(buf + *len, text, n < room ? n : room);
        buf[*len + (n < room ? n : room)] = '\0';
    }
    *len += n;
}

size_t ob_config_markdown(char *buf, size_t size)
{
    size_t len = 0;

    if (NULL == buf) {
        size = 0;
    }
    if (size > 0) {
        buf[0] = '\0';
    }
    ob_append(buf, size, &len, "| Variable | Allowed values | Default | Meaning |\n");
    ob_append(buf, size, &len, "|---|---|---|---|\n");
    for (size_t i = 0; i < OB_NVARS; i++) {
        const ob_config_doc *d = ob_config_doc_at(i);

        ob_append(buf, size, &len, "| `");
        ob_append(buf, size, &len, d->name);
        ob_append(buf, size, &len, "` | ");
        ob_append(buf, size, &len, d->allowed);
        ob_append(buf, size, &len, " | ");
        if (NULL != d->default_value) {
            ob_append(buf, size, &len, "`");
            ob_append(buf, size, &len, d->default_value);
            ob_append(buf, size, &len, "`");
        } else {
            ob_append(buf, size, &len, "unset");
        }
        ob_append(buf, size, &len, " | ");
        ob_append(buf, size, &len, d->meaning);
        ob_append(buf, size, &len, " |\n");
    }
    return len;
}
