/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace of preload mode (OMNIBATCH_TRACE=file.csv): one row per
 * detected step per rank.  Each rank keeps its rows in an ob_trace; at
 * MPI_Finalize rank 0 gathers them and writes the CSV.  Memory is bounded:
 * at most OB_TRACE_MAX_ROWS rows in all, so each of P ranks keeps its first
 * ob_trace_rank_limit(P) steps and counts the rest.  MPI-free.
 */
#ifndef OB_TRACE_H
#define OB_TRACE_H

#include <stdint.h>
#include <stdio.h>

/** Rows rank 0 may hold after the gather: 2^20 rows of 32 bytes, 32 MiB. */
#define OB_TRACE_MAX_ROWS (1L << 20)

/** One step of one rank; plain data, sent as bytes. */
typedef struct ob_trace_row {
    int64_t step;                /* the step's index on its rank */
    int64_t batch;               /* samples, -1 when unknown */
    double compute_s;
    double blocked_s;
} ob_trace_row;

/** One rank's rows, in step order. */
typedef struct ob_trace {
    ob_trace_row *rows;
    long n;                      /* rows kept */
    long cap;                    /* rows allocated */
    long limit;                  /* most rows kept */
    long dropped;                /* rows past the limit, counted only */
} ob_trace;

/** \brief Rows each of \p nranks ranks may keep so that all fit in OB_TRACE_MAX_ROWS (>= 1). */
long ob_trace_rank_limit(int nranks);

/** \brief Start an empty trace keeping at most \p limit rows (>= 0). */
void ob_trace_init(ob_trace *t, long limit);

/**
 * \brief Keep one row, or count it when the limit is reached.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_NOMEM (the row is then counted as dropped).
 */
int ob_trace_append(ob_trace *t, const ob_trace_row *row);

/** \brief Free the rows. */
void ob_trace_free(ob_trace *t);

/**
 * \brief Write the CSV: a header line "step,rank,batch,compute_s,blocked_s", then the rows
 *        ordered by step, and within a step by rank; an unknown batch is an empty field.
 * \param[in] rows    every rank's rows, rank 0's first, each rank's in step order.
 * \param[in] counts  \p nranks row counts.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG naming the failed write.
 */
int ob_trace_write(FILE *f, const ob_trace_row *rows, const long *counts, int nranks);

#endif /* OB_TRACE_H */
