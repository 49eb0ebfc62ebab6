/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The layer's state: settings, the private communicator, and the recorder
 * that turns recognised calls into steps (src/stepdetect.c), per-rank sums
 * (src/report.c) and trace rows (src/trace.c).  Everything here runs only
 * for recognised calls and at init and finalize, under one lock.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_active.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_layer.h"
#include "ob_requests.h"
#include "ob_log.h"
#include "ob_report.h"
#include "ob_stepdetect.h"
#include "ob_timing.h"
#include "ob_topology.h"
#include "ob_trace.h"

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
    ob_trace trace;
    double last_end;             /* end of the last recorded blocked interval, any thread */
    long api_steps;              /* steps the API measured (ob_active.h); then the detector is ignored */
    long api_calls;              /* gradient allreduces per API step (the last one's) */
    long api_global_batch;       /* the API context's B */
    int report_on;               /* rank 0's settings, the same on every rank: */
    int trace_on;                /* the finalize collectives must match */
    struct {                     /* the last verdict of ob_layer_weighs_comm() */
        MPI_Comm comm;
        uint64_t context;
        unsigned long generation;
        int weighs;
    } congruent;
} ob_layer_state;

static ob_layer_state ob_layer = { .lock = PTHREAD_MUTEX_INITIALIZER };

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

/*
 * The settings are checked before PMPI_Init, not after: every rank reads
 * the same environment (mpirun -x), so every rank reaches the same verdict
 * alone, with no collective that could hang if the ranks disagreed, and a
 * run with a bad value stops before MPI or the code does anything.  The
 * launcher's rank variable lets rank 0 alone print the line; the exit
 * status tells the launcher, which ends the job.
 */
void ob_layer_preinit(void)
{
    const ob_config *cfg;
    int env_rank = ob_layer_env_rank();

    ob_log_set_rank(env_rank);
    if (OMNIBATCH_SUCCESS != ob_config_global(&cfg)) {
        if (env_rank <= 0) {
            ob_log_error("%s", ob_last_error());
        }
        exit(EXIT_FAILURE);
    }
    ob_log_set_debug(cfg->debug);
}

static void ob_layer_count_step(ob_layer_state *L, const ob_step_record *rec)
{

    L->stats.steps_seen++;
    if (L->stats.steps_seen > L->cfg->warmup) {
        ob_rank_stats_add(&L->stats, rec->batch, rec->compute, rec->blocked);
    }
    if (L->trace_on) {
        ob_trace_row row = { rec->index, rec->batch, rec->compute, rec->blocked };

        ob_trace_append(&L->trace, &row);
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
        ob_layer_count_step(L, rec);
    }
}

/* A step the API measured (ob_active.h). */
static void ob_layer_on_api_step(long batch, long global_batch, long calls, double compute,
                                 double blocked)
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
        L->api_calls = calls;
        L->api_global_batch = global_batch;
        ob_layer_count_step(L, &rec);
    }
    pthread_mutex_unlock(&L->lock);
}

void ob_layer_postinit(int thread_provided)
{
    ob_layer_state *L = &ob_layer;
    const ob_config *cfg;
    int flags[3], ok;

    ob_config_global(&cfg);
    if (!cfg->enable) {
        return;
    }
    L->cfg = cfg;
    L->thread_level = thread_provided;
    L->origin_ns = ob_now_ns();
    L->last_end = 0.0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &L->rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &L->size);
    ob_log_set_rank(L->rank);
    if (MPI_SUCCESS != PMPI_Comm_dup(MPI_COMM_WORLD, &L->comm)) {
        ob_log_warn_rank0("cannot duplicate MPI_COMM_WORLD: the layer stays off");
        return;
    }
    PMPI_Comm_set_name(L->comm, "omnibatch");
    ok = OMNIBATCH_SUCCESS == ob_stepdetect_create(cfg->calls_per_step, ob_layer_on_step, L, &L->det);
    if (!ok) {
        ob_log_warn("%s", ob_last_error());
    }
    /* What MPI_Finalize gathers follows rank 0's settings on every rank,
     * and the layer starts everywhere or nowhere: a rank that took part
     * in fewer collectives than the others would hang them.  One MAX
     * allreduce carries both: rank 0's two flags (the others give -1) and
     * -ok (so any rank's failure wins).  Not a broadcast: after an MPI_Bcast,
     * Open MPI 4.1's shared-memory path runs every later small
     * MPI_Allreduce of the application about 100 ns slower (measured with
     * bench/overhead), a cost the layer must not leave behind. */
    flags[0] = 0 == L->rank ? OB_REPORT_OFF != cfg->report : -1;
    flags[1] = 0 == L->rank ? '\0' != cfg->trace_file[0] : -1;
    flags[2] = -ok;
    PMPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_INT, MPI_MAX, L->comm);
    L->report_on = flags[0];
    L->trace_on = flags[1];
    ok = -flags[2];
    if (!ok) {
        ob_log_warn_rank0("the layer stays off: a rank could not start it");
        ob_stepdetect_destroy(L->det);
        L->det = NULL;
        PMPI_Comm_free(&L->comm);
        return;
    }
    ob_rank_stats_init(&L->stats, L->rank);
    ob_trace_init(&L->trace, L->trace_on ? ob_trace_rank_limit(L->size) : 0);
    ob_req_init();
    ob_gate.min_bytes = cfg->min_bytes;
    ob_gate.min_count = (long) ((cfg->min_bytes + 7) / 8);
    __atomic_store_n(&ob_gate.measure, 1, __ATOMIC_RELAXED);
    L->started = 1;
    ob_active_set_step_hook(ob_layer_on_api_step);
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
        L->stats.gpus = info.gpus;
    } else {
        ob_log_debug(1, "topology: %s", ob_last_error());
        if (0 != gethostname(L->stats.host, sizeof L->stats.host)) {
            strcpy(L->stats.host, "?");
        }
        L->stats.host[sizeof L->stats.host - 1] = '\0';
    }
}

