/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The workers of the asynchronous mode (ob_ps.h): a push sends the header to
 * server 0 and each server its range of the gradient, and takes the answer:
 * the next task from server 0 and each server's range of the model, written
 * straight into the caller's model.  The worker waits for nothing else.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_config.h"
#include "ob_cpuquota.h"
#include "ob_error.h"
#include "ob_ps.h"
#include "ob_timing.h"

int ob_ps_worker_init(struct omnibatch_ps *ps)
{
    const int n = 2 * (ps->servers + 1);
    const ob_config *cfg = NULL;
    ob_ps_worker *wk = calloc(1, sizeof *wk);

    if (NULL == wk) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_ps_create: no memory for a worker");
    }
    ps->worker = wk;
    wk->reqs = malloc((size_t) n * sizeof *wk->reqs);
    if (NULL == wk->reqs) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_ps_create: no memory for a worker's %d "
                       "requests", n);
    }
    for (int i = 0; i < n; i++) {
        wk->reqs[i] = MPI_REQUEST_NULL;
    }
    wk->plan_quota = 1;
    /* On a bad setting cfg holds the defaults (create has said so). */
    if (OMNIBATCH_SUCCESS == ob_config_global(&cfg) && NULL != cfg) {
        wk->plan_quota = cfg->cpu_quota;
    }
    wk->quota = wk->plan_quota ? ob_cpu_quota("/proc/self/cgroup", "/sys/fs/cgroup") : 0.0;
    wk->quota_read_ns = ob_now_ns();
    return OMNIBATCH_SUCCESS;
}

/* Mark the start of a cycle at \p now: the process's CPU, where a quota makes it matter
 * (read again every OB_API_QUOTA_REREAD_NS). */
static void ob_ps_cycle_mark(ob_ps_worker *wk, uint64_t now)
{
    if (wk->plan_quota && now - wk->quota_read_ns >= OB_API_QUOTA_REREAD_NS) {
        wk->quota = ob_cpu_quota("/proc/self/cgroup", "/sys/fs/cgroup");
        wk->quota_read_ns = now;
    }
    wk->cpu_ns = wk->quota > 0.0 ? ob_cpu_ns() : 0;
}

/* The cycle that ends at a push: the wall since the last push (or pull), or under a CPU
 * quota the wall its CPU takes there (ob_quota_cycle_learn()); the next begins. */
static double ob_ps_cycle(ob_ps_worker *wk, double wall, uint64_t now)
{
    const uint64_t began = wk->cpu_ns;
    double cpu = -1.0;

    ob_ps_cycle_mark(wk, now);
    if (0 != began && 0 != wk->cpu_ns) {
        cpu = (double) (wk->cpu_ns - began) * 1e-9;
    }
    return ob_quota_cycle_learn(&wk->cycles, wk->quota, wall, cpu);
}

void ob_ps_worker_free(struct omnibatch_ps *ps)
{
    free(ps->worker->reqs);
    free(ps->worker);
    ps->worker = NULL;
}

/* Post the receives of an answer into reqs[0 .. servers]: the task from server 0, each
 * server's range of the model into the caller's model. */
static int ob_ps_expect(struct omnibatch_ps *ps, MPI_Request *reqs)
{
    ob_ps_worker *wk = ps->worker;
    int mpi_rc = PMPI_Irecv(&wk->task_msg, (int) sizeof wk->task_msg, MPI_BYTE, 0, OB_PS_TAG_TASK,
                            ps->comm, &reqs[0]);

    for (int s = 0; MPI_SUCCESS == mpi_rc && s < ps->servers; s++) {
        mpi_rc = PMPI_Irecv(ob_ps_at(ps, ps->params, ps->first[s]), (int) ob_ps_range(ps, s),
                            ps->type, s, OB_PS_TAG_MODEL, ps->comm, &reqs[1 + s]);
    }
    return mpi_rc;
}

