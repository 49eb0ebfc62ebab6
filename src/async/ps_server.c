/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The servers of the asynchronous mode (ob_ps.h).  Server 0 takes the
 * pushes in the order they arrive: it measures each one's staleness,
 * decides (apply with the rule's factor, or drop past the bound), counts
 * it, learns the worker's cycle, picks the worker's next slice, orders the
 * other servers to do the same with their ranges, applies its own range
 * and answers the worker with the task and its range of the model.  The
 * other servers follow the orders in turn.  A push is never waited for by
 * another: each server keeps one receive posted per worker, and an answer
 * goes out without waiting for the worker to take it (a copy of the range
 * is sent, so the model moves on meanwhile).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_ps.h"
#include "ob_timing.h"

static int ob_ps_server_alloc(struct omnibatch_ps *ps, ob_ps_server *sv)
{
    const int W = ps->workers;
    const size_t bytes = (size_t) ob_ps_range(ps, ps->server_index) * ps->elem;

    sv->peers = calloc((size_t) W, sizeof *sv->peers);
    sv->push_reqs = malloc((size_t) W * sizeof *sv->push_reqs);
    sv->grad_reqs = malloc((size_t) W * sizeof *sv->grad_reqs);
    sv->sends = malloc(2 * (size_t) W * sizeof *sv->sends);
    sv->momentum = calloc(1, bytes);
    if (NULL == sv->peers || NULL == sv->push_reqs || NULL == sv->grad_reqs || NULL == sv->sends
        || NULL == sv->momentum) {
        return OMNIBATCH_ERR_NOMEM;
    }
    for (int w = 0; w < W; w++) {
        sv->push_reqs[w] = MPI_REQUEST_NULL;
        sv->grad_reqs[w] = MPI_REQUEST_NULL;
        sv->sends[2 * w] = MPI_REQUEST_NULL;
        sv->sends[2 * w + 1] = MPI_REQUEST_NULL;
        sv->peers[w].grad = malloc(bytes);
        sv->peers[w].model = malloc(bytes);
        if (NULL == sv->peers[w].grad || NULL == sv->peers[w].model) {
            return OMNIBATCH_ERR_NOMEM;
        }
    }
    sv->order_req = MPI_REQUEST_NULL;
    return OMNIBATCH_SUCCESS;
}

/* Server 0's: the counts, the slices and the batches. */
static int ob_ps_server_first(struct omnibatch_ps *ps, ob_ps_server *sv)
{
    const omnibatch_ps_options *o = &ps->opt;
    ob_balance_params bp;
    int rc;

    sv->tally = calloc((size_t) ps->workers, sizeof *sv->tally);
    sv->flight = calloc((size_t) ps->workers, sizeof *sv->flight);
    if (NULL == sv->tally || NULL == sv->flight) {
        return OMNIBATCH_ERR_NOMEM;
    }
    for (int w = 0; w < ps->workers; w++) {
        ob_tally_init(&sv->tally[w]);
    }
    rc = ob_slicer_init(&sv->slicer, ps->dataset_size, o->epochs, o->max_pushes);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    bp.gain = o->gain;
    bp.deadband = o->deadband;
    bp.granularity = o->granularity;
    bp.forget = o->forget;
    bp.period = o->period;
    bp.warmup = o->warmup;
    bp.adaptive = o->adaptive;
    bp.max_total = o->max_global_batch;
    return ob_balance_init(&sv->balance, ps->workers, ps->global_batch, ps->lo, ps->hi, &bp);
}

int ob_ps_server_init(struct omnibatch_ps *ps)
{
    ob_ps_server *sv = calloc(1, sizeof *sv);
    int rc;

    if (NULL == sv) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_ps_create: no memory for a server");
    }
    ps->server = sv;
    sv->rule = ps->rule;
    ob_writer_init(&sv->report.trace);
    sv->report.report_fd = -1;
    rc = ob_ps_server_alloc(ps, sv);
    if (OMNIBATCH_SUCCESS == rc && 0 == ps->server_index) {
        rc = ob_ps_server_first(ps, sv);
    }
    if (OMNIBATCH_ERR_NOMEM == rc) {
        return ob_fail(rc, "omnibatch_ps_create: no memory for server %d's %ld elements for %d "
                       "workers", ps->server_index, ob_ps_range(ps, ps->server_index), ps->workers);
    }
    return OMNIBATCH_SUCCESS == rc && 0 == ps->server_index ? ob_ps_report_open(ps) : rc;
}

