/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The asynchronous mode, part one: options, the lifecycle of a
 * parameter-server context and its queries (omnibatch_ps_* in omnibatch.h).
 * The servers' loop is in ps_server.c, the workers' pull and push in
 * ps_worker.c.
 *
 * omnibatch_ps_create() decides its outcome together, as omnibatch_create()
 * does: a rank whose arguments are bad still takes part in the agreement,
 * and a setting that differs between ranks (the parameter count among them)
 * is found from one gathered record per rank, so every rank fails with the
 * same code before any push instead of some of them waiting forever.
 */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_config.h"
#include "ob_error.h"
#include "ob_ps.h"
#include "ob_shard.h"
#include "ob_timing.h"

OMNIBATCH_EXPORT int omnibatch_ps_options_init(omnibatch_ps_options *opt)
{
    const ob_config *cfg = NULL;
    int rc;

    if (NULL == opt) {
        return ob_fail(OMNIBATCH_ERR_ARG, "omnibatch_ps_options_init: opt=NULL: expected the address "
                       "of an omnibatch_ps_options");
    }
    /* On a bad setting cfg holds the defaults and the detail line is set. */
    rc = ob_config_global(&cfg);
    memset(opt, 0, sizeof *opt);
    opt->servers = 1;
    opt->lr = 0.01;
    opt->staleness = OMNIBATCH_PS_STALE_ADAPTIVE;
    opt->max_staleness = OMNIBATCH_PS_AUTO;
    opt->adaptive = cfg->enable ? 1 : 0;
    /* A worker always computes something: it has no collective to join with nothing. */
    opt->min_batch = cfg->min_batch > 0 ? cfg->min_batch : 1;
    opt->max_batch = cfg->max_batch;
    opt->granularity = cfg->granularity;
    opt->gain = cfg->gain;
    opt->deadband = cfg->deadband;
    opt->forget = cfg->forget;
    opt->warmup = 1;
    opt->epochs = 1;
    opt->seed = OMNIBATCH_DEFAULT_SEED;
    return rc;
}

/* What each rank brings to create: plain fixed-size data (MPI_BYTE). */
typedef struct ob_ps_record {
    int64_t count;
    int32_t type;                /* 0 float, 1 double, -1 neither */
    int32_t servers;
    int64_t global_batch;
    int64_t dataset_size;
    double lr;
    double momentum;
    double weight_decay;
    int64_t ref_batch;
    int32_t staleness;
    int32_t adaptive;
    int64_t max_staleness;
    int64_t granularity;
    double gain;
    double deadband;
    double forget;
    int64_t period;
    int64_t warmup;
    int64_t epochs;
    int64_t max_pushes;
    uint64_t seed;
    int64_t max_global_batch;
    int64_t lo;                  /* this rank's bounds (a worker's own) */
    int64_t hi;
} ob_ps_record;

#define OB_PS_ROW(field, kind) { #field, offsetof(ob_ps_record, field), kind }
static const ob_agree_field ob_ps_agree_fields[] = {
    OB_PS_ROW(count, OB_AGREE_I64),         OB_PS_ROW(type, OB_AGREE_I32),
    OB_PS_ROW(servers, OB_AGREE_I32),       OB_PS_ROW(global_batch, OB_AGREE_I64),
    OB_PS_ROW(dataset_size, OB_AGREE_I64),  OB_PS_ROW(lr, OB_AGREE_F64),
    OB_PS_ROW(momentum, OB_AGREE_F64),      OB_PS_ROW(weight_decay, OB_AGREE_F64),
    OB_PS_ROW(ref_batch, OB_AGREE_I64),     OB_PS_ROW(staleness, OB_AGREE_I32),
    OB_PS_ROW(adaptive, OB_AGREE_I32),      OB_PS_ROW(max_staleness, OB_AGREE_I64),
    OB_PS_ROW(granularity, OB_AGREE_I64),   OB_PS_ROW(gain, OB_AGREE_F64),
    OB_PS_ROW(deadband, OB_AGREE_F64),      OB_PS_ROW(forget, OB_AGREE_F64),
    OB_PS_ROW(period, OB_AGREE_I64),        OB_PS_ROW(warmup, OB_AGREE_I64),
    OB_PS_ROW(epochs, OB_AGREE_I64),        OB_PS_ROW(max_pushes, OB_AGREE_I64),
    OB_PS_ROW(seed, OB_AGREE_U64),          OB_PS_ROW(max_global_batch, OB_AGREE_I64),
};
#undef OB_PS_ROW

