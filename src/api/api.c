/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, part one: options, the lifecycle of a context, and the
 * plan queries (omnibatch.h).  Steps are in api_step.c (timing in api_measure.c), the
 * weighted allreduce in api_gradient.c.
 *
 * Every collective here decides its outcome together: a rank whose
 * arguments are bad still takes part in the agreement, so all ranks fail
 * with the same code instead of some of them waiting forever.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_active.h"
#include "ob_api.h"
#include "ob_config.h"
#include "ob_cpuquota.h"
#include "ob_error.h"
#include "ob_log.h"
#include "ob_shard.h"
#include "ob_timing.h"
#include "ob_topology.h"

OMNIBATCH_EXPORT int omnibatch_options_init(omnibatch_options *opt)
{
    const ob_config *cfg = NULL;
    int rc;

    if (NULL == opt) {
        return ob_fail(OMNIBATCH_ERR_ARG, "omnibatch_options_init: opt=NULL: expected the address of "
                       "an omnibatch_options");
    }
    /* On a bad setting cfg holds the defaults and the detail line is set:
     * opt still gets usable values. */
    rc = ob_config_global(&cfg);
    memset(opt, 0, sizeof *opt);
    opt->min_batch = cfg->min_batch;
    opt->max_batch = cfg->max_batch;
    opt->granularity = cfg->granularity;
    opt->gain = cfg->gain;
    opt->deadband = cfg->deadband;
    opt->forget = cfg->forget;
    opt->period = cfg->period;
    opt->warmup = cfg->warmup;
    opt->convention = OB_CONVENTION_DIVIDE_BY_P == cfg->convention ? OMNIBATCH_GRAD_DIVIDE_BY_P
                                                                   : OMNIBATCH_GRAD_MEAN;
    switch (cfg->prior) {
    case OB_PRIOR_CORES:
        opt->prior = OMNIBATCH_PRIOR_CORES;
        break;
    case OB_PRIOR_GPUS:
        opt->prior = OMNIBATCH_PRIOR_GPUS;
        break;
    default:
        opt->prior = OMNIBATCH_PRIOR_EQUAL;
        break;
    }
    opt->adaptive = cfg->enable ? 1 : 0;
    opt->verify = cfg->verify ? 1 : 0;
    opt->seed = OMNIBATCH_DEFAULT_SEED;
    opt->react = cfg->react ? 1 : 0;
    opt->chunks = cfg->chunks ? 1 : 0;
    opt->chunk_floor = cfg->chunk_floor;
    return rc;
}

static int ob_options_check_tuning(const char *fn, const omnibatch_options *o);

/* Every option on its own; what involves the other ranks is checked once
 * the ranks' values are gathered.  First the sizes and bounds. */
static int ob_options_check(long B, long N, const omnibatch_options *o)
{
    const char *fn = "omnibatch_create";

    /* The settings' limit keeps the planner's and the shard's sums and
     * products inside a long. */
    if (B < 1 || B > OB_CONFIG_BATCH_LIMIT) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: global_batch=%ld: expected 1..%ld", fn, B,
                       (long) OB_CONFIG_BATCH_LIMIT);
    }
    if (N < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: dataset_size=%ld: expected >= 1", fn, N);
    }
    if (o->min_batch < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: min_batch=%ld: expected >= 0 (0: the rank may be "
                       "parked)", fn, o->min_batch);
    }
    if (o->min_batch > B) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "%s: min_batch=%ld: expected at most "
                       "global_batch=%ld", fn, o->min_batch, B);
    }
    if (0 != o->max_batch && o->max_batch < o->min_batch) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: max_batch=%ld: expected 0 (no limit) or >= "
                       "min_batch=%ld", fn, o->max_batch, o->min_batch);
    }
    if (o->granularity < 1 || o->granularity > B) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: granularity=%ld: expected 1..global_batch (%ld)",
                       fn, o->granularity, B);
    }
    if (o->chunk_floor < 0 || o->chunk_floor > B || 0 != o->chunk_floor % o->granularity) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: chunk_floor=%ld: expected 0 (auto) or a multiple of "
                       "granularity=%ld up to global_batch=%ld", fn, o->chunk_floor, o->granularity, B);
    }
    return ob_options_check_tuning(fn, o);
}