/* The answer is in (asked at \p t0): the task, and the time it took. */
static void ob_ps_took(struct omnibatch_ps *ps, uint64_t t0, omnibatch_ps_task *task)
{
    ob_ps_worker *wk = ps->worker;
    const ob_ps_task_msg *m = &wk->task_msg;
    uint64_t now = ob_now_ns();

    wk->last_wait_s = (double) (now - t0) * 1e-9;
    wk->wait_s += wk->last_wait_s;
    wk->got_ns = now;
    wk->version = (long) m->version;
    wk->done = 0 != m->done;
    wk->task.epoch = (long) m->epoch;
    wk->task.start = (long) m->start;
    wk->task.count = (long) m->count;
    wk->task.version = (long) m->version;
    wk->task.done = wk->done;
    *task = wk->task;
}

int ob_ps_worker_pull(struct omnibatch_ps *ps, omnibatch_ps_task *task)
{
    ob_ps_worker *wk = ps->worker;
    uint64_t t0 = ob_now_ns();
    int mpi_rc = ob_ps_expect(ps, wk->reqs);

    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = ob_ps_wait_all(ps->servers + 1, wk->reqs, 0, 0);
    }
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, "omnibatch_ps_pull", "the first task's receive");
    }
    wk->pulled = 1;
    wk->start_ns = t0;
    ob_ps_cycle_mark(wk, t0);
    ob_ps_took(ps, t0, task);
    return OMNIBATCH_SUCCESS;
}

int ob_ps_worker_push(struct omnibatch_ps *ps, const void *grad, omnibatch_ps_task *task)
{
    ob_ps_worker *wk = ps->worker;
    const int S = ps->servers;
    uint64_t t0 = ob_now_ns();
    int mpi_rc;

    memset(&wk->push, 0, sizeof wk->push);
    wk->push.kind = OB_PS_MSG_PUSH;
    wk->push.read_version = wk->version;
    wk->push.count = wk->task.count;
    wk->push.compute_s = (double) (t0 - wk->got_ns) * 1e-9;
    wk->push.wait_s = wk->last_wait_s;
    wk->push.cycle_s = ob_ps_cycle(wk, wk->push.compute_s + wk->push.wait_s, t0);
    wk->compute_s += wk->push.compute_s;
    /* The answer's receives first (reqs[S + 1 ..]): it cannot come before the push. */
    mpi_rc = ob_ps_expect(ps, wk->reqs + S + 1);
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = PMPI_Isend(&wk->push, (int) sizeof wk->push, MPI_BYTE, 0, OB_PS_TAG_PUSH, ps->comm,
                            &wk->reqs[0]);
    }
    for (int s = 0; MPI_SUCCESS == mpi_rc && s < S; s++) {
        mpi_rc = PMPI_Isend(ob_ps_at(ps, grad, ps->first[s]), (int) ob_ps_range(ps, s), ps->type, s,
                            OB_PS_TAG_GRAD, ps->comm, &wk->reqs[1 + s]);
    }
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = ob_ps_wait_all(2 * (S + 1), wk->reqs, S + 1, 0);
    }
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, "omnibatch_ps_push", "a push");
    }
    wk->pushes++;
    ob_ps_took(ps, t0, task);
    return OMNIBATCH_SUCCESS;
}

int ob_ps_worker_leave(struct omnibatch_ps *ps)
{
    ob_ps_worker *wk = ps->worker;
    omnibatch_ps_task task;
    int mpi_rc;

    /* The first answer is on its way to every worker: taken, so that no send of the
     * servers' is left waiting. */
    if (!wk->pulled) {
        int rc = ob_ps_worker_pull(ps, &task);

        if (OMNIBATCH_SUCCESS != rc || wk->done) {
            return rc;
        }
    }
    memset(&wk->push, 0, sizeof wk->push);
    wk->push.kind = OB_PS_MSG_LEAVE;
    mpi_rc = PMPI_Send(&wk->push, (int) sizeof wk->push, MPI_BYTE, 0, OB_PS_TAG_PUSH, ps->comm);
    wk->done = 1;
    return MPI_SUCCESS == mpi_rc ? OMNIBATCH_SUCCESS
                                 : ob_api_mpi_fail(mpi_rc, "omnibatch_ps_destroy", "MPI_Send");
}