static const char *const ob_ps_fn = "omnibatch_ps_create";

/* The sizes, the buffer and the roles. */
static int ob_ps_check_args(const struct omnibatch_ps *ps, const void *params, long count,
                            MPI_Datatype type, long B, long N)
{
    const int servers = ps->opt.servers;

    if (ps->nranks < 2) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: the communicator has %d rank: expected at least 2 "
                       "(a server and a worker)", ob_ps_fn, ps->nranks);
    }
    if (servers < 1 || servers > ps->nranks - 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: servers=%d: expected 1..%d (at least one of the %d "
                       "ranks works)", ob_ps_fn, servers, ps->nranks - 1, ps->nranks);
    }
    if (count < servers || count > INT_MAX) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: count=%ld: expected %d..%d (an element per server at "
                       "least)", ob_ps_fn, count, servers, INT_MAX);
    }
    if (NULL == params) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: params=NULL: expected the model's %ld elements",
                       ob_ps_fn, count);
    }
    if (MPI_FLOAT != type && MPI_DOUBLE != type) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: type: expected MPI_FLOAT or MPI_DOUBLE", ob_ps_fn);
    }
    if (B < 1 || B > OB_CONFIG_BATCH_LIMIT) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: global_batch=%ld: expected 1..%ld", ob_ps_fn, B,
                       (long) OB_CONFIG_BATCH_LIMIT);
    }
    if (N < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: dataset_size=%ld: expected >= 1", ob_ps_fn, N);
    }
    return OMNIBATCH_SUCCESS;
}

/* The batch controller's options. */
static int ob_ps_check_batches(const omnibatch_ps_options *o, long B)
{
    if (o->min_batch < 1 || o->min_batch > B) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: min_batch=%ld: expected 1..global_batch (%ld)",
                       ob_ps_fn, o->min_batch, B);
    }
    if (0 != o->max_batch && o->max_batch < o->min_batch) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: max_batch=%ld: expected 0 (no limit) or >= "
                       "min_batch=%ld", ob_ps_fn, o->max_batch, o->min_batch);
    }
    if (o->granularity < 1 || o->granularity > B) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: granularity=%ld: expected 1..global_batch (%ld)",
                       ob_ps_fn, o->granularity, B);
    }
    if (!(o->gain > OB_GAIN_LO && o->gain <= OB_GAIN_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: gain=%g: expected %s", ob_ps_fn, o->gain,
                       ob_config_allowed("OMNIBATCH_GAIN"));
    }
    if (!(o->deadband >= OB_DEADBAND_LO && o->deadband <= OB_DEADBAND_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: deadband=%g: expected %s", ob_ps_fn, o->deadband,
                       ob_config_allowed("OMNIBATCH_DEADBAND"));
    }
    if (!(o->forget >= OB_FORGET_LO && o->forget <= OB_FORGET_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: forget=%g: expected %s", ob_ps_fn, o->forget,
                       ob_config_allowed("OMNIBATCH_FORGET"));
    }
    if (0 != o->adaptive && 1 != o->adaptive) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: adaptive=%d: expected 0 or 1", ob_ps_fn, o->adaptive);
    }
    if (0 != o->max_global_batch && (o->max_global_batch < B || o->max_global_batch > OB_CONFIG_BATCH_LIMIT)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: max_global_batch=%ld: expected 0 (the global batch) or "
                       "%ld..%ld", ob_ps_fn, o->max_global_batch, B, (long) OB_CONFIG_BATCH_LIMIT);
    }
    return OMNIBATCH_SUCCESS;
}