/* The controller's numbers and switches, each on its own. */
static int ob_options_check_tuning(const char *fn, const omnibatch_options *o)
{
    /* Written so that NaN fails too. */
    if (!(o->gain > OB_GAIN_LO && o->gain <= OB_GAIN_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: gain=%g: expected %s", fn, o->gain,
                       ob_config_allowed("OMNIBATCH_GAIN"));
    }
    if (!(o->deadband >= OB_DEADBAND_LO && o->deadband <= OB_DEADBAND_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: deadband=%g: expected %s", fn, o->deadband,
                       ob_config_allowed("OMNIBATCH_DEADBAND"));
    }
    if (!(o->forget >= OB_FORGET_LO && o->forget <= OB_FORGET_HI)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: forget=%g: expected %s", fn, o->forget,
                       ob_config_allowed("OMNIBATCH_FORGET"));
    }
    if (o->period < 1 || o->period > OB_CONFIG_STEPS_LIMIT) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: period=%ld: expected 1..%ld steps", fn, o->period,
                       (long) OB_CONFIG_STEPS_LIMIT);
    }
    if (o->warmup < 0 || o->warmup > OB_CONFIG_STEPS_LIMIT) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: warmup=%ld: expected 0..%ld steps", fn, o->warmup,
                       (long) OB_CONFIG_STEPS_LIMIT);
    }
    if (OMNIBATCH_GRAD_MEAN != o->convention && OMNIBATCH_GRAD_DIVIDE_BY_P != o->convention) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: convention=%d: expected OMNIBATCH_GRAD_MEAN (0) or "
                       "OMNIBATCH_GRAD_DIVIDE_BY_P (1)", fn, (int) o->convention);
    }
    if (OMNIBATCH_PRIOR_EQUAL != o->prior && OMNIBATCH_PRIOR_CORES != o->prior
        && OMNIBATCH_PRIOR_GPUS != o->prior) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: prior=%d: expected OMNIBATCH_PRIOR_EQUAL (0), "
                       "_CORES (1) or _GPUS (2)", fn, (int) o->prior);
    }
    if (0 != o->adaptive && 1 != o->adaptive) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: adaptive=%d: expected 0 or 1", fn, o->adaptive);
    }
    if (0 != o->verify && 1 != o->verify) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: verify=%d: expected 0 or 1", fn, o->verify);
    }
    if (0 != o->react && 1 != o->react) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: react=%d: expected 0 or 1", fn, o->react);
    }
    if (0 != o->chunks && 1 != o->chunks) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: chunks=%d: expected 0 or 1", fn, o->chunks);
    }
    return OMNIBATCH_SUCCESS;
}

/* What each rank brings to create: plain fixed-size data (MPI_BYTE). */
typedef struct ob_create_record {
    int64_t global_batch;
    int64_t dataset_size;
    int64_t granularity;
    int64_t period;
    double gain;
    double deadband;
    int32_t convention;
    int32_t prior;
    int32_t adaptive;
    int32_t verify;
    int32_t react;
    int32_t chunks;
    int64_t chunk_floor;
    int32_t wait_sleep;          /* this rank's OMNIBATCH_WAIT would sleep; any rank's wins */
    uint64_t seed;
    int64_t lo;
    int64_t hi;
    double cores;                /* prior weights (0 when the prior is equal) */
    double gpus;
} ob_create_record;

/* Everything this rank can check alone, and every allocation: a failure
 * here is agreed on before the ranks depend on each other. */
