/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The preload-mode report: from every rank's per-step statistics, who
 * straggles, how long the others wait, the split of the global batch that
 * would balance the ranks (the planner's water-filling optimum) and the
 * step-time speed-up it predicts; written as text or JSON.
 *
 * The step model.  Each rank's step is compute, reduction and waiting (and
 * what the code does outside both, "other": its optimiser, the library's
 * own exchanges).  The reduction is what every rank spends in the gradient
 * allreduce whoever arrives last: the least blocked time over the ranks
 * (the last to arrive waits for nobody).  The rest of a rank's blocked time
 * is waiting.  What stays of "other" once the ranks are balanced is that of
 * the last rank to reach the reduction (a fast rank that waits for the
 * others before its allreduce has the wait in its other).  The verdict:
 *   - compute-imbalanced: the balanced split shortens the predicted step,
 *     reduction included, by at least OB_REPORT_MIN_GAIN;
 *   - communication-bound: it would not, and the reduction is at least
 *     OB_REPORT_COMM_SHARE of the step: the report says how much
 *     rebalancing can win at most;
 *   - balanced: neither.
 * When the others wait for one rank (at least OB_REPORT_LINK_WAIT of the
 * step) that does not compute longer than they do (its extra compute
 * explains less than OB_REPORT_LINK_EXPLAINED of their wait), what they
 * wait for is that rank's reduction: its host's link is named as slow.
 *
 * A rank starved of CPU (its quota spent, a busy neighbour) is descheduled
 * inside the allreduce too, and everyone waits for it there: the least
 * blocked time then holds its stalls.  Each rank's sums carry what the
 * kernel gave it from its first measured step to the report (ob_cpuuse.h);
 * the ranks it starved and the share they lost are ob_starve.h's, that
 * share of their blocked time is taken out of the reduction (the rest,
 * "stalled", is what every rank waits through for them), and the verdict
 *   - cpu-starved: some rank was starved and the balanced split would not
 *     win OB_REPORT_MIN_GAIN (it cannot remove stalls): the report names
 *     the ranks and hosts, the share of the step their stalls take, and
 *     what helps;
 * comes before communication-bound, which is then judged on the transfer
 * without the stalls.  A starved rank the others wait for is not a slow
 * link.
 *
 * One path for the plan: for a code on the API every rank's ob_rank_stats
 * carries the controller's plan and model (ob_hook.h), and the report
 * shows those, the split the run really used; only for an unmodified code
 * does it fit a model t = alpha + beta * b to the measured steps and
 * water-fill its own split.
 *
 * Each rank sums its steps into an ob_rank_stats (fixed size, plain data:
 * sent as bytes); rank 0 gathers them, calls ob_report_analyse() and one of
 * the writers.  MPI-free.
 */
#ifndef OB_REPORT_H
#define OB_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ob_cpuuse.h"

/** A rank computing this much longer than the fastest is called a straggler. */
#define OB_REPORT_STRAGGLER_RATIO 1.10
/** Ranks within this factor of the slowest are named with it. */
#define OB_REPORT_STRAGGLER_GROUP 0.95
/** A step's time outside compute and the allreduces counts up to this multiple of the two
 *  (an evaluation between steps is not the step's work). */
#define OB_REPORT_OTHER_CAP 1.0
/** Least gain of the predicted step from the balanced split that makes a run compute-imbalanced. */
#define OB_REPORT_MIN_GAIN 0.05
/** Least share of the step in the reduction that makes a run communication-bound. */
#define OB_REPORT_COMM_SHARE 0.5
/** Least mean wait of the others, as a share of the step, for one rank's reduction (slow link). */
#define OB_REPORT_LINK_WAIT 0.05
/** Most of that wait the waited-for rank's extra compute may explain for a slow link. */
#define OB_REPORT_LINK_EXPLAINED 0.5

/** The report's verdict on a run. */
typedef enum ob_report_verdict {
    OB_VERDICT_NONE = 0,             /* nothing measured */
    OB_VERDICT_BALANCED = 1,
    OB_VERDICT_COMPUTE_IMBALANCED = 2,
    OB_VERDICT_COMMUNICATION_BOUND = 3,
    OB_VERDICT_CPU_STARVED = 4
} ob_report_verdict;