/* The budgets and counts. */
static int ob_ps_check_budget(const omnibatch_ps_options *o)
{
    if (o->period < 0 || o->period > OB_CONFIG_STEPS_LIMIT) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: period=%ld: expected 0 (the workers) or 1..%ld "
                       "pushes", ob_ps_fn, o->period, (long) OB_CONFIG_STEPS_LIMIT);
    }
    if (o->warmup < 0 || o->warmup > OB_CONFIG_STEPS_LIMIT) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: warmup=%ld: expected 0..%ld pushes", ob_ps_fn,
                       o->warmup, (long) OB_CONFIG_STEPS_LIMIT);
    }
    if (o->epochs < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: epochs=%ld: expected >= 1, or 0 for no limit",
                       ob_ps_fn, o->epochs);
    }
    if (o->max_pushes < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: max_pushes=%ld: expected >= 1, or 0 for no limit",
                       ob_ps_fn, o->max_pushes);
    }
    if (0 == o->epochs && 0 == o->max_pushes) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: epochs=0 and max_pushes=0: expected a limit to one "
                       "of them (the run must end)", ob_ps_fn);
    }
    if (o->max_staleness < OMNIBATCH_PS_AUTO) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: max_staleness=%ld: expected >= 0 updates, or "
                       "OMNIBATCH_PS_AUTO (-1)", ob_ps_fn, o->max_staleness);
    }
    return OMNIBATCH_SUCCESS;
}

/* The update rule the options give, autos resolved. */
static void ob_ps_rule_of(const struct omnibatch_ps *ps, ob_update_rule *r)
{
    const omnibatch_ps_options *o = &ps->opt;

    r->lr = o->lr;
    r->momentum = o->momentum;
    r->weight_decay = o->weight_decay;
    r->ref_batch = 0 == o->ref_batch ? ps->global_batch : o->ref_batch;
    r->staleness = (ob_update_staleness) o->staleness;
    r->concurrency = ps->workers;
    r->max_staleness = OMNIBATCH_PS_AUTO == o->max_staleness
                           ? (long) OB_PS_AUTO_STALENESS_PER_WORKER * ps->workers
                           : o->max_staleness;
}

/* Everything this rank can check alone. */
static int ob_ps_local(struct omnibatch_ps *ps, const void *params, long count, MPI_Datatype type,
                       const omnibatch_ps_options *opt, ob_ps_record *mine)
{
    long most;
    int rc;

    if (NULL == opt) {
        rc = omnibatch_ps_options_init(&ps->opt);
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
    } else {
        ps->opt = *opt;
    }
    rc = ob_ps_check_args(ps, params, count, type, ps->global_batch, ps->dataset_size);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_ps_check_batches(&ps->opt, ps->global_batch);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_ps_check_budget(&ps->opt);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    ps->servers = ps->opt.servers;
    ps->workers = ps->nranks - ps->servers;
    ob_ps_rule_of(ps, &ps->rule);
    rc = ob_update_check(&ps->rule, "omnibatch_ps_create:");
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    memset(mine, 0, sizeof *mine);
    mine->count = count;
    mine->type = MPI_FLOAT == type ? 0 : 1;
    mine->servers = ps->opt.servers;
    mine->global_batch = ps->global_batch;
    mine->dataset_size = ps->dataset_size;
    mine->lr = ps->opt.lr;
    mine->momentum = ps->opt.momentum;
    mine->weight_decay = ps->opt.weight_decay;
    mine->ref_batch = ps->opt.ref_batch;
    mine->staleness = (int32_t) ps->opt.staleness;
    mine->adaptive = ps->opt.adaptive;
    mine->max_staleness = ps->opt.max_staleness;
    mine->granularity = ps->opt.granularity;
    mine->gain = ps->opt.gain;
    mine->deadband = ps->opt.deadband;
    mine->forget = ps->opt.forget;
    mine->period = ps->opt.period;
    mine->warmup = ps->opt.warmup;
    mine->epochs = ps->opt.epochs;
    mine->max_pushes = ps->opt.max_pushes;
    mine->seed = ps->opt.seed;
    mine->max_global_batch = ps->opt.max_global_batch;
    mine->lo = ps->opt.min_batch;
    /* No worker's batch beyond the most the batches may sum to. */
    most = ps->opt.max_global_batch > ps->global_batch ? ps->opt.max_global_batch : ps->global_batch;
    mine->hi = 0 == ps->opt.max_batch || ps->opt.max_batch > most ? most : ps->opt.max_batch;
    ps->params = (void *) params;
    ps->count = count;
    ps->type = type;
    ps->elem = MPI_FLOAT == type ? sizeof(float) : sizeof(double);
    return OMNIBATCH_SUCCESS;
}