static int ob_create_local(long B, long N, const omnibatch_options *opt, struct omnibatch_context *c,
                           ob_create_record *mine, ob_create_record **all)
{
    int rc;

    if (NULL == opt) {
        rc = omnibatch_options_init(&c->opt);
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
    } else {
        c->opt = *opt;
    }
    rc = ob_options_check(B, N, &c->opt);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    memset(mine, 0, sizeof *mine);
    mine->global_batch = B;
    mine->dataset_size = N;
    mine->granularity = c->opt.granularity;
    mine->period = c->opt.period;
    mine->gain = c->opt.gain;
    mine->deadband = c->opt.deadband;
    mine->convention = (int32_t) c->opt.convention;
    mine->prior = (int32_t) c->opt.prior;
    mine->adaptive = c->opt.adaptive;
    mine->verify = c->opt.verify;
    mine->wait_sleep = c->wait_sleep;
    mine->react = c->opt.react;
    mine->chunks = c->opt.chunks;
    mine->chunk_floor = c->opt.chunk_floor;
    mine->seed = c->opt.seed;
    mine->lo = c->opt.min_batch;
    mine->hi = (0 == c->opt.max_batch || c->opt.max_batch > B) ? B : c->opt.max_batch;
    if (OMNIBATCH_PRIOR_EQUAL != c->opt.prior) {
        ob_topology_info info;

        rc = ob_topology_query(NULL, NULL, &info);
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
        mine->cores = info.cores > 0 ? (double) info.cores : 1.0;
        /* This rank's GPUs, not the machine's: a CPU rank beside a GPU rank has none. */
        mine->gpus = (double) ob_topology_own_gpus(&info, getenv("CUDA_VISIBLE_DEVICES"));
    }
    c->records = calloc((size_t) c->nranks, sizeof *c->records);
    c->lo = calloc((size_t) c->nranks, sizeof *c->lo);
    c->hi = calloc((size_t) c->nranks, sizeof *c->hi);
    c->agree = calloc(2 * (1 + 2 * (size_t) c->nranks), sizeof *c->agree);
    *all = calloc((size_t) c->nranks, sizeof **all);
    if (NULL == c->records || NULL == c->lo || NULL == c->hi || NULL == c->agree || NULL == *all) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_create: no memory for %d ranks' records",
                       c->nranks);
    }
    return OMNIBATCH_SUCCESS;
}

/* The settings every rank must share: one row each, in the order they are
 * compared, so that the message names the first that differs. */
#define OB_AGREE_ROW(field, kind) { #field, offsetof(ob_create_record, field), kind }
static const ob_agree_field ob_agree_fields[] = {
    OB_AGREE_ROW(global_batch, OB_AGREE_I64), OB_AGREE_ROW(dataset_size, OB_AGREE_I64),
    OB_AGREE_ROW(granularity, OB_AGREE_I64),  OB_AGREE_ROW(period, OB_AGREE_I64),
    OB_AGREE_ROW(gain, OB_AGREE_F64),         OB_AGREE_ROW(deadband, OB_AGREE_F64),
    OB_AGREE_ROW(convention, OB_AGREE_I32),   OB_AGREE_ROW(prior, OB_AGREE_I32),
    OB_AGREE_ROW(adaptive, OB_AGREE_I32),     OB_AGREE_ROW(verify, OB_AGREE_I32),
    OB_AGREE_ROW(react, OB_AGREE_I32),        OB_AGREE_ROW(seed, OB_AGREE_U64),
    OB_AGREE_ROW(chunks, OB_AGREE_I32),       OB_AGREE_ROW(chunk_floor, OB_AGREE_I64),
};
#undef OB_AGREE_ROW

/* The CPU quota this rank runs under, and how it waits in the gradient
 * allreduce (OMNIBATCH_CPU_QUOTA, OMNIBATCH_WAIT); ob_create_agree() makes
 * the wait the same on every rank. */
static void ob_create_quota(struct omnibatch_context *c)
{
    const ob_config *cfg = NULL;
    ob_wait_kind how = OB_WAIT_AUTO;
    int plan_quota = 1;

    c->cpu.quota = ob_cpu_quota("/proc/self/cgroup", "/sys/fs/cgroup");
    c->cpu.read_ns = ob_now_ns();
    /* On a bad setting cfg holds the defaults. */
    if (OMNIBATCH_SUCCESS == ob_config_global(&cfg) && NULL != cfg) {
        how = cfg->wait;
        plan_quota = cfg->cpu_quota;
    }
    /* Polling takes one core while the rank's own threads wait: only a quota
     * under one core runs out in it. */
    c->wait_sleep = OB_WAIT_SLEEP == how ||
                    (OB_WAIT_AUTO == how && c->cpu.quota > 0.0 && c->cpu.quota < 1.0);
    ob_nap_init(&c->nap);
    /* OMNIBATCH_CPU_QUOTA=off: the quota still chooses the wait, not the plan. */
    c->cpu.plan = plan_quota && c->cpu.quota > 0.0;
}

