/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What every MPI file of the asynchronous mode asks of a context (ob_ps.h):
 * the check each function starts with, the servers' ranges, and server 0's
 * figures of a worker.  A leaf: ps_context.c, ps_server.c, ps_worker.c and
 * ps_report.c call it, it calls none of them.
 */
#include "config.h"

#include <string.h>

#include "ob_error.h"
#include "ob_ps.h"
#include "ob_timing.h"

static const char *const ob_ps_creator = "omnibatch_ps_create";

int ob_ps_check(const char *fn, const struct omnibatch_ps *ps, int role)
{
    int rc = ob_api_check_live(fn, ob_ps_creator, ps, NULL == ps ? NULL : &ps->live);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (OMNIBATCH_PS_SERVER == role && ps->server_index < 0) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: rank %d is worker %d: only the servers (ranks "
                       "0..%d) call it", fn, ps->rank, ps->worker_index, ps->servers - 1);
    }
    if (OMNIBATCH_PS_WORKER == role && ps->worker_index < 0) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: rank %d is server %d: only the workers (ranks "
                       "%d..%d) call it", fn, ps->rank, ps->server_index, ps->servers,
                       ps->nranks - 1);
    }
    return OMNIBATCH_SUCCESS;
}

long ob_ps_range(const struct omnibatch_ps *ps, int s)
{
    return ps->first[s + 1] - ps->first[s];
}

void *ob_ps_at(const struct omnibatch_ps *ps, const void *base, long i)
{
    return (char *) base + (size_t) i * ps->elem;
}

void ob_ps_worker_stats_of(const struct omnibatch_ps *ps, int w, omnibatch_ps_worker_stats *out)
{
    const ob_ps_server *sv = ps->server;
    const ob_tally *t = &sv->tally[w];
    double elapsed = sv->started ? (double) (ob_now_ns() - sv->start_ns) * 1e-9 : 0.0;

    memset(out, 0, sizeof *out);
    out->rank = ps->servers + w;
    out->pushes = t->pushes;
    out->applied = t->applied;
    out->dropped = t->dropped;
    out->samples = t->samples;
    out->batch = ob_balance_batch(&sv->balance, w);
    out->staleness_mean = ob_tally_mean(t);
    out->staleness_p99 = ob_tally_quantile(t, 0.99);
    out->staleness_max = t->stale_max;
    out->pushes_per_s = elapsed > 0.0 ? (double) t->pushes / elapsed : 0.0;
    out->samples_per_s = elapsed > 0.0 ? (double) t->samples / elapsed : 0.0;
    out->compute_s = t->compute_s;
    ob_balance_model(&sv->balance, w, &out->alpha, &out->beta);
}
