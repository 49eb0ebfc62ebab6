/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The layer's state: settings, the private communicator, and the recorder
 * that turns recognised calls into steps (src/stepdetect.c), per-rank sums
 * (src/report.c) and trace rows (src/trace.c).  Everything here runs only
 * for recognised calls and at init and finalize, under one lock.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_active.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_layer.h"
#include "ob_requests.h"
#include "ob_log.h"
#include "ob_profile.h"
#include "ob_report.h"
#include "ob_stepdetect.h"
#include "ob_timing.h"
#include "ob_topology.h"
#include "ob_trace.h"
#include "ob_writer.h"

ob_layer_gate ob_gate;
__thread int ob_in_layer;

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
    long api_steps;              /* steps the API measured (ob_active.h); then the detector is ignored */
    long api_calls;              /* gradient allreduces per API step (the last one's) */
    long api_global_batch;       /* the API context's B */
    int report_on;               /* the same on every rank (ob_layer_agree): */
    int trace_on;                /* the finalize collectives must match */
    struct {                     /* the last verdict of ob_layer_weighs_comm() */
        MPI_Comm comm;
        uint64_t context;
        unsigned long generation;
        int weighs;
    } congruent;
} ob_layer_state;

static ob_layer_state ob_layer = { .lock = PTHREAD_MUTEX_INITIALIZER, .report_fd = -1 };

/* The wall clock, for times that must compare across hosts. */
static double ob_layer_wall_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Set when a rank could not start the layer (ob_layer_agree). */
static int ob_layer_start_failed;

/* Values shown in a disagreement line; settings the agreement can carry. */
#define OB_LAYER_VALUE_MAX 160

static int ob_layer_world_size(void)
{
    int size = 1;

    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

/* The process's rank before MPI is up, from the launcher's environment
 * (Open MPI, PMIx, PMI, Slurm); -1 when none says. */
static int ob_layer_env_rank(void)
{
    static const char *const names[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                         "SLURM_PROCID" };

    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *v = getenv(names[k]);
        char *end;
        long r;

        if (NULL == v || '\0' == *v) {
            continue;
        }
        r = strtol(v, &end, 10);
        if ('\0' == *end && r >= 0 && r < INT32_MAX) {
            return (int) r;
        }
    }
    return -1;
}

/* The outcome of parsing the settings, before PMPI_Init. */
static int ob_layer_config_status = OMNIBATCH_SUCCESS;

/* Set when MPI_Init or MPI_Init_thread passed through the layer. */
static int ob_layer_saw_init;

/*
 * At exit: a preloaded library that never saw MPI_Init in a process where
 * MPI ran was bypassed -- a program or binding that calls PMPI_Init or the
 * MPI library's internals itself (MPICH's `use mpi_f08`) -- and would
 * otherwise stay silent about having measured nothing.  Said once, by
 * rank 0 (or a process of unknown rank); a process that never started MPI
 * (a shell the job runs) says nothing.
 */
__attribute__((destructor)) static void ob_layer_at_exit(void)
{
    const char *preload = getenv("LD_PRELOAD");
    int initialized = 0, finalized = 0;

    if (ob_layer_saw_init || NULL == preload || NULL == strstr(preload, "omnibatch")
        || ob_layer_env_rank() > 0) {
        return;
    }
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (initialized || finalized) {
        ob_log_warn("this process ran MPI, but its MPI_Init did not pass through the preloaded "
                    "layer (with MPICH, Fortran's use mpi_f08 is not intercepted; use mpif.h or "
                    "the mpi module): nothing was measured, reported or traced");
    }
}

/*
 * The settings are read before PMPI_Init, but judged after it, in
 * ob_layer_agree(): a rank's bad value, or a setting that differs between
 * ranks, can only be told to every rank through MPI.  A rank stopping on
 * its own before PMPI_Init left only the launcher's exit box when the bad
 * value was not rank 0's.
 */
