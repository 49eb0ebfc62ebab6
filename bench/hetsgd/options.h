/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Command-line options of the training benchmark, parsed strictly: whole
 * numbers, ranges checked, one line naming the option, the value and what
 * is allowed on any mistake.
 */
#ifndef HETSGD_OPTIONS_H
#define HETSGD_OPTIONS_H

#include <stdint.h>

#include "schedule.h"

/** How the global batch is split over the ranks. */
typedef enum hetsgd_policy {
    HETSGD_POLICY_STATIC = 0,      /**< equal shares, never moved */
    HETSGD_POLICY_OMNIBATCH = 1,   /**< the omnibatch controller */
    HETSGD_POLICY_ORACLE = 2,      /**< water-filling on the true emulated speeds, re-planned at each change */
    HETSGD_POLICY_OMNILEARN = 3,   /**< OmniLearn's published rule, once per epoch */
    HETSGD_POLICY_CHUNKS = 4       /**< the omnibatch controller, each step worked in chunks that move
                                        to a rank that is free (omnibatch_next_chunk) */
} hetsgd_policy;

/** How the ranks train (--mode). */
typedef enum hetsgd_mode {
    HETSGD_MODE_SYNC = 0,          /**< synchronous SGD: the global batch split over the ranks each step */
    HETSGD_MODE_ASYNC = 1          /**< a parameter server on rank 0, the others push when they are done
                                        (omnibatch_ps_*): static = equal batches, omnibatch = batches that
                                        equalise the push rates, omnilearn = its rule once per epoch */
} hetsgd_mode;

/** --staleness: the library's rules (omnibatch_ps_staleness), by name. */
#define HETSGD_STALENESS_NAMES { "constant", "inverse", "adaptive" }

/** Most entries of --speeds. */
#define HETSGD_MAX_SPEEDS 4096

/* Defaults, one place; --help and the README repeat them. */
#define HETSGD_DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
#define HETSGD_DEFAULT_EPOCHS 8
#define HETSGD_DEFAULT_BATCH 1024
#define HETSGD_DEFAULT_LR 0.1
#define HETSGD_DEFAULT_MOMENTUM 0.9
#define HETSGD_DEFAULT_SEED 1
#define HETSGD_DEFAULT_TARGET 0.85
#define HETSGD_DEFAULT_FINAL_EVALS 5

typedef struct hetsgd_options {
    long epochs;                   /* --epochs N, >= 1 */
    long max_steps;                /* --max-steps N, >= 1, 0 = no limit */
    long batch;                    /* --batch B: the global batch, >= 1 */
    double lr;                     /* --lr X, > 0 */
    double momentum;               /* --momentum X, in [0, 1) */
    uint64_t seed;                 /* --seed N */
    long subset;                   /* --subset N: first N training samples, 0 = all */
    long eval_every;               /* --eval-every K: also evaluate every K steps, 0 = per epoch only */
    long final_evals;              /* --final-evals K: the final accuracy is averaged over the last
                                      K x eval_every steps (the last K evaluations per epoch only) */
    int nspeeds;                   /* entries of --speeds, 0 = all ranks at speed 1 */
    double speeds[HETSGD_MAX_SPEEDS];
    double alpha;                  /* --alpha S: fixed per-step cost in seconds, >= 0 */
    double slowdown;               /* --slowdown X >= 1, 0 = auto */
    int has_cost;                  /* --cost was given */
    double cost[2];                /* --cost A,B: a step of n samples costs A + B n CPU seconds */
    double chunk_cost;             /* --cost A,B,C: each chunk of a step after its first costs C + B n
                                      (caches warm); -1 = measured at start-up */
    double change_at;              /* --change-at F: a schedule's change lands F of the way into the
                                      step, in [0, 1); 0 = at the step's start */
    int calibrate;                 /* --calibrate: print the measured cost (for --cost) and stop */
    long warmup;                   /* --warmup N: steps left out of the steady step time, -1 = auto */
    hetsgd_schedule_kind schedule; /* --schedule none|ramp|transient|vanish|jitter */
    hetsgd_policy policy;          /* --policy static|omnibatch|oracle|omnilearn|chunks */
    double target;                 /* --target A: test accuracy in (0, 1] */
    int bind;                      /* --bind: --speeds are cores per rank, bound with hwloc */
    int no_own_wait;               /* --no-own-wait: no Ibarrier of hetsgd's own before the reduction */
    int last_eval_only;            /* --last-eval-only: no evaluation before the last step */
    int eval_after;                /* --eval-after: keep the model at each evaluation point, evaluate
                                      the copies after training (always so with --mode async) */
    int ndevices;                  /* entries of --devices, 0 = every rank on the CPU */
    unsigned char gpu[HETSGD_MAX_SPEEDS]; /* --devices: 1 where the rank computes on a GPU */
    const char *data;              /* --data DIR */
    const char *trace;             /* --trace FILE, NULL = none */
    const char *summary;           /* --summary FILE, NULL = none */
    const char *curve;             /* --curve FILE: every evaluation, "train_s,samples,test_acc", NULL = none */
    hetsgd_mode mode;              /* --mode sync|async */
    int staleness;                 /* --staleness constant|inverse|adaptive (async; omnibatch_ps_staleness) */
    long max_staleness;            /* --max-staleness N|auto (async): -1 = auto */
    long max_global_batch;         /* --max-global-batch N (async): 0 = --batch */
    int help;                      /* --help was given */
} hetsgd_options;

/** \brief Fill \p o with the defaults. */
void hetsgd_options_defaults(hetsgd_options *o);

/**
 * \brief Parse argv[1..argc-1] over the defaults ("--name value" or "--name=value").
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG with one line in ob_last_error(), e.g.
 *         "--batch 'x': expected an integer >= 1".
 */
int hetsgd_options_parse(int argc, const char *const *argv, hetsgd_options *o);

/** \brief The usage text (several lines). */
const char *hetsgd_options_usage(void);

/** \brief "sync" or "async". */
const char *hetsgd_mode_name(hetsgd_mode m);

/** \brief "static", "omnibatch", "oracle", "omnilearn" or "chunks". */
const char *hetsgd_policy_name(hetsgd_policy p);

#endif /* HETSGD_OPTIONS_H */
