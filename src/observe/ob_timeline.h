/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The timeline of preload mode (OMNIBATCH_TIMELINE=file.json): Chrome's
 * trace-event format (JSON array form), which Perfetto and chrome://tracing
 * open.  One track per rank (pid = rank, named "rank R (host)"); per step
 * three complete events ("X") that add up to the step: "compute", then
 * "waiting" (the part of the blocked time the least-blocked rank did not
 * spend: waiting for slower ranks), then "reduction" (the rest: the
 * allreduce itself), each with the step and the batch as arguments; and an
 * instant event ("i") "plan change" where a rank's batch changed.  Made
 * from the trace's rows (ob_trace.h), whose wall-clock end times place the
 * steps of every rank on one time axis.  A finished set of rows is
 * written by ob_timeline_write(); rows that arrive while the run goes (a
 * streamed trace) feed an ob_timeline_stream.  MPI-free.
 */
#ifndef OB_TIMELINE_H
#define OB_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "ob_trace.h"

/** A timeline being written. */
typedef struct ob_timeline {
    FILE *f;
    double origin;               /* wall-clock seconds of time 0 (the first step's start) */
    long events;                 /* written so far, for the separators */
} ob_timeline;

/** \brief Start the JSON array on \p f; \p origin is the wall-clock time shown as 0. */
void ob_timeline_begin(ob_timeline *t, FILE *f, double origin);

/** \brief Name rank \p rank's track "rank R (host)" (\p host may be NULL) and sort it by rank. */
void ob_timeline_rank(ob_timeline *t, int rank, const char *host);

/**
 * \brief The spans of one step of one rank.
 * \param[in] row         the step (skipped when its time is unknown).
 * \param[in] reduction   seconds of the step's blocked time that were the reduction itself
 *                        (the least blocked time of any rank in this step); clipped to
 *                        [0, row->blocked_s].
 * \param[in] prev_batch  the rank's batch in its previous step, -1 when none or unknown:
 *                        a different known batch adds a "plan change".
 */
void ob_timeline_step(ob_timeline *t, int rank, const ob_trace_row *row, double reduction,
                      long prev_batch);

/** \brief Close the array. \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG if a write failed. */
int ob_timeline_end(ob_timeline *t);

/**
 * A timeline fed one row at a time, in any order across ranks (each rank's rows in step
 * order), as rows reach rank 0 from a streamed trace.  A step's events are written once
 * every rank's row of it is in, so that its reduction (the least blocked time) is known, or
 * when the window of steps held is full (then from the rows that came); steps are written
 * in order.  Memory: the window, at most OB_TIMELINE_WINDOW_ROWS rows.
 */
typedef struct ob_timeline_stream {
    ob_timeline t;
    int nranks;
    long window;                 /* steps held */
    int64_t *step;               /* [window]: the step a slot holds, -1 when free */
    int *have;                   /* [window]: rows in it */
    ob_trace_row *rows;          /* [window * nranks] */
    unsigned char *got;          /* [window * nranks] */
    long *prev_batch;            /* [nranks]: each rank's last written batch, -1 = none */
    int failed;                  /* no memory: rows are then written as they come */
} ob_timeline_stream;

/** Steps a stream holds at most; fewer with many ranks (OB_TIMELINE_WINDOW_ROWS). */
#define OB_TIMELINE_WINDOW_STEPS 128
/** Rows a stream holds at most (40 bytes each: 10 MiB). */
#define OB_TIMELINE_WINDOW_ROWS (1L << 18)

/**
 * \brief Start a stream on \p f for \p nranks ranks, their tracks named after \p hosts
 *        (or NULL); \p origin is the wall-clock time shown as 0 (e.g. when the run began).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_NOMEM (the stream then still works, a row at a
 *         time, each step's reduction taken from the row alone).
 */
int ob_timeline_stream_begin(ob_timeline_stream *s, FILE *f, int nranks,
                             const char *const *hosts, double origin);

/** \brief One row of rank \p rank. */
void ob_timeline_stream_add(ob_timeline_stream *s, int rank, const ob_trace_row *row);

/** \brief Write the steps still held, close the array, free. \return as ob_timeline_end(). */
int ob_timeline_stream_end(ob_timeline_stream *s);

/**
 * \brief The whole timeline of a finished run, in the layout of ob_trace_write(): every
 *        rank's rows (rank 0's first, each in step order), \p counts per rank, \p hosts
 *        (or NULL).  Time 0 is the earliest step's start.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_NOMEM, or OMNIBATCH_ERR_ARG if a write failed.
 */
int ob_timeline_write(FILE *f, const ob_trace_row *rows, const long *counts, int nranks,
                      const char *const *hosts);

#endif /* OB_TIMELINE_H */