void ob_layer_preinit(void)
{
    const ob_config *cfg;

    ob_layer_saw_init = 1;
    ob_log_set_rank(ob_layer_env_rank());
    ob_foreign_check(ob_layer_env_rank());
    ob_layer_config_status = ob_config_global(&cfg);
    ob_log_set_debug(cfg->debug);
}

static void ob_layer_abandon_outputs(void);

/* Every rank, enabled or not, stops here together: nobody returns from
 * MPI_Init into a run whose ranks would disagree on the layer's collectives. */
static void ob_layer_stop(void)
{
    ob_layer_abandon_outputs();
    PMPI_Finalize();
    exit(EXIT_FAILURE);
}

/* Layout of the agreement vector (int64, MPI_MAX). */
enum {
    OB_AGREE_BAD_RANK = 0,       /* INT64_MAX - the lowest rank whose settings did not parse */
    OB_AGREE_START_FAILED = 1,   /* 1 when a rank could not start the layer */
    OB_AGREE_OUTPUT_FAILED = 2,  /* INT64_MAX - the lowest rank whose output cannot be written */
    OB_AGREE_HASHES = 3          /* per setting: its hash, then OB_CONFIG_HASH_TOP - hash */
};

/* Setting \p k differs: the lowest ranks holding its least and largest
 * hash find each other (one more allreduce, one broadcast) and the lower
 * of the two prints both values. */
