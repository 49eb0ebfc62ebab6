/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The layer's start, inside MPI_Init: the settings read before PMPI_Init
 * and judged after it, the one agreement collective every rank runs, the
 * outputs rank 0 opens before the first step, and the switch that lets
 * the fast paths see the layer.  The hot path is in layer.c, finalize in
 * finalize.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#include "ob_config.h"
#include "ob_error.h"
#include "ob_hook.h"
#include "ob_layer.h"
#include "ob_layer_state.h"
#include "ob_log.h"
#include "ob_requests.h"
#include "ob_stepdetect.h"
#include "ob_timing.h"
#include "ob_trace.h"
#include "ob_writer.h"

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
    OB_AGREE_UNKNOWN = 3,        /* the unknown OMNIBATCH_* names' hash, then OB_CONFIG_HASH_TOP - it */
    OB_AGREE_HASHES = 5          /* per setting: its hash, then OB_CONFIG_HASH_TOP - hash */
};

/* Rank 0 warned about the OMNIBATCH_* names of its environment that are no
 * setting (ob_config_from_env()); where the ranks' names differ, a rank
 * whose own are not rank 0's warns about them itself, so that a misspelling
 * in one rank's environment (a host's profile, an MPMD part) is not lost. */
static void ob_layer_unknown_names(uint64_t mine, int rank)
{
    int64_t first = (int64_t) mine;

    PMPI_Bcast(&first, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 != rank && 0 != mine && (uint64_t) first != mine) {
        ob_config_warn_unknown(environ);
    }
}

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
    uint64_t unknown;

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v[OB_AGREE_BAD_RANK] = OMNIBATCH_SUCCESS == ob_layer_config_status ? -1 : INT64_MAX - rank;
    v[OB_AGREE_START_FAILED] = !start_ok;
    v[OB_AGREE_OUTPUT_FAILED] = output_ok ? -1 : INT64_MAX - rank;
    unknown = ob_config_unknown_hash(environ);
    v[OB_AGREE_UNKNOWN] = (int64_t) unknown;
    v[OB_AGREE_UNKNOWN + 1] = (int64_t) (OB_CONFIG_HASH_TOP - unknown);
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
    if (v[OB_AGREE_UNKNOWN] != (int64_t) OB_CONFIG_HASH_TOP - v[OB_AGREE_UNKNOWN + 1]) {
        ob_layer_unknown_names(unknown, rank);
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

/* Rank 0: the variable of the output already open (the trace, the report,
 * the timeline) that writes the file \p st describes, its path in *path;
 * NULL when none does.  Two outputs in one file would ruin both. */
static const char *ob_layer_output_of(const ob_layer_state *L, const ob_config *cfg,
                                      const struct stat *st, const char **path)
{
    const struct {
        int fd;
        const char *variable, *path;
    } out[3] = {
        { L->trace_out.fd, "OMNIBATCH_TRACE", cfg->trace_file },
        { L->report_fd, "OMNIBATCH_REPORT_FILE", cfg->report_file },
        { NULL == L->timeline ? -1 : fileno(L->timeline), "OMNIBATCH_TIMELINE", cfg->timeline_file },
    };

    for (int i = 0; i < 3; i++) {
        if (ob_writer_fd_is(out[i].fd, st)) {
            *path = out[i].path;
            return out[i].variable;
        }
    }
    return NULL;
}

/* Rank 0: OMNIBATCH_TIMELINE, a third file, which must be neither of the
 * other two (opened before it). */
static int ob_layer_open_timeline(ob_layer_state *L, const ob_config *cfg)
{
    int fd = ob_writer_open_fd(cfg->timeline_file, "OMNIBATCH_TIMELINE", &L->timeline_created);
    const char *other = NULL, *other_file = NULL;
    struct stat st;

    if (fd >= 0 && 0 == fstat(fd, &st)) {
        other = ob_layer_output_of(L, cfg, &st, &other_file);
    }
    L->timeline = fd >= 0 && NULL == other ? fdopen(fd, "w") : NULL;
    if (NULL != L->timeline) {
        return 1;
    }
    if (fd >= 0) {
        close(fd);
        ob_writer_forget(cfg->timeline_file, &L->timeline_created);
    }
    if (NULL != other) {
        ob_log_error("OMNIBATCH_TIMELINE='%s' and %s='%s' are the same file: expected two "
                     "different files", cfg->timeline_file, other, other_file);
    } else {
        ob_log_error("%s", ob_last_error());
    }
    return 0;
}

/* Rank 0: the profile is written at MPI_Finalize as PATH.tmp, then
 * renamed over PATH.  Its directory must take that file now, PATH must not
 * be a directory, nor one of the other outputs, which the rename would
 * replace at the end of the run. */
static int ob_layer_check_profile(const ob_layer_state *L, const ob_config *cfg)
{
    const char *path = cfg->profile_file;
    const char *other, *other_file;
    char tmp[sizeof cfg->profile_file + 8];
    struct stat st;
    int fd;

    if (0 == stat(path, &st)) {
        if (NULL != (other = ob_layer_output_of(L, cfg, &st, &other_file))) {
            ob_log_error("OMNIBATCH_PROFILE='%s' is the file of %s: expected another file", path, other);
            return 0;
        }
        if (S_ISDIR(st.st_mode)) {
            ob_log_error("OMNIBATCH_PROFILE='%s': cannot write there: %s", path, strerror(EISDIR));
            return 0;
        }
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    } else if (EEXIST != errno) {
        ob_log_error("OMNIBATCH_PROFILE='%s': cannot write there: %s", path, strerror(errno));
        return 0;
    }
    return 1;
}

/* Rank 0 opens what it will write, now, so that a path that cannot be
 * written stops the run before its first step, not after it; the same file
 * under two names (./x and x, a symlink) is caught by what they open. */
static int ob_layer_open_outputs(ob_layer_state *L, const ob_config *cfg)
{
    struct stat st;
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
        } else if (0 == fstat(L->trace_out.fd, &st) && ob_writer_fd_is(L->report_fd, &st)) {
            ob_log_error("OMNIBATCH_TRACE='%s' and OMNIBATCH_REPORT_FILE='%s' are the same "
                         "file: expected two different files", cfg->trace_file, cfg->report_file);
            ok = 0;
        }
    }
    if (ok && '\0' != cfg->timeline_file[0]) {
        ok = ob_layer_open_timeline(L, cfg);
    }
    if (ok && '\0' != cfg->profile_file[0]) {
        ok = ob_layer_check_profile(L, cfg);
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
    /* The ranks' sums go to rank 0 for the report and for the profile. */
    L->report_on = OB_REPORT_OFF != cfg->report || '\0' != cfg->profile_file[0];
    /* The rows go to rank 0 for the trace and for the timeline. */
    L->trace_on = '\0' != cfg->trace_file[0] || '\0' != cfg->timeline_file[0];
    L->congruent.comm = MPI_COMM_NULL;
    ob_layer_watch_start();
    ob_rank_stats_init(&L->stats, L->rank);
    ob_layer_cpu_start(L);
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
    ob_hook_set_step(ob_layer_on_api_step);
    ob_hook_set_own(ob_layer_on_own);
    /* Last: from here on the fast paths see the layer. */
    __atomic_store_n(&ob_gate.recognise, 1, __ATOMIC_RELEASE);
    ob_log_debug(1, "preload layer on: %d ranks, thread level %d, gradient allreduces >= %zu bytes",
                 L->size, thread_provided, cfg->min_bytes);
}
