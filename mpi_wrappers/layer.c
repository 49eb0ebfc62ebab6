/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The layer's hot path: the recorder that turns recognised calls into
 * steps (src/observe/stepdetect.c), per-rank sums (src/observe/report.c) and
 * trace rows (tracestream.c), the API's notes of its own steps (ob_hook.h),
 * and the weighting verdict.  Everything here runs only for recognised
 * calls, under one lock; the passthrough path never comes here.  Init is
 * in setup.c, finalize in finalize.c.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>

#include "ob_layer.h"
#include "ob_layer_state.h"
#include "ob_log.h"
#include "ob_stepdetect.h"
#include "ob_timing.h"
#include "ob_trace.h"

ob_layer_gate ob_gate;
__thread int ob_in_layer;

ob_layer_state ob_layer = { .lock = PTHREAD_MUTEX_INITIALIZER, .report_fd = -1,
                            .cpu_probe = { .schedstat_fd = -1, .stat_fd = -1, .quota = 0.0 } };

void ob_layer_cpu_start(ob_layer_state *L)
{
    ob_cpu_probe_open_self(&L->cpu_probe);
    L->cpu_begun = 0;
    if (L->trace_on && !ob_cpu_marks_init(&L->cpu_marks)) {
        ob_log_warn("no memory to keep the CPU of each step: the trace's CPU columns stay empty");
    }
}

void ob_layer_cpu_finish(ob_layer_state *L)
{
    ob_cpu_sample now;
    ob_cpu_use use;

    if (L->cpu_begun) {
        ob_cpu_probe_read(&L->cpu_probe, &now);
        ob_cpu_use_between(&L->cpu_begin, &now, L->cpu_probe.quota, &use);
        ob_rank_stats_set_cpu(&L->stats, &use);
    }
    ob_cpu_probe_close(&L->cpu_probe);
    ob_cpu_marks_free(&L->cpu_marks);
}

/* The report's start: the first gradient the layer saw (the detector may
 * learn the step's pattern, and hand over the steps it held, much later).
 * Called with the lock held. */
static void ob_layer_cpu_begin(ob_layer_state *L)
{
    if (!L->cpu_begun) {
        ob_cpu_probe_read(&L->cpu_probe, &L->cpu_begin);
        L->cpu_begun = 1;
    }
}

/* OMNIBATCH_TRACE: what the kernel had given the rank when a recognised
 * call ended at \p t (layer clock), for the trace row of the step it may
 * end (ob_cpumarks.h; a few microseconds a call).  Called with the lock held. */
static void ob_layer_cpu_mark(ob_layer_state *L, double t)
{
    ob_cpu_sample now;

    if (L->trace_on) {
        ob_cpu_probe_read(&L->cpu_probe, &now);
        ob_cpu_marks_add(&L->cpu_marks, t, &now);
    }
}

/* What the kernel gave the rank in the step of a trace row: between the
 * marks at its end and at the previous step's end.  Called with the lock held. */
static void ob_layer_cpu_row(ob_layer_state *L, const ob_step_record *rec, ob_trace_row *row)
{
    ob_cpu_use use;

    if (ob_cpu_marks_step(&L->cpu_marks, rec->end, L->cpu_probe.quota, &use)) {
        row->cpu_known = 1;
        row->cpu_s = use.cpu_s;
        row->nivcsw = use.nivcsw;
        row->off_cpu_s = use.delay_s;
        row->throttled_s = use.throttled_s;
    }
}

/* \p span: the step's wall time (compute + blocked for a detected step);
 * \p reduction: the step model's reduction the API knows, < 0 unknown. */
static void ob_layer_count_step(ob_layer_state *L, const ob_step_record *rec, double span,
                                double reduction)
{
    ob_trace_row row = { .step = rec->index, .batch = rec->batch, .compute_s = rec->compute,
                         .blocked_s = rec->blocked, .reduction_s = reduction,
                         .time_s = L->wall_origin + rec->end, .taken = rec->taken, .given = rec->given };

    L->stats.steps_seen++;
    if (L->stats.steps_seen > L->cfg->warmup) {
        ob_rank_stats_add_step(&L->stats, rec->batch, rec->compute, rec->blocked, span);
        ob_rank_stats_add_moved(&L->stats, rec->taken, rec->given);
    }
    if (L->trace_on) {
        ob_layer_cpu_row(L, rec, &row);
        ob_ts_row(&row, ob_layer_clock());
    }
    ob_log_debug(3, "step %ld: %ld calls, batch %ld, compute %.6f s, blocked %.6f s", rec->index,
                 rec->calls, rec->batch, rec->compute, rec->blocked);
}

/* A step found by the detector, from the wrapped MPI calls. */
void ob_layer_on_step(void *ctx, const ob_step_record *rec)
{
    ob_layer_state *L = ctx;

    /* A code that reduces through the API has its steps measured there,
     * exactly; its own recognised calls, if any, must not count twice. */
    if (0 == L->api_steps) {
        ob_layer_count_step(L, rec, rec->compute + rec->blocked, -1.0);
    }
}

/* A step the API measured (ob_hook.h), with the controller's plan and
 * model of this rank for the report (one path for the plan, ob_report.h). */