/* The servers' ranges (near-equal, in rank order) and the workers' bounds, the same on every
 * rank from the same records; then this rank's side. */
static int ob_ps_setup(struct omnibatch_ps *ps, const ob_ps_record *all)
{
    ps->first = calloc((size_t) ps->servers + 1, sizeof *ps->first);
    ps->lo = calloc((size_t) ps->workers, sizeof *ps->lo);
    ps->hi = calloc((size_t) ps->workers, sizeof *ps->hi);
    if (NULL == ps->first || NULL == ps->lo || NULL == ps->hi) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %d ranks' ranges", ob_ps_fn,
                       ps->nranks);
    }
    for (int s = 0; s <= ps->servers; s++) {
        ps->first[s] = (long) ((int64_t) ps->count * s / ps->servers);
    }
    for (int w = 0; w < ps->workers; w++) {
        ps->lo[w] = (long) all[ps->servers + w].lo;
        ps->hi[w] = (long) all[ps->servers + w].hi;
    }
    ps->server_index = ps->rank < ps->servers ? ps->rank : -1;
    ps->worker_index = ps->rank < ps->servers ? -1 : ps->rank - ps->servers;
    if (ps->opt.period < 1) {
        ps->opt.period = ps->workers;
    }
    if (OMNIBATCH_PS_AUTO == ps->opt.max_staleness) {
        ps->opt.max_staleness = (long) OB_PS_AUTO_STALENESS_PER_WORKER * ps->workers;
    }
    return ps->server_index >= 0 ? ob_ps_server_init(ps) : ob_ps_worker_init(ps);
}

static void ob_ps_free(struct omnibatch_ps *ps)
{
    if (NULL != ps->server) {
        ob_ps_server_free(ps);
    }
    if (NULL != ps->worker) {
        ob_ps_worker_free(ps);
    }
    free(ps->first);
    free(ps->lo);
    free(ps->hi);
    free(ps);
}

/* One MAXLOC allreduce: every rank learns the worst code and who has it; a
 * failing rank keeps its own line, the others get one naming it. */
static int ob_ps_agree_status(struct omnibatch_ps *ps, int local_rc)
{
    struct {
        int status;
        int rank;
    } verdict, worst;
    int mpi_rc;

    verdict.status = local_rc;
    verdict.rank = ps->rank;
    mpi_rc = PMPI_Allreduce(&verdict, &worst, 1, MPI_2INT, MPI_MAXLOC, ps->comm);
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, ob_ps_fn, "MPI_Allreduce");
    }
    if (OMNIBATCH_SUCCESS == worst.status || OMNIBATCH_SUCCESS != local_rc) {
        return OMNIBATCH_SUCCESS == worst.status ? OMNIBATCH_SUCCESS : local_rc;
    }
    return ob_fail(worst.status, "%s: rank %d failed (%s): see its message", ob_ps_fn, worst.rank,
                   omnibatch_strerror(worst.status));
}

/* From the gathered records: every rank the same verdict (settings that differ, bounds that
 * cannot hold the global batch), then this rank's side. */
static int ob_ps_gathered(struct omnibatch_ps *ps, const ob_ps_record *all)
{
    double sum_lo = 0.0, sum_hi = 0.0;
    int rc = ob_api_agree(ob_ps_fn, all, sizeof *all, ps->nranks, ob_ps_agree_fields,
                          sizeof ob_ps_agree_fields / sizeof ob_ps_agree_fields[0]);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    for (int r = ps->servers; r < ps->nranks; r++) {
        sum_lo += (double) all[r].lo;
        sum_hi += (double) all[r].hi;
    }
    if (sum_lo > (double) ps->global_batch || sum_hi < (double) ps->global_batch) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "%s: min_batch, max_batch: the %d workers take "
                       "%.0f .. %.0f samples a round but global_batch=%ld", ob_ps_fn, ps->workers,
                       sum_lo, sum_hi, ps->global_batch);
    }
    return ob_ps_setup(ps, all);
}