void ob_ps_server_free(struct omnibatch_ps *ps)
{
    ob_ps_server *sv = ps->server;

    for (int w = 0; NULL != sv->peers && w < ps->workers; w++) {
        free(sv->peers[w].grad);
        free(sv->peers[w].model);
    }
    free(sv->peers);
    free(sv->push_reqs);
    free(sv->grad_reqs);
    free(sv->sends);
    free(sv->momentum);
    free(sv->tally);
    free(sv->flight);
    if (0 == ps->server_index) {
        ob_ps_report_free(ps);
        ob_slicer_free(&sv->slicer);
        ob_balance_free(&sv->balance);
    }
    free(sv);
    ps->server = NULL;
}

static int ob_ps_worker_rank(const struct omnibatch_ps *ps, int w)
{
    return ps->servers + w;
}

/* This server's range of the model, and of its gradients. */
static void *ob_ps_own(const struct omnibatch_ps *ps)
{
    return ob_ps_at(ps, ps->params, ps->first[ps->server_index]);
}

static void ob_ps_apply(struct omnibatch_ps *ps, const void *grad, double scale)
{
    ob_ps_server *sv = ps->server;
    const size_t n = (size_t) ob_ps_range(ps, ps->server_index);

    if (MPI_FLOAT == ps->type) {
        ob_update_apply_float(&sv->rule, scale, ob_ps_own(ps), sv->momentum, grad, n);
    } else {
        ob_update_apply_double(&sv->rule, scale, ob_ps_own(ps), sv->momentum, grad, n);
    }
    sv->version++;
    sv->applied++;
}

/* Post the receives of worker w's next push: server 0 its header, every server its range. */
static int ob_ps_post(struct omnibatch_ps *ps, int w)
{
    ob_ps_server *sv = ps->server;
    const int from = ob_ps_worker_rank(ps, w);
    int mpi_rc = MPI_SUCCESS;

    if (0 == ps->server_index) {
        mpi_rc = PMPI_Irecv(&sv->peers[w].push, (int) sizeof sv->peers[w].push, MPI_BYTE, from,
                            OB_PS_TAG_PUSH, ps->comm, &sv->push_reqs[w]);
    }
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = PMPI_Irecv(sv->peers[w].grad, (int) ob_ps_range(ps, ps->server_index), ps->type,
                            from, OB_PS_TAG_GRAD, ps->comm, &sv->grad_reqs[w]);
    }
    return mpi_rc;
}

static void ob_ps_finished(ob_ps_server *sv, int w)
{
    if (!sv->peers[w].finished) {
        sv->peers[w].finished = 1;
        sv->finished_workers++;
    }
}

/* Send worker w this server's range of the model as it is now (and, server 0, its task);
 * unless \p done, post the receives of its next push. */
static int ob_ps_answer(struct omnibatch_ps *ps, int w, int done)
{
    ob_ps_server *sv = ps->server;
    ob_ps_peer *p = &sv->peers[w];
    const int to = ob_ps_worker_rank(ps, w);
    const long n = ob_ps_range(ps, ps->server_index);
    int mpi_rc;

    /* The last answer was taken before this push was sent: complete it. */
    mpi_rc = ob_ps_complete(2, &sv->sends[2 * w]);
    if (MPI_SUCCESS == mpi_rc && 0 == ps->server_index) {
        p->task.version = sv->version;
        mpi_rc = PMPI_Isend(&p->task, (int) sizeof p->task, MPI_BYTE, to, OB_PS_TAG_TASK, ps->comm,
                            &sv->sends[2 * w]);
    }
    if (MPI_SUCCESS == mpi_rc) {
        memcpy(p->model, ob_ps_own(ps), (size_t) n * ps->elem);
        mpi_rc = PMPI_Isend(p->model, (int) n, ps->type, to, OB_PS_TAG_MODEL, ps->comm,
                            &sv->sends[2 * w + 1]);
    }
    if (done) {
        ob_ps_finished(sv, w);
    } else if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = ob_ps_post(ps, w);
    }
    return mpi_rc;
}

/* Server 0: worker w's next task (a slice of its batch, or done) into its peer's task. */
static int ob_ps_next_task(struct omnibatch_ps *ps, int w)
{
    ob_ps_server *sv = ps->server;
    ob_ps_task_msg *t = &sv->peers[w].task;
    ob_slice x;

    memset(t, 0, sizeof *t);
    if (sv->draining || !ob_slicer_next(&sv->slicer, ob_balance_batch(&sv->balance, w), &x)) {
        t->done = 1;
        sv->flight[w].count = 0;
        return 1;
    }
    t->epoch = x.epoch;
    t->start = x.start;
    t->count = x.count;
    sv->flight[w] = x;
    return 0;
}