static int ob_create_agree(struct omnibatch_context *c, const ob_create_record *all, int P)
{
    /* A blocking allreduce never matches a nonblocking one: every rank waits
     * the same way, asleep when any would (its setting, or a quota). */
    for (int i = 0; i < P; i++) {
        c->wait_sleep = c->wait_sleep || 0 != all[i].wait_sleep;
    }
    return ob_api_agree("omnibatch_create", all, sizeof *all, P, ob_agree_fields,
                        sizeof ob_agree_fields / sizeof ob_agree_fields[0]);
}

static int ob_create_plan(struct omnibatch_context *c, const ob_create_record *all)
{
    const int P = c->nranks;
    const long B = c->global_batch;
    double sum_lo = 0.0;
    double sum_hi = 0.0;
    double *weights = NULL;
    ob_planner_params params;
    int rc;

    /* Sums in double: exact far beyond any real batch, and no overflow. */
    for (int i = 0; i < P; i++) {
        c->lo[i] = (long) all[i].lo;
        c->hi[i] = (long) all[i].hi;
        sum_lo += (double) c->lo[i];
        sum_hi += (double) c->hi[i];
    }
    if (sum_lo > (double) B) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "omnibatch_create: min_batch: the %d ranks need "
                       "at least %.0f samples per step but global_batch=%ld", P, sum_lo, B);
    }
    if (sum_hi < (double) B) {
        return ob_fail(OMNIBATCH_ERR_INFEASIBLE, "omnibatch_create: max_batch: the %d ranks hold at "
                       "most %.0f samples per step but global_batch=%ld", P, sum_hi, B);
    }
    if (OMNIBATCH_PRIOR_EQUAL != c->opt.prior) {
        int all_gpus = 1;

        weights = malloc((size_t) P * sizeof *weights);
        if (NULL == weights) {
            return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_create: no memory for %d weights", P);
        }
        for (int i = 0; i < P; i++) {
            all_gpus = all_gpus && all[i].gpus > 0.0;
        }
        /* Weights must share a unit: GPUs only when every rank has one. */
        for (int i = 0; i < P; i++) {
            weights[i] = OMNIBATCH_PRIOR_GPUS == c->opt.prior && all_gpus ? all[i].gpus : all[i].cores;
        }
        if (OMNIBATCH_PRIOR_GPUS == c->opt.prior && !all_gpus && 0 == c->rank) {
            ob_log_debug(1, "prior gpus: a rank sees no GPU, the first plan follows cores");
        }
    }
    params.gain = c->opt.gain;
    params.deadband = c->opt.deadband;
    params.granularity = c->opt.granularity;
    rc = ob_controller_init(&c->ctl, P, B, &params, c->lo, c->hi, weights);
    free(weights);
    if (OMNIBATCH_SUCCESS == rc) {
        const ob_config *cfg = NULL;

        /* On a bad setting cfg holds the defaults. */
        c->ctl.pooling = OMNIBATCH_SUCCESS == ob_config_global(&cfg) && NULL != cfg ? cfg->pool : 1;
    }
    return rc;
}

static void ob_context_free(struct omnibatch_context *c)
{
    ob_cpu_watch_stop(&c->cpu_watch);
    free(c->records);
    free(c->lo);
    free(c->hi);
    free(c->agree);
    free(c->scratch);
    free(c);
}

/* Ranks that wait asleep sum on their node where they can (api_node.c);
 * every rank here, since every rank waits the same way. */