static int ob_ps_check_comm(MPI_Comm comm)
{
    int initialized = 0, finalized = 0, inter = 0;
    int mpi_rc;

    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: MPI is %s: call it between MPI_Init and "
                       "MPI_Finalize", ob_ps_fn, finalized ? "finalized" : "not initialised");
    }
    if (MPI_COMM_NULL == comm) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: comm=MPI_COMM_NULL: expected an intra-communicator",
                       ob_ps_fn);
    }
    mpi_rc = PMPI_Comm_test_inter(comm, &inter);
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, ob_ps_fn, "MPI_Comm_test_inter");
    }
    if (inter) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: comm is an inter-communicator: expected an "
                       "intra-communicator", ob_ps_fn);
    }
    return OMNIBATCH_SUCCESS;
}

/* The collective part of create, from the duplicate on. */
static int ob_ps_create_together(struct omnibatch_ps *ps, int local_rc, const ob_ps_record *mine)
{
    ob_ps_record *all;
    int rc = ob_ps_agree_status(ps, local_rc);
    int mpi_rc;

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    all = calloc((size_t) ps->nranks, sizeof *all);
    /* Every rank takes part in the gather whatever its allocation did. */
    mpi_rc = PMPI_Allgather(mine, (int) sizeof *mine, MPI_BYTE, NULL == all ? NULL : all,
                            (int) sizeof *mine, MPI_BYTE, ps->comm);
    if (NULL == all) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %d ranks' records", ob_ps_fn,
                     ps->nranks);
    } else if (MPI_SUCCESS != mpi_rc) {
        rc = ob_api_mpi_fail(mpi_rc, ob_ps_fn, "MPI_Allgather");
    } else {
        rc = ob_ps_gathered(ps, all);
    }
    free(all);
    return ob_ps_agree_status(ps, rc);
}

OMNIBATCH_EXPORT int omnibatch_ps_create(MPI_Comm comm, void *params, long count, MPI_Datatype type,
                                         long global_batch, long dataset_size,
                                         const omnibatch_ps_options *opt, omnibatch_ps_t *out)
{
    struct omnibatch_ps *ps;
    ob_ps_record mine;
    int local_rc;
    int rc;
    int mpi_rc;

    if (NULL == out) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: ps=NULL: expected the address of an omnibatch_ps_t",
                       ob_ps_fn);
    }
    *out = NULL;
    /* The same on every rank of a correct program: failing here, before
     * any communication, cannot leave a rank waiting. */
    rc = ob_ps_check_comm(comm);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    ps = calloc(1, sizeof *ps);
    if (NULL == ps) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for a context", ob_ps_fn);
    }
    ps->global_batch = global_batch;
    ps->dataset_size = dataset_size;
    PMPI_Comm_rank(comm, &ps->rank);
    PMPI_Comm_size(comm, &ps->nranks);
    memset(&mine, 0, sizeof mine);
    local_rc = ob_ps_local(ps, params, count, type, opt, &mine);

    mpi_rc = PMPI_Comm_dup(comm, &ps->comm);
    if (MPI_SUCCESS != mpi_rc) {
        ob_ps_free(ps);
        return ob_api_mpi_fail(mpi_rc, ob_ps_fn, "MPI_Comm_dup");
    }
    PMPI_Comm_set_errhandler(ps->comm, MPI_ERRORS_RETURN);
    rc = ob_ps_create_together(ps, local_rc, &mine);
    if (OMNIBATCH_SUCCESS != rc) {
        PMPI_Comm_free(&ps->comm);
        ob_ps_free(ps);
        return rc;
    }
    ob_api_live_add(&ps->live);
    *out = ps;
    return OMNIBATCH_SUCCESS;
}

/* Server 0's own: the slices, the batches and the counts live there. */
static int ob_ps_check_first(const char *fn, const struct omnibatch_ps *ps)
{
    int rc = ob_ps_check(fn, ps, OMNIBATCH_PS_SERVER);

    if (OMNIBATCH_SUCCESS == rc && 0 != ps->server_index) {
        rc = ob_fail(OMNIBATCH_ERR_STATE, "%s: rank %d is server %d: only server 0 (rank 0) hands "
                     "out the batches", fn, ps->rank, ps->server_index);
    }
    return rc;
}

