/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The step trace of preload mode (OMNIBATCH_TRACE=file.csv): one row per
 * detected step per rank, "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s,time_s,host,
 * cpu_s,involuntary_switches,off_cpu_s,throttled_s" (time_s: the step's end on the wall clock, so
 * that the ranks of several hosts share one axis; host: the rank's; then what the kernel gave the
 * rank during the step, ob_cpuuse.h: its process's CPU seconds and involuntary context switches,
 * its main thread's seconds runnable off the CPU, its cgroup's seconds stopped by the quota;
 * empty when unknown).  Rank 0 also feeds the rows to
 * the timeline (ob_timeline.h).  The rows
 * are streamed as the run goes (mpi_wrappers/tracestream.c sends them to
 * rank 0, which writes them through an ob_writer); this is the row and
 * its CSV spelling.  MPI-free.
 */
#ifndef OB_TRACE_H
#define OB_TRACE_H

#include <stddef.h>
#include <stdint.h>

/** The CSV's first line. */
#define OB_TRACE_HEADER "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s,time_s,host," \
                        "cpu_s,involuntary_switches,off_cpu_s,throttled_s,taken,given\n"
/** Longest host name in a row (the rest is cut). */
#define OB_TRACE_HOST_MAX 64
/** Longest CSV row: five 20-digit integers, a rank, seven %.9g reals, a %.6f time, a host. */
#define OB_TRACE_ROW_MAX (256 + 32 + 48 + OB_TRACE_HOST_MAX)

/** One step of one rank; plain data, sent as bytes. */
typedef struct ob_trace_row {
    int64_t step;                /* the step's index on its rank */
    int64_t batch;               /* samples, -1 when unknown */
    double compute_s;
    double blocked_s;
    double reduction_s;          /* the step model's reduction known when the step ended (the least
                                  * mean blocked time over the ranks at the API's last exchange);
                                  * < 0: unknown (no exchange yet, or no API context) */
    double time_s;               /* wall clock at the step's end, seconds since the epoch; 0 = unknown */
    int64_t cpu_known;           /* 1: the fields below hold what the kernel gave the rank in the step */
    double cpu_s;                /* the process's CPU seconds */
    int64_t nivcsw;              /* its involuntary context switches, < 0: unknown */
    double off_cpu_s;            /* its main thread's seconds runnable off the CPU, < 0: unknown */
    double throttled_s;          /* its cgroup's seconds stopped by the quota, < 0: unknown (no quota) */
    int64_t taken;               /* worked in chunks: samples taken from other ranks' ranges, */
    int64_t given;               /* and of this rank's range taken by others; < 0: unknown */
} ob_trace_row;

/**
 * \brief The CSV row of \p row for rank \p rank on \p host, newline included (an unknown
 *        batch or time, and a NULL host, are empty fields).  The step model's columns: reduction_s, and waiting_s, the rest of the
 *        row's blocked time (at least 0); both empty when the reduction is unknown.
 * \param[out] buf  at least OB_TRACE_ROW_MAX bytes.
 * \return the row's length in bytes.
 */
size_t ob_trace_format(char *buf, const ob_trace_row *row, int rank, const char *host);

#endif /* OB_TRACE_H */