/** One rank's sums over its measured steps. */
typedef struct ob_rank_stats {
    char host[64];
    int32_t rank;
    int32_t cores;               /* cores in the rank's cpuset, 0 = unknown */
    int32_t gpus;                /* GPUs the rank sees */
    int32_t ctl_model;           /* 1: ctl_plan, ctl_alpha and ctl_beta hold the controller's plan
                                  * and model of this rank (a code on the API, ob_hook.h) */
    int64_t steps;               /* steps measured (after the warm-up) */
    int64_t steps_seen;          /* steps detected, warm-up included */
    int64_t calls_per_step;      /* gradient allreduces per step, 0 = none found */
    double compute_sum;          /* seconds */
    double blocked_sum;
    int64_t batch_steps;         /* measured steps whose batch was known */
    double batch_sum;
    double batch_sq_sum;
    double batch_compute_sum;    /* sum of batch * compute */
    double compute_batched_sum;  /* compute of the steps whose batch was known */
    double step_sum;             /* wall seconds of the steps (compute, blocked and other) */
    int64_t parked_steps;        /* steps at batch 0 (OMNIBATCH_MIN_BATCH=0): not in the sums above */
    int64_t parked_run;          /* the current run of them */
    int64_t parked_longest;      /* the longest run */
    int64_t ctl_plan;            /* this rank's batch in the controller's plan, at its last step */
    double ctl_alpha;            /* this rank's model at the controller's last exchange */
    double ctl_beta;
    int64_t moved_steps;         /* measured steps worked in chunks (API, options.chunks) */
    int64_t taken_sum;           /* samples this rank took from other ranks' ranges in them */
    int64_t given_sum;           /* samples of its own ranges other ranks took */
    int32_t cpu_known;           /* 1: cpu holds what the kernel gave the rank from its first measured
                                  * step to the report (ob_rank_stats_set_cpu()) */
    int32_t cpu_pad;
    ob_cpu_use cpu;
} ob_rank_stats;

/** \brief Empty sums for rank \p rank. */
void ob_rank_stats_init(ob_rank_stats *s, int rank);

/** \brief Add one measured step that was compute and blocked time only; \p batch < 0 when unknown; 0: the rank was parked (counted
 *         apart: it computed nothing). */
void ob_rank_stats_add(ob_rank_stats *s, long batch, double compute, double blocked);

/** \brief Add what moved in one measured step worked in chunks: \p taken samples from other
 *         ranks' ranges, \p given of its own to them; nothing when either is < 0 (not in chunks). */
void ob_rank_stats_add_moved(ob_rank_stats *s, long taken, long given);

/** \brief Keep the controller's plan \p plan and model alpha + beta * b of this rank (a code
 *         on the API): the report shows those instead of fitting its own. */
void ob_rank_stats_set_plan(ob_rank_stats *s, long plan, double alpha, double beta);

/** \brief Keep what the kernel gave the rank over its measured steps (ob_cpuuse.h). */
void ob_rank_stats_set_cpu(ob_rank_stats *s, const ob_cpu_use *use);

/** \brief Add one measured step of \p step wall seconds (>= compute + blocked: the rest is
 *         neither, e.g. the code's optimiser or the library's own exchanges). */
void ob_rank_stats_add_step(ob_rank_stats *s, long batch, double compute, double blocked, double step);

/** What the report needs to know beyond the ranks' sums. */
typedef struct ob_report_settings {
    long global_batch;           /* OMNIBATCH_GLOBAL_BATCH, 0 = unknown */
    long warmup;                 /* steps not measured on each rank */
    size_t min_bytes;            /* least payload of a recognised allreduce */
    long calls_per_step_given;   /* OMNIBATCH_CALLS_PER_STEP, 0 = detected */
    long trace_dropped;          /* trace rows past the memory cap, all ranks */
    const char *trace_file;      /* "" or NULL: no trace */
    int steps_from_api;          /* 1: the API measured the steps (the code reduces through it) */
    long min_batch;              /* bounds and granularity of a split in samples (OMNIBATCH_MIN_BATCH, */
    long max_batch;              /* _MAX_BATCH, 0 = none, _GRANULARITY); 0 or 1 = none */
    long granularity;
} ob_report_settings;