/* Server 0 to every other server: do this with the next push. */
static int ob_ps_order(struct omnibatch_ps *ps, int kind, int w, double scale, int done)
{
    ob_ps_order_msg o;

    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.worker = w;
    o.done = done;
    o.scale = scale;
    for (int s = 1; s < ps->servers; s++) {
        /* A few bytes: sent eagerly, the call returns at once. */
        int mpi_rc = PMPI_Send(&o, (int) sizeof o, MPI_BYTE, s, OB_PS_TAG_ORDER, ps->comm);

        if (MPI_SUCCESS != mpi_rc) {
            return mpi_rc;
        }
    }
    return MPI_SUCCESS;
}

/* Every worker is done: the other servers are told, the last answers go out. */
static int ob_ps_end(struct omnibatch_ps *ps)
{
    ob_ps_server *sv = ps->server;
    int mpi_rc = MPI_SUCCESS;

    if (0 == ps->server_index) {
        mpi_rc = ob_ps_order(ps, OB_PS_ORDER_END, -1, 0.0, 1);
        ob_ps_report_end(ps);
    }
    for (int w = 0; w < ps->workers; w++) {
        ob_ps_cancel(&sv->push_reqs[w]);
        ob_ps_cancel(&sv->grad_reqs[w]);
    }
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = ob_ps_complete(2 * ps->workers, sv->sends);
    }
    sv->ended = 1;
    return mpi_rc;
}

/* The first serve: every worker gets this server's range (and from server 0 its first task). */
static int ob_ps_start(struct omnibatch_ps *ps)
{
    ob_ps_server *sv = ps->server;
    int mpi_rc = MPI_SUCCESS;

    sv->started = 1;
    sv->start_ns = ob_now_ns();
    if (0 != ps->server_index) {
        mpi_rc = PMPI_Irecv(&sv->order, (int) sizeof sv->order, MPI_BYTE, 0, OB_PS_TAG_ORDER,
                            ps->comm, &sv->order_req);
    }
    for (int w = 0; MPI_SUCCESS == mpi_rc && w < ps->workers; w++) {
        /* A worker with no first task is done; the other servers post its receive all the
         * same, and cancel it at the end. */
        int done = 0 == ps->server_index && ob_ps_next_task(ps, w);

        mpi_rc = ob_ps_answer(ps, w, done);
    }
    if (MPI_SUCCESS == mpi_rc && 0 == ps->server_index && sv->finished_workers == ps->workers) {
        mpi_rc = ob_ps_end(ps);
    }
    return mpi_rc;
}

/* Server 0: one push of worker w, whose header is in. */
static int ob_ps_take_push(struct omnibatch_ps *ps, int w)
{
    ob_ps_server *sv = ps->server;
    const ob_ps_push_msg *m = &sv->peers[w].push;
    long tau = sv->version - (long) m->read_version;
    int applied = !ob_update_drops(&sv->rule, tau);
    double scale = applied ? ob_update_scale(&sv->rule, (long) m->count, tau) : 0.0;
    int done;
    int mpi_rc = ob_ps_wait_all(1, &sv->grad_reqs[w], 0, 1);

    if (MPI_SUCCESS != mpi_rc) {
        return mpi_rc;
    }
    sv->pushes++;
    sv->dropped += !applied;
    ob_tally_add(&sv->tally[w], tau, applied, (long) m->count, m->compute_s);
    ob_balance_observe(&sv->balance, w, (long) m->count, m->cycle_s);
    done = ob_ps_next_task(ps, w);
    mpi_rc = ob_ps_order(ps, OB_PS_ORDER_APPLY, w, scale, done);
    if (applied) {
        ob_ps_apply(ps, sv->peers[w].grad, scale);
    }
    ob_ps_report_push(ps, w, tau, applied, scale);
    return MPI_SUCCESS == mpi_rc ? ob_ps_answer(ps, w, done) : mpi_rc;
}

/* Server 0: what worker w sent (a push, or its leaving). */
static int ob_ps_take(struct omnibatch_ps *ps, int w)
{
    ob_ps_server *sv = ps->server;
    int mpi_rc;

    if (OB_PS_MSG_LEAVE == sv->peers[w].push.kind) {
        ob_ps_cancel(&sv->grad_reqs[w]);
        ob_ps_finished(sv, w);
        sv->flight[w].count = 0;
        mpi_rc = ob_ps_order(ps, OB_PS_ORDER_LEAVE, w, 0.0, 1);
    } else {
        mpi_rc = ob_ps_take_push(ps, w);
    }
    if (MPI_SUCCESS == mpi_rc && sv->finished_workers == ps->workers) {
        mpi_rc = ob_ps_end(ps);
    }
    return mpi_rc;
}

