/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace of preload mode (OMNIBATCH_TRACE=file.csv): one row per
 * detected step per rank, "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s".  The rows
 * are streamed as the run goes (mpi_wrappers/tracestream.c sends them to
 * rank 0, which writes them through an ob_writer); this is the row and
 * its CSV spelling.  MPI-free.
 */
#ifndef OB_TRACE_H
#define OB_TRACE_H

#include <stddef.h>
#include <stdint.h>

/** The CSV's first line. */
#define OB_TRACE_HEADER "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s\n"
/** Longest CSV row: two 20-digit integers, a rank, four %.9g reals, separators. */
#define OB_TRACE_ROW_MAX 160

/** One step of one rank; plain data, sent as bytes. */
typedef struct ob_trace_row {
    int64_t step;                /* the step's index on its rank */
    int64_t batch;               /* samples, -1 when unknown */
    double compute_s;
    double blocked_s;
    double reduction_s;          /* the step model's reduction known when the step ended (the least
                                  * mean blocked time over the ranks at the API's last exchange);
                                  * < 0: unknown (no exchange yet, or no API context) */
} ob_trace_row;

/**
 * \brief The CSV row of \p row for rank \p rank, newline included (an unknown batch is an
 *        empty field).  The step model's columns: reduction_s, and waiting_s, the rest of the
 *        row's blocked time (at least 0); both empty when the reduction is unknown.
 * \param[out] buf  at least OB_TRACE_ROW_MAX bytes.
 * \return the row's length in bytes.
 */
size_t ob_trace_format(char *buf, const ob_trace_row *row, int rank);

#endif /* OB_TRACE_H */