OMNIBATCH_EXPORT int omnibatch_ps_role_of(omnibatch_ps_t ps, omnibatch_ps_role *role, int *index)
{
    const char *fn = "omnibatch_ps_role_of";
    int rc = ob_ps_check(fn, ps, -1);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == role || NULL == index) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: role or index is NULL: expected where to store them",
                       fn);
    }
    *role = ps->server_index >= 0 ? OMNIBATCH_PS_SERVER : OMNIBATCH_PS_WORKER;
    *index = ps->server_index >= 0 ? ps->server_index : ps->worker_index;
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_ps_serve(omnibatch_ps_t ps, long max_pushes, int *done)
{
    const char *fn = "omnibatch_ps_serve";
    int rc = ob_ps_check(fn, ps, OMNIBATCH_PS_SERVER);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == done) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: done=NULL: expected where to say whether every "
                       "worker is done", fn);
    }
    if (max_pushes < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: max_pushes=%ld: expected >= 1, or 0 to serve to the "
                       "end", fn, max_pushes);
    }
    if (ps->server->ended) {
        *done = 1;
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: every worker is done already: nothing to serve", fn);
    }
    return ob_ps_server_serve(ps, max_pushes, done);
}

OMNIBATCH_EXPORT int omnibatch_ps_pull(omnibatch_ps_t ps, omnibatch_ps_task *task)
{
    const char *fn = "omnibatch_ps_pull";
    int rc = ob_ps_check(fn, ps, OMNIBATCH_PS_WORKER);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == task) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: task=NULL: expected the address of an "
                       "omnibatch_ps_task", fn);
    }
    if (ps->worker->pulled) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: pulled already: the next task comes with "
                       "omnibatch_ps_push()", fn);
    }
    return ob_ps_worker_pull(ps, task);
}

OMNIBATCH_EXPORT int omnibatch_ps_push(omnibatch_ps_t ps, const void *grad, omnibatch_ps_task *task)
{
    const char *fn = "omnibatch_ps_push";
    int rc = ob_ps_check(fn, ps, OMNIBATCH_PS_WORKER);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == grad || NULL == task) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: %s=NULL: expected %s", fn, NULL == grad ? "grad" : "task",
                       NULL == grad ? "the gradient's count elements" : "the address of an "
                       "omnibatch_ps_task");
    }
    if (!ps->worker->pulled) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no task yet: call omnibatch_ps_pull() first", fn);
    }
    if (ps->worker->done) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: the last task was done: nothing to push", fn);
    }
    return ob_ps_worker_push(ps, grad, task);
}

OMNIBATCH_EXPORT int omnibatch_ps_get_plan(omnibatch_ps_t ps, long *plan, int workers)
{
    const char *fn = "omnibatch_ps_get_plan";
    int rc = ob_ps_check_first(fn, ps);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == plan || workers != ps->workers) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: plan=%p, workers=%d: expected an array of the %d "
                       "workers' batches", fn, (void *) plan, workers, ps->workers);
    }
    for (int w = 0; w < workers; w++) {
        plan[w] = ob_balance_batch(&ps->server->balance, w);
    }
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_ps_set_plan(omnibatch_ps_t ps, const long *plan, int workers)
{
    const char *fn = "omnibatch_ps_set_plan";
    int rc = ob_ps_check_first(fn, ps);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == plan || workers != ps->workers) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: plan=%p, workers=%d: expected an array of the %d "
                       "workers' batches", fn, (const void *) plan, workers, ps->workers);
    }
    rc = ob_balance_set_plan(&ps->server->balance, plan);
    if (OMNIBATCH_SUCCESS != rc) {
        char why[512];

        /* The line is this thread's buffer, which ob_fail() writes. */
        snprintf(why, sizeof why, "%s", ob_last_error());
        return ob_fail(rc, "%s: %s", fn, why);
    }
    return OMNIBATCH_SUCCESS;
}

static void ob_ps_server_stats(const struct omnibatch_ps *ps, omnibatch_ps_stats *st)
{
    const ob_ps_server *sv = ps->server;
    uint64_t now = ob_now_ns();

    st->version = sv->version;
    st->pushes = sv->pushes;
    st->dropped = sv->dropped;
    st->elapsed_s = sv->started ? (double) (now - sv->start_ns) * 1e-9 : 0.0;
    st->busy_s = (double) sv->busy_ns * 1e-9;
    st->busy_fraction = st->elapsed_s > 0.0 ? st->busy_s / st->elapsed_s : 0.0;
    st->finished = sv->ended;
    if (0 == ps->server_index) {
        st->epoch = sv->slicer.epoch;
        st->slices = sv->slicer.handed;
        st->decisions = sv->balance.decisions;
        st->changes = sv->balance.changes;
    }
}

