/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The preload-mode report: from every rank's per-step statistics, who
 * straggles, how long the others wait, the split of the global batch that
 * would balance the ranks (the planner's water-filling optimum) and the
 * step-time speed-up it predicts; written as text or JSON.
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

/** A rank computing this much longer than the fastest is called a straggler. */
#define OB_REPORT_STRAGGLER_RATIO 1.10
/** Ranks within this factor of the slowest are named with it. */
#define OB_REPORT_STRAGGLER_GROUP 0.95

/** One rank's sums over its measured steps. */
typedef struct ob_rank_stats {
    char host[64];
    int32_t rank;
    int32_t cores;               /* cores in the rank's cpuset, 0 = unknown */
    int32_t gpus;                /* GPUs the rank sees */
    int32_t reserved;
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
} ob_rank_stats;

/** \brief Empty sums for rank \p rank. */
void ob_rank_stats_init(ob_rank_stats *s, int rank);

/** \brief Add one measured step; \p batch < 0 when unknown. */
void ob_rank_stats_add(ob_rank_stats *s, long batch, double compute, double blocked);

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
    double waiting;              /* blocked / (compute + blocked) */
    double batch;                /* mean batch, NaN when unknown */
    double alpha;                /* the model the split rests on */
    double beta;
    double share;                /* balanced fraction of the global batch */
    long plan;                   /* balanced batch; -1 when the global batch is unknown */
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
    char split_error[256];       /* why not, when it did not */
    double step_now;             /* measured mean step time */
    double step_balanced;        /* predicted with the balanced split */
    double speedup;
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

/** \brief Write the report as text (OMNIBATCH_REPORT=text). */
int ob_report_write_text(FILE *f, const ob_report *rep);

/** \brief Write the report as one JSON object (OMNIBATCH_REPORT=json). */
int ob_report_write_json(FILE *f, const ob_report *rep);

/** \brief Free what ob_report_analyse() allocated. */
void ob_report_free(ob_report *rep);

#endif /* OB_REPORT_H */