/** Derived figures of one rank. */
typedef struct ob_report_rank {
    double compute;              /* mean seconds per step */
    double blocked;
    double step;                 /* mean measured wall seconds per step */
    double reduction;            /* the run's reduction (ob_report.reduction) */
    double wait;                 /* blocked - reduction: seconds waiting for other ranks */
    double other;                /* step - compute - blocked, >= 0 */
    double waiting;              /* wait / step */
    double batch;                /* mean batch, NaN when unknown */
    double alpha;                /* the model the split rests on */
    double beta;
    double share;                /* balanced fraction of the global batch */
    long plan;                   /* balanced batch; -1 when the global batch is unknown */
    double cpu_share;            /* CPU time / wall time (ob_cpuuse.h), NaN: unknown */
    double throttled_share;      /* the rest < 0: unknown */
    double held_share;
    double wait_share;
    double lost;                 /* share of its time lost to starvation (ob_starve.h), 0: not starved */
    int starved_by;              /* OB_STARVED_* flags, 0: not starved */
    double stalled;              /* the run's stalls (ob_report.stalled) */
} ob_report_rank;

/** The analysis of one run. */
typedef struct ob_report {
    int nranks;
    const ob_rank_stats *stats;  /* the caller's, not copied */
    ob_report_settings settings;
    ob_report_rank *ranks;
    int measured;                /* every rank has measured steps */
    long steps;                  /* least measured steps of a rank */
    int batch_known;             /* every rank's batch was known */
    long global_batch;           /* B of the split; 0 when only shares are known */
    int slowest, fastest;        /* by mean compute */
    double imbalance;            /* max / mean compute */
    double spread;               /* slowest / fastest compute */
    int nstragglers;             /* ranks named as stragglers (0: balanced) */
    int *stragglers;
    double others_waiting;       /* mean waiting share of the other ranks */
    int split_ok;                /* the planner gave a split */
    int split_from_controller;   /* 1: the split and models are the controller's (every rank's
                                  * ctl_model), 0: fitted from the measured steps */
    char split_error[256];       /* why not, when it did not */
    double step_now;             /* measured mean step time */
    double step_predicted;       /* predicted now: max_i (compute_i + other_i) + reduction */
    double step_balanced;        /* predicted with the balanced split, reduction included */
    double speedup;              /* step_predicted / step_balanced */
    double reduction;            /* least mean blocked time over the ranks */
    double reduction_share;      /* reduction / step_now */
    double max_gain;             /* 1 - step_balanced / step_predicted: the most rebalancing wins */
    ob_report_verdict verdict;
    int slow_link;               /* the rank whose reduction the others wait for, -1: none */
    double others_link_wait;     /* their mean wait for it, as a share of the step */
    double least_blocked;        /* least mean blocked time over the ranks: reduction + stalled */
    double stalled;              /* seconds a step every rank waits in the reduction for starved ranks */
    int nstarved;                /* ranks starved of CPU (ob_starve.h), in rank order */
    int *starved;
    int most_starved;            /* the one that lost the largest share, -1: none */
    double starved_step_s;       /* its stalls per step: its lost share of its step */
    double starved_share;        /* that over the mean step */
    double usual_wait;           /* the usual rank's wait share for a CPU (report.c), < 0: unknown */
} ob_report;

/**
 * \brief Analyse the gathered sums of \p nranks ranks.
 * \param[in] stats     \p nranks entries, in rank order; kept by pointer in \p rep.
 * \param[in] settings  see ob_report_settings.
 * \param[out] rep      the analysis; free with ob_report_free().
 * \return OMNIBATCH_SUCCESS (also when nothing was measured: rep->measured = 0),
 *         OMNIBATCH_ERR_ARG or OMNIBATCH_ERR_NOMEM.
 */
int ob_report_analyse(const ob_rank_stats *stats, int nranks, const ob_report_settings *settings,
                      ob_report *rep);

/** \brief "balanced", "compute-imbalanced", "communication-bound", "cpu-starved" or "none". */
const char *ob_report_verdict_name(ob_report_verdict v);

/** \brief Write the report as text (OMNIBATCH_REPORT=text). */
int ob_report_write_text(FILE *f, const ob_report *rep);

/** \brief Write the report as one JSON object (OMNIBATCH_REPORT=json). */
int ob_report_write_json(FILE *f, const ob_report *rep);

/** \brief Free what ob_report_analyse() allocated. */
void ob_report_free(ob_report *rep);

#endif /* OB_REPORT_H */