static void ob_layer_disagree(const ob_config *cfg, size_t k, int64_t lo, int64_t hi, int rank)
{
    int64_t mine = (int64_t) ob_config_hash(cfg, k);
    int who[2] = { mine == lo ? INT32_MAX - rank : -1, mine == hi ? INT32_MAX - rank : -1 };
    char my_value[OB_LAYER_VALUE_MAX], other_value[OB_LAYER_VALUE_MAX];
    int rank_lo, rank_hi, printer, other;

    PMPI_Allreduce(MPI_IN_PLACE, who, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rank_lo = INT32_MAX - who[0];
    rank_hi = INT32_MAX - who[1];
    printer = rank_lo < rank_hi ? rank_lo : rank_hi;
    other = rank_lo < rank_hi ? rank_hi : rank_lo;
    ob_config_value(cfg, k, my_value, sizeof my_value);
    memcpy(other_value, my_value, sizeof other_value);
    PMPI_Bcast(other_value, (int) sizeof other_value, MPI_CHAR, other, MPI_COMM_WORLD);
    if (rank == printer) {
        ob_log_error("%s differs between ranks: rank %d has '%s', rank %d has '%s'; expected the "
                     "same value on every rank (mpirun -x %s=...)", ob_config_name(k), printer,
                     my_value, other, other_value, ob_config_name(k));
    }
}

/*
 * One collective that every rank runs inside MPI_Init, enabled or not:
 * whether every rank's settings parsed, whether each could start the layer
 * and open its output, and, for every setting that must agree, the least
 * and largest hash over the ranks.  On MPI_COMM_WORLD, since a disabled
 * rank has no private communicator and duplicating one is itself a
 * collective the ranks would first have to agree on; inside MPI_Init the
 * application has no operation of its own on MPI_COMM_WORLD yet, so
 * nothing can match it.  Any failure stops every rank with one line.
 */
static void ob_layer_agree(const ob_config *cfg, int start_ok, int output_ok)
{
    size_t n = ob_config_count();
    int64_t v[OB_AGREE_HASHES + 2 * OB_CONFIG_MAX_VARS];
    int rank = 0;
    size_t len = OB_AGREE_HASHES + 2 * n;

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v[OB_AGREE_BAD_RANK] = OMNIBATCH_SUCCESS == ob_layer_config_status ? -1 : INT64_MAX - rank;
    v[OB_AGREE_START_FAILED] = !start_ok;
    v[OB_AGREE_OUTPUT_FAILED] = output_ok ? -1 : INT64_MAX - rank;
    for (size_t k = 0; k < n; k++) {
        uint64_t h = ob_config_hash(cfg, k);

        v[OB_AGREE_HASHES + 2 * k] = (int64_t) h;
        v[OB_AGREE_HASHES + 2 * k + 1] = (int64_t) (OB_CONFIG_HASH_TOP - h);
    }
    PMPI_Allreduce(MPI_IN_PLACE, v, (int) len, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (v[OB_AGREE_BAD_RANK] >= 0) {
        if (INT64_MAX - v[OB_AGREE_BAD_RANK] == rank) {
            ob_config_global(NULL);
            ob_log_error("%s", ob_last_error());
        }
        ob_layer_stop();
    }
    for (size_t k = 0; k < n; k++) {
        int64_t hi = v[OB_AGREE_HASHES + 2 * k];
        int64_t lo = (int64_t) OB_CONFIG_HASH_TOP - v[OB_AGREE_HASHES + 2 * k + 1];

        if (lo != hi) {
            ob_layer_disagree(cfg, k, lo, hi, rank);
            ob_layer_stop();
        }
    }
    if (v[OB_AGREE_OUTPUT_FAILED] >= 0) {
        /* The rank that failed printed its line. */
        ob_layer_stop();
    }
    if (cfg->enable && OMNIBATCH_SUCCESS != ob_config_check_ranks(cfg, ob_layer_world_size())) {
        if (0 == rank) {
            ob_log_error("%s", ob_last_error());
        }
        ob_layer_stop();
    }
    if (v[OB_AGREE_START_FAILED] > 0) {
        ob_layer_start_failed = 1;
    }
}

/* \p span: the step's wall time (compute + blocked for a detected step);
 * \p reduction: the step model's reduction the API knows, < 0 unknown. */
static void ob_layer_count_step(ob_layer_state *L, const ob_step_record *rec, double span,
                                double reduction)
{

    L->stats.steps_seen++;
    if (L->stats.steps_seen > L->cfg->warmup) {
        ob_rank_stats_add_step(&L->stats, rec->batch, rec->compute, rec->blocked, span);
    }
    if (L->trace_on) {
        ob_trace_row row = { rec->index, rec->batch, rec->compute, rec->blocked, reduction,
                             L->wall_origin + rec->end };

        ob_ts_row(&row, ob_layer_clock());
    }
    ob_log_debug(3, "step %ld: %ld calls, batch %ld, compute %.6f s, blocked %.6f s", rec->index,
                 rec->calls, rec->batch, rec->compute, rec->blocked);
}

/* A step found by the detector, from the wrapped MPI calls. */
static void ob_layer_on_step(void *ctx, const ob_step_record *rec)
{
    ob_layer_state *L = ctx;

    /* A code that reduces through the API has its steps measured there,
     * exactly; its own recognised calls, if any, must not count twice. */
    if (0 == L->api_steps) {
        ob_layer_count_step(L, rec, rec->compute + rec->blocked, -1.0);
    }
}

/* A step the API measured (ob_active.h). */
static void ob_layer_on_api_step(long batch, long global_batch, long calls, double compute,
                                 double blocked, double span, double reduction)
{
    ob_layer_state *L = &ob_layer;
    ob_step_record rec;

    if (!__atomic_load_n(&ob_gate.measure, __ATOMIC_RELAXED)) {
        return;
    }
    pthread_mutex_lock(&L->lock);
    if (L->started) {
        rec.index = L->api_steps++;
        rec.batch = batch;
        rec.compute = compute;
        rec.blocked = blocked;
        rec.calls = calls;
        rec.end = ob_layer_clock();
        L->api_calls = calls;
        L->api_global_batch = global_batch;
        if (L->cfg->global_batch > 0 && L->cfg->global_batch != global_batch
            && !L->warned_global_batch) {
            L->warned_global_batch = 1;
            ob_log_warn_rank0("OMNIBATCH_GLOBAL_BATCH='%ld' differs from the global batch %ld of "
                              "the omnibatch context; the report uses the context's %ld",
                              L->cfg->global_batch, global_batch, global_batch);
        }
        ob_layer_count_step(L, &rec, span, reduction);
    }
    pthread_mutex_unlock(&L->lock);
}

/* Rank 0 opens what it will write, now, so that a path that cannot be
 * written stops the run before its first step, not after it; the same file
 * under two names (./x and x, a symlink) is caught by what they open. */
static int ob_layer_open_outputs(ob_layer_state *L, const ob_config *cfg)
{
    int ok = 1;

    if (0 != L->rank) {
        return 1;
    }
    if (OB_REPORT_OFF != cfg->report && '\0' != cfg->report_file[0]) {
        L->report_fd = ob_writer_open_fd(cfg->report_file, "OMNIBATCH_REPORT_FILE",
                                         &L->report_created);
        if (L->report_fd < 0) {
            ob_log_error("%s", ob_last_error());
            ok = 0;
        }
    }
    if (ok && '\0' != cfg->trace_file[0]) {
        if (OMNIBATCH_SUCCESS != ob_writer_open(&L->trace_out, cfg->trace_file, "OMNIBATCH_TRACE",
                                                0, ob_layer_clock())) {
            ob_log_error("%s", ob_last_error());
            ok = 0;
        } else if (L->report_fd >= 0) {
            ob_writer report;

            ob_writer_init(&report);
            report.fd = L->report_fd;
            if (ob_writer_same_file(&L->trace_out, &report)) {
                ob_log_error("OMNIBATCH_TRACE='%s' and OMNIBATCH_REPORT_FILE='%s' are the same "
                             "file: expected two different files", cfg->trace_file,
                             cfg->report_file);
                ok = 0;
            }
        }
    }
    if (ok && '\0' != cfg->timeline_file[0]) {
        int fd = ob_writer_open_fd(cfg->timeline_file, "OMNIBATCH_TIMELINE", &L->timeline_created);

        L->timeline = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (NULL == L->timeline) {
            if (fd >= 0) {
                close(fd);
                ob_writer_forget(cfg->timeline_file, &L->timeline_created);
            }
            ob_log_error("%s", ob_last_error());
            ok = 0;
        }
    }
    return ok;
}

/* The run goes ahead: the files are emptied, and the trace gets its
 * header at once, so that it shows a trace from the start.  A failure
 * here only costs that output (a warning), as later write errors do. */
static void ob_layer_start_outputs(ob_layer_state *L)
{
    if (L->report_fd >= 0 && OMNIBATCH_SUCCESS != ob_writer_truncate_fd(L->report_fd, L->cfg->report_file)) {
        ob_log_warn("report: %s", ob_last_error());
    }
    if (L->trace_out.fd >= 0) {
        int rc = ob_writer_start(&L->trace_out);

        if (OMNIBATCH_SUCCESS == rc) {
            ob_writer_append(&L->trace_out, OB_TRACE_HEADER, sizeof OB_TRACE_HEADER - 1);
            rc = ob_writer_flush(&L->trace_out, ob_layer_clock());
        }
        if (OMNIBATCH_SUCCESS != rc) {
            ob_log_warn("trace: %s", ob_last_error());
        }
    }
    if (NULL != L->timeline
        && OMNIBATCH_SUCCESS != ob_writer_truncate_fd(fileno(L->timeline), L->cfg->timeline_file)) {
        ob_log_warn("timeline: %s", ob_last_error());
    }
}

/* The run stops at init, or the layer stays off: what init created goes. */
static void ob_layer_abandon_outputs(void)
{
    ob_layer_state *L = &ob_layer;

    ob_writer_abandon(&L->trace_out);
    if (NULL != L->timeline) {
        fclose(L->timeline);
        L->timeline = NULL;
        ob_writer_forget(L->cfg->timeline_file, &L->timeline_created);
    }
    if (L->report_fd >= 0) {
        close(L->report_fd);
        L->report_fd = -1;
        ob_writer_forget(L->cfg->report_file, &L->report_created);
    }
}

/* The library's own exchange (ob_active.h): never compute. */
static void ob_layer_on_own(uint64_t t0_ns, uint64_t t1_ns)
{
    ob_layer_state *L = &ob_layer;

    ob_layer_record_wait(OB_STEPDETECT_OWN, (double) (t0_ns - L->origin_ns) * 1e-9,
                         (double) (t1_ns - L->origin_ns) * 1e-9);
}

void ob_layer_postinit(int thread_provided)
{
    ob_layer_state *L = &ob_layer;
    const ob_config *cfg;
    int start_ok = 1, output_ok = 1;

    ob_config_global(&cfg);
    L->cfg = cfg;
    L->thread_level = thread_provided;
    L->origin_ns = ob_now_ns();
    L->wall_origin = ob_layer_wall_now();
    L->last_end = 0.0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &L->rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &L->size);
    ob_log_set_rank(L->rank);
    ob_writer_init(&L->trace_out);
    if (cfg->enable && OMNIBATCH_SUCCESS == ob_layer_config_status) {
        start_ok = OMNIBATCH_SUCCESS
                == ob_stepdetect_create(cfg->calls_per_step, ob_layer_on_step, L, &L->det);
        if (!start_ok) {
            ob_log_warn("%s", ob_last_error());
        }
        output_ok = ob_layer_open_outputs(L, cfg);
    }
    /* Returns only when every rank's settings are good and the same. */
    ob_layer_agree(cfg, start_ok, output_ok);
    if (!cfg->enable || ob_layer_start_failed) {
        if (cfg->enable) {
            ob_log_warn_rank0("the layer stays off: a rank could not start it");
        }
        ob_stepdetect_destroy(L->det);
        L->det = NULL;
        ob_layer_abandon_outputs();
        return;
    }
    if (MPI_SUCCESS != PMPI_Comm_dup(MPI_COMM_WORLD, &L->comm)) {
        ob_log_warn_rank0("cannot duplicate MPI_COMM_WORLD: the layer stays off");
        ob_stepdetect_destroy(L->det);
        L->det = NULL;
        ob_layer_abandon_outputs();
        return;
    }
    ob_layer_start_outputs(L);
    PMPI_Comm_set_name(L->comm, "omnibatch");
    L->report_on = OB_REPORT_OFF != cfg->report;
    /* The rows go to rank 0 for the trace and for the timeline. */
    L->trace_on = '\0' != cfg->trace_file[0] || '\0' != cfg->timeline_file[0];
    L->congruent.comm = MPI_COMM_NULL;
    ob_rank_stats_init(&L->stats, L->rank);
    if (L->trace_on) {
        ob_ts_start(L->comm, L->rank, L->size, L->trace_out.fd >= 0 ? &L->trace_out : NULL,
                    L->timeline, L->wall_origin);
        L->timeline = NULL;      /* the stream closes it */
    }
    ob_req_init();
    ob_gate.min_bytes = cfg->min_bytes;
    ob_gate.min_count = (long) ((cfg->min_bytes + 7) / 8);
    __atomic_store_n(&ob_gate.measure, 1, __ATOMIC_RELAXED);
    L->started = 1;
    ob_active_set_step_hook(ob_layer_on_api_step);
    ob_active_set_own_hook(ob_layer_on_own);
    /* Last: from here on the fast paths see the layer. */
    __atomic_store_n(&ob_gate.recognise, 1, __ATOMIC_RELEASE);
    ob_log_debug(1, "preload layer on: %d ranks, thread level %d, gradient allreduces >= %zu bytes",
                 L->size, thread_provided, cfg->min_bytes);
}

double ob_layer_clock(void)
{
    return (double) (ob_now_ns() - ob_layer.origin_ns) * 1e-9;
}

/* Threads blocked at the same time block once: recording in order of
 * return and clipping each start to the previous end measures the union
 * of the intervals.  Called with the lock held. */
static double ob_layer_clip(ob_layer_state *L, double t0, double t1)
{
    if (t0 < L->last_end) {
        t0 = L->last_end < t1 ? L->last_end : t1;
    }
    if (t1 > L->last_end) {
        L->last_end = t1;
    }
    return t0;
}

void ob_layer_record_call(MPI_Comm comm, int count, int elem, double t0, double t1, long batch)
{
    ob_layer_state *L = &ob_layer;
    ob_call_sig sig;

    if (!__atomic_load_n(&ob_gate.measure, __ATOMIC_RELAXED)) {
        return;
    }
    sig.comm = (uint64_t) (uintptr_t) comm;
    sig.count = count;
    sig.elem = elem;
    pthread_mutex_lock(&L->lock);
    if (L->started) {
        ob_stepdetect_call(L->det, &sig, ob_layer_clip(L, t0, t1), t1, batch);
        if (L->trace_on) {
            ob_ts_tick(t1);
        }
    }
    pthread_mutex_unlock(&L->lock);
}

void ob_layer_record_wait(uint64_t comm, double t0, double t1)
{
    ob_layer_state *L = &ob_layer;

    if (!__atomic_load_n(&ob_gate.measure, __ATOMIC_RELAXED)) {
        return;
    }
    pthread_mutex_lock(&L->lock);
    if (L->started) {
        ob_stepdetect_wait(L->det, comm, ob_layer_clip(L, t0, t1), t1);
        if (L->trace_on) {
            ob_ts_tick(t1);
        }
    }
    pthread_mutex_unlock(&L->lock);
}

/* Does a gradient on \p comm belong to the context's reduction: a
 * communicator of more than one rank congruent with (or the same as) the
 * context's?  PMPI_Comm_compare walks both groups, so the verdict is kept
 * for the communicator last asked about (the pattern follows one), and
 * asked again when the context changes.  Called with the lock held. */
static int ob_layer_weighs_comm(ob_layer_state *L, MPI_Comm comm, uint64_t context,
                                unsigned long generation)
{
    int result = MPI_UNEQUAL, size = 0;

    if (L->congruent.comm == comm && L->congruent.context == context
        && L->congruent.generation == generation) {
        return L->congruent.weighs;
    }
    if (MPI_SUCCESS != PMPI_Comm_compare(comm, (MPI_Comm) (uintptr_t) context, &result)
        || MPI_SUCCESS != PMPI_Comm_size(comm, &size)) {
        result = MPI_UNEQUAL;
    }
    L->congruent.comm = comm;
    L->congruent.context = context;
    L->congruent.generation = generation;
    L->congruent.weighs = (MPI_IDENT == result || MPI_CONGRUENT == result) && size > 1;
    ob_log_debug(2, "gradients on communicator %#llx %s weighted", (unsigned long long) (uintptr_t) comm,
                 L->congruent.weighs ? "are" : "are not");
    return L->congruent.weighs;
}

int ob_layer_weighs(MPI_Comm comm, int count, int elem, double t0, uint64_t context,
                    unsigned long generation)
{
    ob_layer_state *L = &ob_layer;
    ob_call_sig sig;
    int weighs = 0;

    if (!__atomic_load_n(&ob_gate.measure, __ATOMIC_RELAXED)) {
        return 0;
    }
    sig.comm = (uint64_t) (uintptr_t) comm;
    sig.count = count;
    sig.elem = elem;
    pthread_mutex_lock(&L->lock);
    if (L->started && NULL != L->det) {
        /* The gap the recorder will see: t0 clipped as ob_layer_clip does. */
        double t = t0 < L->last_end ? L->last_end : t0;

        weighs = ob_stepdetect_expects(L->det, &sig, t)
              && ob_layer_weighs_comm(L, comm, context, generation);
    }
    pthread_mutex_unlock(&L->lock);
    return weighs;
}

void ob_layer_pcontrol(int level)
{
    ob_layer_state *L = &ob_layer;

    if (!L->started) {
        return;
    }
    pthread_mutex_lock(&L->lock);
    if (0 == level && __atomic_load_n(&ob_gate.measure, __ATOMIC_RELAXED)) {
        __atomic_store_n(&ob_gate.measure, 0, __ATOMIC_RELAXED);
        ob_stepdetect_pause(L->det);
    } else if (level >= 1) {
        __atomic_store_n(&ob_gate.measure, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&L->lock);
}

/* ------------------------------------------------------------- finalize */

static void ob_layer_describe_rank(ob_layer_state *L)
{
    ob_topology_info info;
    long cps = 0;

    if (L->api_steps > 0) {
        cps = L->api_calls;
    } else {
        ob_stepdetect_pattern(L->det, &cps, NULL);
    }
    L->stats.calls_per_step = cps;
    if (OMNIBATCH_SUCCESS == ob_topology_query(NULL, NULL, &info)) {
        memcpy(L->stats.host, info.hostname, sizeof L->stats.host);
        L->stats.host[sizeof L->stats.host - 1] = '\0';
        L->stats.cores = info.cores;
        L->stats.gpus = ob_topology_own_gpus(&info, getenv("CUDA_VISIBLE_DEVICES"));
    } else {
        ob_log_debug(1, "topology: %s", ob_last_error());
        if (0 != gethostname(L->stats.host, sizeof L->stats.host)) {
            strcpy(L->stats.host, "?");
        }
        L->stats.host[sizeof L->stats.host - 1] = '\0';
    }
}

/* Whether rank 0 could allocate what it receives: one int broadcast, so
 * that every rank skips the gather together instead of hanging. */
static int ob_layer_root_ok(ob_layer_state *L, int ok)
{
    PMPI_Bcast(&ok, 1, MPI_INT, 0, L->comm);
    return ok;
}

/* The report's file, opened at init (ob_layer_open_outputs), or stderr. */
static FILE *ob_layer_report_stream(ob_layer_state *L)
{
    FILE *f;

    if (L->report_fd < 0) {
        return stderr;
    }
    f = fdopen(L->report_fd, "w");
    if (NULL == f) {
        ob_log_warn("cannot write the report to %s: %s; writing it to stderr", L->cfg->report_file,
                    strerror(errno));
        close(L->report_fd);
        L->report_fd = -1;
        return stderr;
    }
    L->report_fd = -1;
    return f;
}

/* OMNIBATCH_PROFILE: compare with the previous run's split in the text
 * report (f; NULL: a JSON report, which keeps its fixed keys), then keep
 * this one. */
static void ob_layer_profile(const ob_config *cfg, const ob_report *rep, FILE *f)
{
    ob_profile prev;

    if ('\0' == cfg->profile_file[0] || !rep->measured) {
        return;
    }
    if (NULL == f) {
        /* Nothing to print: the profile is only kept. */
    } else if (OMNIBATCH_SUCCESS == ob_profile_read(cfg->profile_file, &prev)) {
        ob_profile_compare_text(f, rep, &prev, cfg->profile_file);
        ob_profile_free(&prev);
    } else {
        fprintf(f, "  profile: %s; this run's split is kept there for the next\n", ob_last_error());
    }
    if (OMNIBATCH_SUCCESS != ob_profile_write(cfg->profile_file, rep)) {
        ob_log_warn("%s", ob_last_error());
    }
}

static void ob_layer_write_report(ob_layer_state *L, const ob_rank_stats *all, long dropped)
{
    const ob_config *cfg = L->cfg;
    ob_report_settings settings;
    ob_report rep;
    FILE *f;
    int rc;

    /* A code on the API has told its global batch, the one that ran (a
     * differing setting was warned about). */
    settings.global_batch = L->api_global_batch > 0 ? L->api_global_batch : cfg->global_batch;
    settings.min_batch = cfg->min_batch;
    settings.max_batch = cfg->max_batch;
    settings.granularity = cfg->granularity;
    settings.steps_from_api = L->api_steps > 0;
    settings.warmup = cfg->warmup;
    settings.min_bytes = cfg->min_bytes;
    settings.calls_per_step_given = cfg->calls_per_step;
    settings.trace_dropped = dropped;
    settings.trace_file = cfg->trace_file;
    if (OMNIBATCH_SUCCESS != ob_report_analyse(all, L->size, &settings, &rep)) {
        ob_log_warn("report: %s", ob_last_error());
        return;
    }
    f = ob_layer_report_stream(L);
    rc = OB_REPORT_JSON == cfg->report ? ob_report_write_json(f, &rep) : ob_report_write_text(f, &rep);
    if (OMNIBATCH_SUCCESS == rc) {
        ob_layer_profile(cfg, &rep, OB_REPORT_JSON == cfg->report ? NULL : f);
    }
    if (stderr != f && 0 != fclose(f) && OMNIBATCH_SUCCESS == rc) {
        rc = ob_fail(OMNIBATCH_ERR_IO, "%s", strerror(errno));
    }
    if (OMNIBATCH_SUCCESS != rc) {
        ob_log_warn("cannot write the report to %s: %s",
                    stderr == f ? "stderr" : cfg->report_file, ob_last_error());
    }
    ob_report_free(&rep);
}

/* A program that never trained (a --help, a typo in its options, a tool
 * that only links the library) stays silent: the report is written when
 * some rank saw a step, warm-up included, or when the user asked for it by
 * setting OMNIBATCH_REPORT or OMNIBATCH_REPORT_FILE. */
static int ob_layer_report_wanted(const ob_layer_state *L, const ob_rank_stats *all)
{
    if (NULL != getenv("OMNIBATCH_REPORT") || NULL != getenv("OMNIBATCH_REPORT_FILE")
        || L->api_steps > 0) {
        return 1;
    }
    for (int i = 0; i < L->size; i++) {
        if (all[i].steps_seen > 0) {
            return 1;
        }
    }
    return 0;
}

void ob_layer_finalize(void)
{
    ob_layer_state *L = &ob_layer;
    ob_rank_stats *all = NULL;
    long dropped = 0;
    int report = 0;

    if (!L->started) {
        return;
    }
    ob_in_layer = 1;
    ob_active_set_step_hook(NULL);
    ob_active_set_own_hook(NULL);
    __atomic_store_n(&ob_gate.recognise, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&L->lock);
    ob_stepdetect_finish(L->det);
    pthread_mutex_unlock(&L->lock);

    report = L->report_on;
    if (report) {
        ob_layer_describe_rank(L);
        if (0 == L->rank) {
            all = malloc((size_t) L->size * sizeof *all);
            if (NULL == all) {
                ob_log_warn("no memory to gather the report; none written");
            }
        }
        if (ob_layer_root_ok(L, 0 != L->rank || NULL != all)) {
            PMPI_Gather(&L->stats, (int) sizeof L->stats, MPI_BYTE, all, (int) sizeof L->stats,
                        MPI_BYTE, 0, L->comm);
        }
    }
    if (L->trace_on) {
        pthread_mutex_lock(&L->lock);
        dropped = (long) ob_ts_finish(ob_layer_clock());
        pthread_mutex_unlock(&L->lock);
    }
    if (report && 0 == L->rank && NULL != all && ob_layer_report_wanted(L, all)) {
        ob_layer_write_report(L, all, dropped);
    }

    free(all);
    pthread_mutex_lock(&L->lock);
    L->started = 0;
    ob_stepdetect_destroy(L->det);
    L->det = NULL;
    pthread_mutex_unlock(&L->lock);
    if (L->report_fd >= 0) {
        close(L->report_fd);
        L->report_fd = -1;
    }
    ob_req_cleanup();
    ob_weight_cleanup();
    PMPI_Comm_free(&L->comm);
    ob_in_layer = 0;
}