static FILE *ob_layer_open(const char *path, const char *what)
{
    FILE *f;

    if ('\0' == path[0]) {
        return stderr;
    }
    f = fopen(path, "w");
    if (NULL == f) {
        ob_log_warn("cannot write the %s to %s; writing it to stderr", what, path);
        return stderr;
    }
    return f;
}

static void ob_layer_close(FILE *f)
{
    if (stderr != f) {
        fclose(f);
    }
}

/* Whether rank 0 could allocate what it receives: one int broadcast, so
 * that every rank skips the gather together instead of hanging. */
static int ob_layer_root_ok(ob_layer_state *L, int ok)
{
    PMPI_Bcast(&ok, 1, MPI_INT, 0, L->comm);
    return ok;
}

/* Rank 0 gets every rank's trace rows (PMPI_Gatherv on the private
 * communicator) and writes the CSV; the rows fit OB_TRACE_MAX_ROWS. */
static long ob_layer_gather_trace(ob_layer_state *L)
{
    long long mine[2] = { (long long) L->trace.n, (long long) L->trace.dropped };
    long long *all = NULL;
    int *bytes = NULL, *displs = NULL;
    long *counts = NULL;
    ob_trace_row *rows = NULL;
    long dropped = 0;
    long total = 0;
    int ok = 1;

    if (0 == L->rank) {
        all = malloc(2 * (size_t) L->size * sizeof *all);
        ok = NULL != all;
    }
    if (!ob_layer_root_ok(L, ok)) {
        goto fail;
    }
    PMPI_Gather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, 0, L->comm);
    if (0 == L->rank) {
        bytes = malloc((size_t) L->size * sizeof *bytes);
        displs = malloc((size_t) L->size * sizeof *displs);
        counts = malloc((size_t) L->size * sizeof *counts);
        ok = NULL != bytes && NULL != displs && NULL != counts;
        for (int r = 0; ok && r < L->size; r++) {
            counts[r] = (long) all[2 * r];
            dropped += (long) all[2 * r + 1];
            displs[r] = (int) ((size_t) total * sizeof *rows);
            bytes[r] = (int) ((size_t) counts[r] * sizeof *rows);
            total += counts[r];
        }
        if (ok) {
            rows = malloc((size_t) (total > 0 ? total : 1) * sizeof *rows);
            ok = NULL != rows;
        }
    }
    if (!ob_layer_root_ok(L, ok)) {
        goto fail;
    }
    PMPI_Gatherv(L->trace.rows, (int) ((size_t) L->trace.n * sizeof *L->trace.rows), MPI_BYTE,
                 rows, bytes, displs, MPI_BYTE, 0, L->comm);
    if (0 == L->rank) {
        FILE *f = fopen(L->cfg->trace_file, "w");

        if (NULL == f) {
            ob_log_warn("cannot write the trace to %s", L->cfg->trace_file);
        } else {
            if (OMNIBATCH_SUCCESS != ob_trace_write(f, rows, counts, L->size)) {
                ob_log_warn("trace %s: %s", L->cfg->trace_file, ob_last_error());
            }
            fclose(f);
        }
    }
    goto done;

fail:
    if (0 == L->rank) {
        ob_log_warn("no memory to gather the trace; %s not written", L->cfg->trace_file);
    }
done:
    free(all);
    free(bytes);
    free(displs);
    free(counts);
    free(rows);
    return dropped;
}

static void ob_layer_write_report(ob_layer_state *L, const ob_rank_stats *all, long dropped)
{
    const ob_config *cfg = L->cfg;
    ob_report_settings settings;
    ob_report rep;
    FILE *f;

    /* A code on the API has told its global batch; the setting, if given, wins. */
    settings.global_batch = cfg->global_batch > 0 ? cfg->global_batch : L->api_global_batch;
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
    f = ob_layer_open(cfg->report_file, "report");
    if (OB_REPORT_JSON == cfg->report) {
        ob_report_write_json(f, &rep);
    } else {
        ob_report_write_text(f, &rep);
    }
    ob_layer_close(f);
    ob_report_free(&rep);
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
        dropped = ob_layer_gather_trace(L);
    }
    if (report && 0 == L->rank && NULL != all) {
        ob_layer_write_report(L, all, dropped);
    }

    free(all);
    pthread_mutex_lock(&L->lock);
    L->started = 0;
    ob_stepdetect_destroy(L->det);
    L->det = NULL;
    ob_trace_free(&L->trace);
    pthread_mutex_unlock(&L->lock);
    ob_req_cleanup();
    ob_weight_cleanup();
    PMPI_Comm_free(&L->comm);
    ob_in_layer = 0;
}
