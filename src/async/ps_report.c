/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The asynchronous run's report and trace on server 0 (ob_ps.h), written
 * by ob_psreport.h's printers.  They follow the PMPI layer's settings, in
 * files of their own beside the layer's: the report in OMNIBATCH_REPORT's
 * format (off: none) at the run's end, to stderr or to OMNIBATCH_REPORT_FILE
 * with ".async" appended; the trace, one row per push as it is taken, to
 * OMNIBATCH_TRACE with ".async" appended.  Both files are opened at create,
 * so a path that cannot be written fails every rank there, before any push.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_config.h"
#include "ob_error.h"
#include "ob_log.h"
#include "ob_ps.h"
#include "ob_timing.h"

#define OB_PS_SUFFIX ".async"

static int ob_ps_suffixed(const char *path, char *out, size_t size, const char *variable)
{
    int n = snprintf(out, size, "%s" OB_PS_SUFFIX, path);

    if (n < 0 || (size_t) n >= size) {
        return ob_fail(OMNIBATCH_ERR_IO, "%s='%s': the asynchronous run's file (with \"%s\" appended) "
                       "would be too long a path", variable, path, OB_PS_SUFFIX);
    }
    return OMNIBATCH_SUCCESS;
}

/* The trace: opened, emptied and headed now. */
static int ob_ps_trace_open(ob_ps_report *rp, const char *trace_file)
{
    const char *header = ob_psreport_trace_header();
    int rc = ob_ps_suffixed(trace_file, rp->trace_path, sizeof rp->trace_path, "OMNIBATCH_TRACE");

    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_writer_open(&rp->trace, rp->trace_path, "OMNIBATCH_TRACE", 0, ob_now());
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_writer_start(&rp->trace);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_writer_append(&rp->trace, header, strlen(header));
    }
    rp->tracing = OMNIBATCH_SUCCESS == rc;
    return rc;
}

int ob_ps_report_open(struct omnibatch_ps *ps)
{
    ob_ps_report *rp = &ps->server->report;
    const ob_config *cfg = NULL;
    int rc;

    ob_writer_init(&rp->trace);
    rp->report_fd = -1;
    /* A bad setting stopped create already (omnibatch_ps_options_init()); here cfg is valid. */
    if (OMNIBATCH_SUCCESS != ob_config_global(&cfg) || NULL == cfg) {
        return OMNIBATCH_SUCCESS;
    }
    rp->format = cfg->report;
    if (OB_REPORT_OFF != cfg->report && '\0' != cfg->report_file[0]) {
        rc = ob_ps_suffixed(cfg->report_file, rp->report_path, sizeof rp->report_path,
                            "OMNIBATCH_REPORT_FILE");
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
        rp->report_fd = ob_writer_open_fd(rp->report_path, "OMNIBATCH_REPORT_FILE", &rp->report_created);
        if (rp->report_fd < 0) {
            return OMNIBATCH_ERR_IO;
        }
        /* A longer report of an earlier run must not show past the end of this one's. */
        rc = ob_writer_truncate_fd(rp->report_fd, rp->report_path);
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
    }
    return '\0' != cfg->trace_file[0] ? ob_ps_trace_open(rp, cfg->trace_file) : OMNIBATCH_SUCCESS;
}

void ob_ps_report_push(struct omnibatch_ps *ps, int w, long tau, int applied, double scale)
{
    ob_ps_server *sv = ps->server;
    ob_ps_report *rp = &sv->report;
    const ob_ps_push_msg *m = &sv->peers[w].push;
    ob_psreport_push p;
    char row[256];
    size_t n;
    double now;

    if (!rp->tracing) {
        return;
    }
    now = ob_now();
    p.push = sv->pushes - 1;
    p.t_s = now - (double) sv->start_ns * 1e-9;
    p.worker = w;
    p.rank = ps->servers + w;
    p.batch = (long) m->count;
    p.staleness = tau;
    p.applied = applied;
    p.scale = scale;
    p.version = sv->version;
    p.compute_s = m->compute_s;
    p.wait_s = m->wait_s;
    n = ob_psreport_trace_row(row, sizeof row, &p);
    if (OMNIBATCH_SUCCESS != ob_writer_append(&rp->trace, row, n) ||
        OMNIBATCH_SUCCESS != ob_writer_flush_due(&rp->trace, now)) {
        ob_log_warn("the asynchronous run's trace: %s; no more rows", ob_last_error());
        rp->tracing = 0;
    }
}