void ob_layer_on_api_step(const ob_step_note *note)
{
    ob_layer_state *L = &ob_layer;
    ob_step_record rec;

    if (!__atomic_load_n(&ob_gate.measure, __ATOMIC_RELAXED)) {
        return;
    }
    pthread_mutex_lock(&L->lock);
    if (L->started) {
        ob_layer_cpu_begin(L);
        rec.index = L->api_steps++;
        rec.batch = note->batch;
        rec.compute = note->compute;
        rec.blocked = note->blocked;
        rec.calls = note->calls;
        rec.taken = note->taken;
        rec.given = note->given;
        rec.end = ob_layer_clock();
        ob_layer_cpu_mark(L, rec.end);
        L->api_calls = note->calls;
        L->api_global_batch = note->global_batch;
        if (L->cfg->global_batch > 0 && L->cfg->global_batch != note->global_batch
            && !L->warned_global_batch) {
            L->warned_global_batch = 1;
            ob_log_warn_rank0("OMNIBATCH_GLOBAL_BATCH='%ld' differs from the global batch %ld of "
                              "the omnibatch context; the report uses the context's %ld",
                              L->cfg->global_batch, note->global_batch, note->global_batch);
        }
        if (note->model) {
            ob_rank_stats_set_plan(&L->stats, note->plan, note->alpha, note->beta);
        } else {
            L->stats.ctl_model = 0;
        }
        ob_layer_count_step(L, &rec, note->span, note->reduction);
    }
    pthread_mutex_unlock(&L->lock);
}

/* The library's own exchange (ob_hook.h): never compute. */
void ob_layer_on_own(uint64_t t0_ns, uint64_t t1_ns)
{
    ob_layer_state *L = &ob_layer;

    ob_layer_record_wait(OB_STEPDETECT_OWN, (double) (t0_ns - L->origin_ns) * 1e-9,
                         (double) (t1_ns - L->origin_ns) * 1e-9);
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
        ob_layer_cpu_begin(L);
        ob_layer_cpu_mark(L, t1);
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
        ob_layer_cpu_mark(L, t1);
        ob_stepdetect_wait(L->det, comm, ob_layer_clip(L, t0, t1), t1);
        if (L->trace_on) {
            ob_ts_tick(t1);
        }
    }
    pthread_mutex_unlock(&L->lock);
}

/* The attribute that tells the layer a communicator with a kept verdict
 * was freed (MPI_KEYVAL_INVALID: none, and no verdict is kept). */
static int ob_layer_keyval = MPI_KEYVAL_INVALID;

/* MPI frees a communicator the verdict may be kept for: the handle may
 * come back as another communicator (Open MPI reuses the memory, MPICH
 * the handle), which must not inherit it.  Without the layer's lock: MPI
 * may hold a lock of its own here that a thread holding ours, setting an
 * attribute, waits for. */
static int ob_layer_comm_freed(MPI_Comm comm, int keyval, void *value, void *extra)
{
    MPI_Comm kept = comm;

    (void) keyval;
    (void) value;
    (void) extra;
    __atomic_compare_exchange_n(&ob_layer.congruent.comm, &kept, MPI_COMM_NULL, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

void ob_layer_watch_start(void)
{
    if (MPI_SUCCESS != PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ob_layer_comm_freed,
                                               &ob_layer_keyval, NULL)) {
        ob_layer_keyval = MPI_KEYVAL_INVALID;
    }
}

void ob_layer_watch_stop(void)
{
    /* The attributes set stay, and call back when their communicators go. */
    if (MPI_KEYVAL_INVALID != ob_layer_keyval) {
        PMPI_Comm_free_keyval(&ob_layer_keyval);
        ob_layer_keyval = MPI_KEYVAL_INVALID;
    }
}

/* Will the layer hear when \p comm is freed? */
static int ob_layer_watch(MPI_Comm comm)
{
    void *value = NULL;
    int found = 0;

    if (MPI_KEYVAL_INVALID == ob_layer_keyval
        || MPI_SUCCESS != PMPI_Comm_get_attr(comm, ob_layer_keyval, &value, &found)) {
        return 0;
    }
    return found || MPI_SUCCESS == PMPI_Comm_set_attr(comm, ob_layer_keyval, NULL);
}

/* Does a gradient on \p comm belong to the context's reduction: a
 * communicator of more than one rank congruent with (or the same as) the
 * context's?  PMPI_Comm_compare walks both groups, so the verdict is kept
 * for the communicator last asked about (the pattern follows one) until
 * it is freed, and asked again when the context changes.  Called with the
 * lock held. */
static int ob_layer_weighs_comm(ob_layer_state *L, MPI_Comm comm, uint64_t context,
                                unsigned long generation)
{
    int result = MPI_UNEQUAL, size = 0;

    if (__atomic_load_n(&L->congruent.comm, __ATOMIC_ACQUIRE) == comm
        && L->congruent.context == context && L->congruent.generation == generation) {
        return L->congruent.weighs;
    }
    if (MPI_SUCCESS != PMPI_Comm_compare(comm, (MPI_Comm) (uintptr_t) context, &result)
        || MPI_SUCCESS != PMPI_Comm_size(comm, &size)) {
        result = MPI_UNEQUAL;
    }
    L->congruent.context = context;
    L->congruent.generation = generation;
    L->congruent.weighs = (MPI_IDENT == result || MPI_CONGRUENT == result) && size > 1;
    __atomic_store_n(&L->congruent.comm, ob_layer_watch(comm) ? comm : MPI_COMM_NULL,
                     __ATOMIC_RELEASE);
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
