/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What an asynchronous run leaves behind (server 0 writes them): the
 * report at its end, in OMNIBATCH_REPORT's format (text or JSON), and the
 * trace, one CSV row per push.  Per worker: pushes, applied, dropped,
 * samples per second, staleness mean, p99 and max, its batch; the server's
 * busy fraction, updates per second, and the pushes lost (received, neither
 * applied nor dropped: 0 by construction, shown so that it is seen).
 * MPI-free: the printers only print what the server counted.
 */
#ifndef OB_PSREPORT_H
#define OB_PSREPORT_H

#include <stddef.h>
#include <stdio.h>

/** One worker's figures. */
typedef struct ob_psreport_worker {
    int rank;
    long pushes;
    long applied;
    long dropped;
    long samples;
    long batch;                  /* the batch it was handed last */
    double staleness_mean;
    long staleness_p99;
    long staleness_max;
    double samples_per_s;
    double compute_s;            /* the compute it reported, all pushes */
} ob_psreport_worker;

/** The run's figures. */
typedef struct ob_psreport {
    int servers;
    int workers;
    double elapsed_s;            /* server 0's, from its first serve to the end */
    long pushes;
    long applied;
    long dropped;
    long max_staleness;          /* the drop bound */
    const char *staleness_rule;  /* "constant", "inverse" or "adaptive" */
    int adaptive;                /* the batches equalise the push rates */
    long decisions;
    long changes;
    double busy_fraction;        /* server 0's time handling pushes over elapsed_s */
    int bound;                   /* 1: a worker is too slow at its least batch for equal rates at B */
    int bound_worker;            /* that worker */
    long bound_batch;            /* its least batch */
    double bound_cycle_s;        /* its cycle there (the controller's model) */
    double bound_level_s;        /* the others' cycle, sharing the rest of B */
    long bound_need;             /* the global batch at which all could cycle as long */
    long batch;                  /* the global batch B the workers' batches sum to */
    long total;                  /* what they sum to now: B, or grown (max_global_batch) */
    long max_total;              /* max_global_batch: the most they may sum to (0: B) */
    const ob_psreport_worker *worker; /* workers of them */
} ob_psreport;

/** \brief The text report, lines prefixed "omnibatch: ".
 *  \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_IO when the stream failed. */
int ob_psreport_write_text(FILE *f, const ob_psreport *r);

/** \brief The JSON report: one object {"async": {...}}.
 *  \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_IO when the stream failed. */
int ob_psreport_write_json(FILE *f, const ob_psreport *r);

/** \brief The largest over the least of the workers' mean staleness (0 when a worker has no push). */
double ob_psreport_spread(const ob_psreport *r);

/** \brief The trace's header line (with its newline). */
const char *ob_psreport_trace_header(void);

/** One push, as the trace has it. */
typedef struct ob_psreport_push {
    long push;                   /* 0-based, in the order server 0 took them */
    double t_s;                  /* since the first serve */
    int worker;
    int rank;
    long batch;
    long staleness;
    int applied;
    double scale;                /* the step factor (0: dropped) */
    long version;                /* after it */
    double compute_s;            /* the worker's compute of it */
    double wait_s;               /* the worker's wait for its previous answer */
} ob_psreport_push;

/**
 * \brief One trace row of \p p into \p buf (a whole line, with its newline).
 * \return its length, or 0 when \p size was too small.
 */
size_t ob_psreport_trace_row(char *buf, size_t size, const ob_psreport_push *p);

#endif /* OB_PSREPORT_H */