/* Server 0's figures, as omnibatch_ps_get_worker_stats() gives them. */
static int ob_ps_report_fill(const struct omnibatch_ps *ps, ob_psreport *r, ob_psreport_worker *rows)
{
    static const char *const rules[] = { "constant", "inverse", "adaptive" };
    const ob_ps_server *sv = ps->server;

    for (int w = 0; w < ps->workers; w++) {
        omnibatch_ps_worker_stats s;

        ob_ps_worker_stats_of(ps, w, &s);
        rows[w].rank = s.rank;
        rows[w].pushes = s.pushes;
        rows[w].applied = s.applied;
        rows[w].dropped = s.dropped;
        rows[w].samples = s.samples;
        rows[w].batch = s.batch;
        rows[w].staleness_mean = s.staleness_mean;
        rows[w].staleness_p99 = s.staleness_p99;
        rows[w].staleness_max = s.staleness_max;
        rows[w].samples_per_s = s.samples_per_s;
        rows[w].compute_s = s.compute_s;
    }
    memset(r, 0, sizeof *r);
    r->servers = ps->servers;
    r->workers = ps->workers;
    r->elapsed_s = (double) (ob_now_ns() - sv->start_ns) * 1e-9;
    r->pushes = sv->pushes;
    r->applied = sv->applied;
    r->dropped = sv->dropped;
    r->max_staleness = sv->rule.max_staleness;
    r->staleness_rule = rules[sv->rule.staleness];
    r->adaptive = ps->opt.adaptive;
    r->decisions = sv->balance.decisions;
    r->changes = sv->balance.changes;
    r->busy_fraction = r->elapsed_s > 0.0 ? (double) sv->busy_ns * 1e-9 / r->elapsed_s : 0.0;
    r->worker = rows;
    r->batch = sv->balance.B;
    r->total = sv->balance.total;
    r->max_total = ps->opt.max_global_batch;
    if (ps->opt.adaptive) {
        ob_balance_limit lim;

        if (ob_balance_bound(&sv->balance, &lim)) {
            r->bound = 1;
            r->bound_worker = lim.worker;
            r->bound_batch = lim.batch;
            r->bound_cycle_s = lim.cycle_s;
            r->bound_level_s = lim.level_s;
            r->bound_need = lim.need;
        }
    }
    return OMNIBATCH_SUCCESS;
}

static void ob_ps_report_write(struct omnibatch_ps *ps)
{
    ob_ps_report *rp = &ps->server->report;
    ob_psreport_worker *rows = calloc((size_t) ps->workers, sizeof *rows);
    ob_psreport r;
    FILE *f = stderr;
    int rc;

    if (NULL == rows) {
        ob_log_warn("no memory for the asynchronous run's report; none written");
        return;
    }
    ob_ps_report_fill(ps, &r, rows);
    if (rp->report_fd >= 0) {
        f = fdopen(rp->report_fd, "w");
        if (NULL == f) {
            ob_log_warn("cannot write the asynchronous run's report to %s: %s; writing it to stderr",
                        rp->report_path, strerror(errno));
            close(rp->report_fd);
            f = stderr;
        }
        rp->report_fd = -1;
    }
    rc = OB_REPORT_JSON == rp->format ? ob_psreport_write_json(f, &r) : ob_psreport_write_text(f, &r);
    if (stderr != f && 0 != fclose(f) && OMNIBATCH_SUCCESS == rc) {
        rc = ob_fail(OMNIBATCH_ERR_IO, "%s", strerror(errno));
    }
    if (OMNIBATCH_SUCCESS != rc) {
        ob_log_warn("cannot write the asynchronous run's report: %s", ob_last_error());
    }
    free(rows);
}

void ob_ps_report_end(struct omnibatch_ps *ps)
{
    ob_ps_report *rp = &ps->server->report;

    if (OB_REPORT_OFF != rp->format) {
        ob_ps_report_write(ps);
    }
    if (OMNIBATCH_SUCCESS != ob_writer_close(&rp->trace, ob_now())) {
        ob_log_warn("the asynchronous run's trace: %s", ob_last_error());
    }
    rp->tracing = 0;
}

void ob_ps_report_free(struct omnibatch_ps *ps)
{
    ob_ps_report *rp = &ps->server->report;

    /* A run that never ended (create failed, or MPI was finalized first): its files go. */
    if (rp->report_fd >= 0) {
        close(rp->report_fd);
        rp->report_fd = -1;
        ob_writer_forget(rp->report_path, &rp->report_created);
    }
    ob_writer_abandon(&rp->trace);
}