OMNIBATCH_EXPORT int omnibatch_ps_get_stats(omnibatch_ps_t ps, omnibatch_ps_stats *st)
{
    const char *fn = "omnibatch_ps_get_stats";
    int rc = ob_ps_check(fn, ps, -1);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == st) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: stats=NULL: expected the address of an "
                       "omnibatch_ps_stats", fn);
    }
    memset(st, 0, sizeof *st);
    st->role = ps->server_index >= 0 ? OMNIBATCH_PS_SERVER : OMNIBATCH_PS_WORKER;
    st->index = ps->server_index >= 0 ? ps->server_index : ps->worker_index;
    if (NULL != ps->server) {
        ob_ps_server_stats(ps, st);
    } else {
        const ob_ps_worker *wk = ps->worker;

        st->version = wk->version;
        st->pushes = wk->pushes;
        st->elapsed_s = wk->pulled ? (double) (ob_now_ns() - wk->start_ns) * 1e-9 : 0.0;
        st->compute_s = wk->compute_s;
        st->wait_s = wk->wait_s;
        st->finished = wk->done;
    }
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_ps_get_worker_stats(omnibatch_ps_t ps, int worker,
                                               omnibatch_ps_worker_stats *st)
{
    const char *fn = "omnibatch_ps_get_worker_stats";
    int rc = ob_ps_check_first(fn, ps);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (worker < 0 || worker >= ps->workers || NULL == st) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: worker=%d, stats=%p: expected a worker in 0..%d and "
                       "the address of an omnibatch_ps_worker_stats", fn, worker, (void *) st,
                       ps->workers - 1);
    }
    ob_ps_worker_stats_of(ps, worker, st);
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_ps_permutation(omnibatch_ps_t ps, long epoch, long *perm)
{
    const char *fn = "omnibatch_ps_permutation";
    int rc = ob_ps_check(fn, ps, -1);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (epoch < 0 || NULL == perm) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: epoch=%ld, perm=%p: expected an epoch >= 0 and an "
                       "array of dataset_size=%ld entries", fn, epoch, (void *) perm,
                       ps->dataset_size);
    }
    return ob_shard_permutation(ps->opt.seed, epoch, ps->dataset_size, perm);
}

/* A destroy before the end: the workers still waiting are answered (a
 * server) or told this one leaves (a worker), so no rank is left waiting. */
static int ob_ps_finish(struct omnibatch_ps *ps)
{
    if (NULL != ps->server) {
        return ps->server->ended ? OMNIBATCH_SUCCESS : ob_ps_server_drain(ps);
    }
    return ps->worker->done ? OMNIBATCH_SUCCESS : ob_ps_worker_leave(ps);
}

OMNIBATCH_EXPORT int omnibatch_ps_destroy(omnibatch_ps_t *handle)
{
    const char *fn = "omnibatch_ps_destroy";
    struct omnibatch_ps *ps;
    int finalized = 0;
    int rc;
    int mpi_rc;

    if (NULL == handle || NULL == *handle) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: %s=NULL: expected a context from %s", fn,
                       NULL == handle ? "ps" : "*ps", ob_ps_fn);
    }
    ps = *handle;
    if (!ob_api_live_remove(&ps->live)) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: *ps=%p is not a live context: destroyed already "
                       "(through another copy of the handle?) or not from %s", fn, (void *) ps,
                       ob_ps_fn);
    }
    PMPI_Finalized(&finalized);
    if (finalized) {
        /* Too late for MPI; the memory is still given back. */
        ob_ps_free(ps);
        *handle = NULL;
        return ob_api_finalized(fn);
    }
    rc = ob_ps_finish(ps);
    mpi_rc = PMPI_Comm_free(&ps->comm);
    if (OMNIBATCH_SUCCESS == rc && MPI_SUCCESS != mpi_rc) {
        rc = ob_api_mpi_fail(mpi_rc, fn, "MPI_Comm_free");
    }
    ob_ps_free(ps);
    *handle = NULL;
    return rc;
}
