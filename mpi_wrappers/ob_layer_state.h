/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The PMPI layer's state, private to mpi_wrappers/ and shared by its three
 * files: setup.c (inside MPI_Init: the settings' agreement, the outputs,
 * the start), layer.c (the hot path: the recorder of recognised calls and
 * of the API's notes, under one lock) and finalize.c (inside
 * MPI_Finalize: gathering every rank's sums, the report).
 */
#ifndef OB_LAYER_STATE_H
#define OB_LAYER_STATE_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "ob_config.h"
#include "ob_cpumarks.h"
#include "ob_cpuuse.h"
#include "ob_hook.h"
#include "ob_report.h"
#include "ob_stepdetect.h"
#include "ob_writer.h"

typedef struct ob_layer_state {
    int started;                 /* postinit ran and finalize did not */
    const ob_config *cfg;
    MPI_Comm comm;               /* the layer's own, duplicated from MPI_COMM_WORLD */
    int rank;
    int size;
    int thread_level;
    uint64_t origin_ns;
    pthread_mutex_t lock;        /* the recorder below; taken for recognised calls only */
    ob_stepdetect *det;
    ob_rank_stats stats;
    ob_writer trace_out;         /* rank 0, OMNIBATCH_TRACE: opened at init */
    int report_fd;               /* rank 0, OMNIBATCH_REPORT_FILE: opened at init, else -1 */
    int report_created;          /* ... by this run (removed if the run stops at init) */
    FILE *timeline;              /* rank 0, OMNIBATCH_TIMELINE: opened at init, else NULL */
    int timeline_created;        /* ... by this run */
    double wall_origin;          /* the wall clock at origin_ns, seconds since the epoch (trace times) */
    int warned_global_batch;
    double last_end;             /* end of the last recorded blocked interval, any thread */
    long api_steps;              /* steps the API measured (ob_hook.h); then the detector is ignored */
    long api_calls;              /* gradient allreduces per API step (the last one's) */
    long api_global_batch;       /* the API context's B */
    int report_on;               /* report or profile; the same on every rank (ob_layer_agree): */
    int trace_on;                /* the finalize collectives must match */
    ob_cpu_probe cpu_probe;      /* what the kernel gives this rank (ob_cpuuse.h), opened at init */
    ob_cpu_sample cpu_begin;     /* at the first gradient the layer saw (cpu_begun) */
    int cpu_begun;
    ob_cpu_marks cpu_marks;      /* at each recognised call's end, for the trace rows (trace_on only) */
    struct {                     /* the last verdict of ob_layer_weighs_comm(), until comm is freed */
        MPI_Comm comm;
        uint64_t context;
        unsigned long generation;
        int weighs;
    } congruent;
} ob_layer_state;

/** The one instance (layer.c). */
extern ob_layer_state ob_layer;

/** \brief A step found by the detector, from the wrapped MPI calls (layer.c). */
void ob_layer_on_step(void *ctx, const ob_step_record *rec);

/** \brief A step the API measured (ob_hook.h; layer.c). */
void ob_layer_on_api_step(const ob_step_note *note);

/** \brief The library's own exchange (ob_hook.h): never compute (layer.c). */
void ob_layer_on_own(uint64_t t0_ns, uint64_t t1_ns);

/** \brief At init: open what the kernel counts for this rank (ob_cpuuse.h; layer.c). */
void ob_layer_cpu_start(ob_layer_state *L);

/** \brief At finalize, with the lock held: what the kernel gave this rank from its first
 *         gradient on, into its sums; the counters closed (layer.c). */
void ob_layer_cpu_finish(ob_layer_state *L);

/** \brief At init: hear of freed communicators, so that a weighting verdict dies with its
 *         communicator (layer.c); without it no verdict is kept. */
void ob_layer_watch_start(void);

/** \brief At finalize: stop hearing of them. */
void ob_layer_watch_stop(void);

#endif /* OB_LAYER_STATE_H */