static int ob_create_node(struct omnibatch_context *c)
{
    const ob_config *cfg = NULL;
    const char *call = "MPI_Comm_split_type";
    int want;
    int mpi_rc;

    if (!c->wait_sleep) {
        return OMNIBATCH_SUCCESS;
    }
    /* Any rank's off is every rank's (ob_node_open()). */
    want = OMNIBATCH_SUCCESS == ob_config_global(&cfg) && NULL != cfg && cfg->node_sum;
    mpi_rc = ob_node_open(c, want, &call);
    return MPI_SUCCESS == mpi_rc ? OMNIBATCH_SUCCESS : ob_api_mpi_fail(mpi_rc, "omnibatch_create", call);
}

/* What the ranks of a node share: the node's sum (asleep) and the words of
 * the ranges of a step worked in chunks; all or nothing. */
static int ob_create_shared(struct omnibatch_context *c)
{
    const char *call = "MPI_Comm_split_type";
    int rc = ob_create_node(c);
    int mpi_rc;

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    mpi_rc = ob_chunk_open(c, &call);
    if (MPI_SUCCESS != mpi_rc) {
        ob_node_close(c);
        return ob_api_mpi_fail(mpi_rc, "omnibatch_create", call);
    }
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_create(MPI_Comm comm, long global_batch, long dataset_size,
                                      const omnibatch_options *opt, omnibatch_t *ctx)
{
    const char *fn = "omnibatch_create";
    struct omnibatch_context *c;
    ob_create_record mine;
    ob_create_record *all = NULL;
    int initialized = 0;
    int finalized = 0;
    int inter = 0;
    int local_rc;
    int rc;
    int mpi_rc;
    struct {
        int status;
        int rank;
    } verdict, worst;

    if (NULL == ctx) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: ctx=NULL: expected the address of an omnibatch_t", fn);
    }
    *ctx = NULL;
    /* These are the same on every rank of a correct program: failing here,
     * before any communication, cannot leave a rank waiting. */
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: MPI is %s: call it between MPI_Init and "
                       "MPI_Finalize", fn, finalized ? "finalized" : "not initialised");
    }
    if (MPI_COMM_NULL == comm) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: comm=MPI_COMM_NULL: expected an intra-communicator",
                       fn);
    }
    mpi_rc = PMPI_Comm_test_inter(comm, &inter);
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Comm_test_inter");
    }
    if (inter) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: comm is an inter-communicator: expected an "
                       "intra-communicator", fn);
    }

    c = calloc(1, sizeof *c);
    if (NULL == c) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for a context", fn);
    }
    c->next.kind = OB_API_NEXT_NONE;
    c->next.request = MPI_REQUEST_NULL;
    c->global_batch = global_batch;
    c->dataset_size = dataset_size;
    c->reduction = -1.0;         /* unknown until the first exchange */
    ob_create_quota(c);
    ob_cpu_watch_start(&c->cpu_watch);
    PMPI_Comm_rank(comm, &c->rank);
    PMPI_Comm_size(comm, &c->nranks);
    local_rc = ob_create_local(global_batch, dataset_size, opt, c, &mine, &all);

    /* Collective from here on. */
    mpi_rc = PMPI_Comm_dup(comm, &c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        ob_context_free(c);
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Comm_dup");
    }
    PMPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);

    /* Agree on the outcome so far: the worst code, and which rank has it. */
    verdict.status = local_rc;
    verdict.rank = c->rank;
    mpi_rc = PMPI_Allreduce(&verdict, &worst, 1, MPI_2INT, MPI_MAXLOC, c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        rc = ob_api_mpi_fail(mpi_rc, fn, "MPI_Allreduce");
        goto fail;
    }
    if (OMNIBATCH_SUCCESS != worst.status) {
        /* A failing rank keeps its own code and line; the others are told who. */
        rc = local_rc;
        if (OMNIBATCH_SUCCESS == rc) {
            rc = ob_fail(worst.status, "%s: rank %d failed (%s): see its message", fn, worst.rank,
                         omnibatch_strerror(worst.status));
        }
        goto fail;
    }

    mpi_rc = PMPI_Allgather(&mine, (int) sizeof mine, MPI_BYTE, all, (int) sizeof mine, MPI_BYTE,
                            c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        rc = ob_api_mpi_fail(mpi_rc, fn, "MPI_Allgather");
        goto fail;
    }
    /* From the same gathered records every rank reaches the same verdict. */
    rc = ob_create_agree(c, all, c->nranks);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_create_plan(c, all);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        goto fail;
    }
    rc = ob_create_shared(c);
    if (OMNIBATCH_SUCCESS != rc) {
        goto fail;
    }
    free(all);

    c->steps_per_epoch = ob_shard_steps_per_epoch(dataset_size, global_batch);
    ob_estimator_init(&c->est, c->opt.forget);
    ob_estimator_set_ranks(&c->est, c->nranks);
    c->stats.compute_s = -1.0;
    ob_api_registry_add(c);
    *ctx = c;
    return OMNIBATCH_SUCCESS;