/* Servers s > 0: server 0 saved, and so does this one now (the path follows the order).  A
 * failed save is kept for omnibatch_ps_serve() to return; the serving goes on. */
static int ob_ps_follow_save(struct omnibatch_ps *ps)
{
    char path[4096];
    int mpi_rc = PMPI_Recv(path, (int) sizeof path, MPI_CHAR, 0, OB_PS_TAG_PATH, ps->comm, MPI_STATUS_IGNORE);

    if (MPI_SUCCESS == mpi_rc) {
        path[sizeof path - 1] = '\0';
        ps->server->save_rc = ob_ps_save_own(ps, "omnibatch_ps_serve (a save server 0 ordered)", path);
    }
    return mpi_rc;
}

/* Servers s > 0: server 0's next order. */
static int ob_ps_follow(struct omnibatch_ps *ps)
{
    ob_ps_server *sv = ps->server;
    const ob_ps_order_msg o = sv->order;
    const int w = (int) o.worker;
    int mpi_rc = MPI_SUCCESS;

    if (OB_PS_ORDER_END == o.kind) {
        return ob_ps_end(ps);
    }
    if (OB_PS_ORDER_SAVE == o.kind) {
        mpi_rc = ob_ps_follow_save(ps);
    } else if (OB_PS_ORDER_LEAVE == o.kind) {
        ob_ps_cancel(&sv->grad_reqs[w]);
        ob_ps_finished(sv, w);
    } else {
        /* The worker sent its ranges as it pushed: they are in, or arriving. */
        mpi_rc = ob_ps_wait_all(1, &sv->grad_reqs[w], 0, 1);
        if (MPI_SUCCESS == mpi_rc && o.scale > 0.0) {
            ob_ps_apply(ps, sv->peers[w].grad, o.scale);
        }
        sv->pushes++;
        sv->dropped += !(o.scale > 0.0);
        if (MPI_SUCCESS == mpi_rc) {
            mpi_rc = ob_ps_answer(ps, w, (int) o.done);
        }
    }
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = PMPI_Irecv(&sv->order, (int) sizeof sv->order, MPI_BYTE, 0, OB_PS_TAG_ORDER,
                            ps->comm, &sv->order_req);
    }
    return mpi_rc;
}

/* Wait for the next push (server 0) or order (the others) and handle it. */
static int ob_ps_serve_one(struct omnibatch_ps *ps)
{
    ob_ps_server *sv = ps->server;
    const int first = 0 == ps->server_index;
    int index = MPI_UNDEFINED;
    uint64_t t0;
    int mpi_rc;

    mpi_rc = first ? ob_ps_wait_any(ps->workers, sv->push_reqs, &index, sv->sends, 2 * ps->workers)
                   : ob_ps_wait_any(1, &sv->order_req, &index, sv->sends, 2 * ps->workers);
    if (MPI_SUCCESS != mpi_rc) {
        return mpi_rc;
    }
    t0 = ob_now_ns();
    if (MPI_UNDEFINED == index) {
        /* Nothing posted: no worker left to wait for. */
        mpi_rc = ob_ps_end(ps);
    } else {
        mpi_rc = first ? ob_ps_take(ps, index) : ob_ps_follow(ps);
    }
    sv->busy_ns += ob_now_ns() - t0;
    return mpi_rc;
}

int ob_ps_server_serve(struct omnibatch_ps *ps, long max_pushes, int *done)
{
    ob_ps_server *sv = ps->server;
    int mpi_rc = MPI_SUCCESS;

    if (!sv->started) {
        mpi_rc = ob_ps_start(ps);
    }
    for (long k = 0; MPI_SUCCESS == mpi_rc && !sv->ended && (0 == max_pushes || k < max_pushes); k++) {
        mpi_rc = ob_ps_serve_one(ps);
    }
    *done = sv->ended;
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, "omnibatch_ps_serve", "a server's message");
    }
    mpi_rc = sv->save_rc;
    sv->save_rc = OMNIBATCH_SUCCESS;
    return mpi_rc;
}

int ob_ps_server_drain(struct omnibatch_ps *ps)
{
    int done = 0;

    ps->server->draining = 1;
    return ob_ps_server_serve(ps, 0, &done);
}
