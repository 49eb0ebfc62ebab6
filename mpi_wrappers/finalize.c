/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The layer's end, inside MPI_Finalize: the recorder stops, every rank's
 * sums are gathered on rank 0 (one broadcast first, so that a rank 0
 * without memory makes every rank skip the gather together), the trace
 * stream drains, and rank 0 analyses and writes the report.  Init is in
 * setup.c, the hot path in layer.c.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_error.h"
#include "ob_hook.h"
#include "ob_layer.h"
#include "ob_layer_state.h"
#include "ob_log.h"
#include "ob_profile.h"
#include "ob_report.h"
#include "ob_requests.h"
#include "ob_stepdetect.h"
#include "ob_topology.h"

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
 * report (f; NULL: none to print in -- a JSON report, which keeps its
 * fixed keys, no report, or one that could not be written), then keep
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
    if (OB_REPORT_OFF == cfg->report) {
        ob_layer_profile(cfg, &rep, NULL);
        ob_report_free(&rep);
        return;
    }
    f = ob_layer_report_stream(L);
    rc = OB_REPORT_JSON == cfg->report ? ob_report_write_json(f, &rep) : ob_report_write_text(f, &rep);
    /* The profile is the next run's input: kept whether or not the report
     * could be written. */
    ob_layer_profile(cfg, &rep, OB_REPORT_TEXT == cfg->report && OMNIBATCH_SUCCESS == rc ? f : NULL);
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
    ob_hook_set_step(NULL);
    ob_hook_set_own(NULL);
    __atomic_store_n(&ob_gate.recognise, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&L->lock);
    ob_stepdetect_finish(L->det);
    /* The end of what the kernel gave the rank, once the last steps are in:
     * before the gather. */
    ob_layer_cpu_finish(L);
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
    ob_layer_watch_stop();
    PMPI_Comm_free(&L->comm);
    ob_in_layer = 0;
}