fail:
    free(all);
    PMPI_Comm_free(&c->comm);
    ob_context_free(c);
    return rc;
}

OMNIBATCH_EXPORT int omnibatch_destroy(omnibatch_t *ctx)
{
    const char *fn = "omnibatch_destroy";
    struct omnibatch_context *c;
    int finalized = 0;
    int rc = OMNIBATCH_SUCCESS;

    if (NULL == ctx || NULL == *ctx) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: %s=NULL: expected a context from omnibatch_create",
                       fn, NULL == ctx ? "ctx" : "*ctx");
    }
    c = *ctx;
    /* A copy of a handle destroyed already points at freed memory: it is
     * recognised by its address alone, before anything reads through it. */
    if (!ob_api_registry_remove(c)) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: *ctx=%p is not a live context: destroyed "
                       "already (through another copy of the handle?) or not from "
                       "omnibatch_create", fn, (void *) c);
    }
    /* The last step ends here: its measurement counts like any other. */
    ob_measure_close(c);
    ob_active_clear();
    PMPI_Finalized(&finalized);
    if (finalized) {
        /* A collective the next step would have opened with is MPI's to
         * forget now. */
        c->next.kind = OB_API_NEXT_NONE;
        ob_node_forget(c);
        ob_chunk_forget(c);
        /* Too late for the communicator; the memory is still given back. */
        rc = ob_api_finalized(fn);
    } else {
        int mpi_rc;

        ob_exchange_drop(c);
        ob_node_close(c);
        ob_chunk_close(c);
        mpi_rc = PMPI_Comm_free(&c->comm);

        if (MPI_SUCCESS != mpi_rc) {
            rc = ob_api_mpi_fail(mpi_rc, fn, "MPI_Comm_free");
        }
    }
    ob_controller_free(&c->ctl);
    ob_context_free(c);
    *ctx = NULL;
    return rc;
}

static int ob_check_plan_args(const char *fn, omnibatch_t ctx, const void *plan, int nranks)
{
    int rc = ob_api_check_context(fn, ctx);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == plan) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: plan=NULL: expected an array of %d batches", fn,
                       ctx->nranks);
    }
    if (nranks != ctx->nranks) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: nranks=%d: expected the communicator's size %d", fn,
                       nranks, ctx->nranks);
    }
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_get_plan(omnibatch_t ctx, long *plan, int nranks)
{
    int rc = ob_check_plan_args("omnibatch_get_plan", ctx, plan, nranks);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    memcpy(plan, ctx->ctl.plan, (size_t) nranks * sizeof *plan);
    return OMNIBATCH_SUCCESS;
}

/* Sum, bounds and granularity: the invariants every plan of the planner keeps. */
static int ob_check_plan_values(const struct omnibatch_context *c, const long *plan)
{
    const char *fn = "omnibatch_set_plan";
    const long g = c->opt.granularity;
    long sum = 0;
    int odd = -1;

    for (int i = 0; i < c->nranks; i++) {
        if (plan[i] < c->lo[i] || plan[i] > c->hi[i]) {
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: plan[%d]=%ld: expected %ld..%ld (rank %d's "
                           "min_batch..max_batch)", fn, i, plan[i], c->lo[i], c->hi[i], i);
        }
        if (0 != plan[i] % g) {
            if (odd >= 0) {
                return ob_fail(OMNIBATCH_ERR_ARG, "%s: plan[%d]=%ld: expected a multiple of the "
                               "granularity %ld (only one rank, here rank %d, may carry the rest "
                               "of global_batch=%ld)", fn, i, plan[i], g, odd, c->global_batch);
            }
            odd = i;
        }
        sum += plan[i];
    }
    if (sum != c->global_batch) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: plan sums to %ld: expected global_batch=%ld", fn,
                       sum, c->global_batch);
    }
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_set_plan(omnibatch_t ctx, const long *plan, int nranks)
{
    const char *fn = "omnibatch_set_plan";
    int64_t *mine;
    int64_t *most;
    int rc;
    int mpi_rc;

    /* A handle that is not a live context has no communicator to agree on. */
    rc = ob_api_check_context(fn, ctx);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    rc = ob_check_plan_args(fn, ctx, plan, nranks);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_check_plan_values(ctx, plan);
    }
    /* One MAX allreduce decides for all.  First key: the highest code of a
     * failing rank (and that rank).  Then the plan and its negation: both
     * maxima are this rank's own values only if every rank passed the same. */
    /* A plan set between a step's gradient allreduce and the next step may
     * change what that step opens with: it opens as if nothing was started. */
    ob_exchange_drop(ctx);
    mine = ctx->agree;
    most = ctx->agree + 1 + 2 * ctx->nranks;
    mine[0] = OMNIBATCH_SUCCESS == rc ? 0 : (int64_t) rc << 32 | (int64_t) (uint32_t) ctx->rank;
    for (int i = 0; i < ctx->nranks; i++) {
        mine[1 + i] = OMNIBATCH_SUCCESS == rc ? plan[i] : 0;
        mine[1 + ctx->nranks + i] = -mine[1 + i];
    }
    mpi_rc = PMPI_Allreduce(mine, most, 1 + 2 * ctx->nranks, MPI_INT64_T, MPI_MAX, ctx->comm);
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Allreduce");
    }
    if (0 != most[0]) {
        int code = (int) (most[0] >> 32);
        int who = (int) (most[0] & 0xffffffff);

        if (OMNIBATCH_SUCCESS == rc) {
            ob_fail(code, "%s: rank %d rejected the plan (%s): see its message", fn, who,
                    omnibatch_strerror(code));
        }
        return code;
    }
    if (0 != memcmp(mine + 1, most + 1, 2 * (size_t) ctx->nranks * sizeof *mine)) {
        return ob_fail(OMNIBATCH_ERR_DISAGREE, "%s: the ranks passed different plans: every rank "
                       "must pass the same", fn);
    }
    /* Validated above, the same on every rank: the controller accepts it. */
    return ob_controller_set_plan(&ctx->ctl, plan);
}

OMNIBATCH_EXPORT int omnibatch_permutation(omnibatch_t ctx, long epoch, long *perm)
{
    const char *fn = "omnibatch_permutation";
    int rc = ob_api_check_context(fn, ctx);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (epoch < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: epoch=%ld: expected >= 0", fn, epoch);
    }
    if (NULL == perm) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: perm=NULL: expected an array of dataset_size=%ld "
                       "entries", fn, ctx->dataset_size);
    }
    return ob_shard_permutation(ctx->opt.seed, epoch, ctx->dataset_size, perm);
}

OMNIBATCH_EXPORT int omnibatch_get_stats(omnibatch_t ctx, omnibatch_stats *stats)
{
    const char *fn = "omnibatch_get_stats";
    int rc = ob_api_check_context(fn, ctx);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == stats) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: stats=NULL: expected the address of an "
                       "omnibatch_stats", fn);
    }
    *stats = ctx->stats;
    /* One of the two deciders ran (api_dist.c): the other counted nothing. */
    stats->decisions = ctx->ctl.decisions + ctx->dist.decisions;
    stats->changes = ctx->ctl.changes + ctx->dist.changes;
    ob_estimator_model(&ctx->est, &stats->alpha, &stats->beta);
    return OMNIBATCH_SUCCESS;
}
