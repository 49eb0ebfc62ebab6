/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, the distributed exchange (ob_planner_dist.h): instead of
 * gathering every rank's record, each rank hands its own to the distributed
 * decision, whose few collectives run here as PMPI calls on the context's
 * private communicator.  An allreduce of the decision is one PMPI_Allreduce
 * of a contiguous block under a user operation that sums the int64 part and
 * takes the maximum of the double part (both exact and independent of the
 * order of reduction, so every rank gets the same bits); a scan is one
 * PMPI_Exscan of int64.  When the plan changes, one PMPI_Allgather of one
 * long per rank refreshes the whole plan that omnibatch_get_plan() and the
 * shard of an epoch's last step read.  Under OMNIBATCH_VERIFY every rank
 * also checks that all ranks reached the same decision and plan, and that
 * the central planner, given what every rank's share of the decision saw,
 * finds the same optimum and the same step time of the integer plan.
 * Under OMNIBATCH_WAIT=sleep the decision's collectives are nonblocking
 * ones waited for asleep (ob_api_wait_asleep()).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_api.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_log.h"

/* The central planner and the distributed one agree to this (relative). */
#define OB_API_DIST_AGREE 1e-9

/* Layout of an allreduce's block: counts first, the same on every rank. */
typedef struct ob_api_dist_head {
    int64_t nsum;
    int64_t nmax;
} ob_api_dist_head;

static MPI_Op ob_api_dist_op = MPI_OP_NULL;

/* Sum the int64 part, take the maximum of the double part (len: blocks of the whole message). */
static void ob_api_dist_reduce(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int size = 0;
    char *a = in, *b = inout;

    PMPI_Type_size(*type, &size);
    for (int blk = 0; blk < *len; blk++, a += size, b += size) {
        ob_api_dist_head head;
        const int64_t *sa;
        int64_t *sb;
        const double *ma;
        double *mb;

        memcpy(&head, b, sizeof head);
        sa = (const int64_t *) (const void *) (a + sizeof head);
        sb = (int64_t *) (void *) (b + sizeof head);
        ma = (const double *) (const void *) (sa + head.nsum);
        mb = (double *) (void *) (sb + head.nsum);
        for (int64_t k = 0; k < head.nsum; k++) {
            sb[k] += sa[k];
        }
        for (int64_t k = 0; k < head.nmax; k++) {
            mb[k] = ma[k] > mb[k] ? ma[k] : mb[k];
        }
    }
}

static int ob_api_dist_allreduce(void *ctx, int64_t *sums, int nsum, double *maxs, int nmax)
{
    struct omnibatch_context *c = ctx;
    ob_api_dist_head head = { nsum, nmax };
    size_t bytes = sizeof head + (size_t) nsum * sizeof *sums + (size_t) nmax * sizeof *maxs;
    char *buf = malloc(bytes);
    MPI_Datatype block;
    int mpi_rc;

    if (NULL == buf) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "distributed decision: no memory for a collective of %zu bytes", bytes);
    }
    memcpy(buf, &head, sizeof head);
    memcpy(buf + sizeof head, sums, (size_t) nsum * sizeof *sums);
    memcpy(buf + sizeof head + (size_t) nsum * sizeof *sums, maxs, (size_t) nmax * sizeof *maxs);
    /* One element of the whole size: MPI never splits it, so the operation sees whole blocks. */
    mpi_rc = PMPI_Type_contiguous((int) bytes, MPI_BYTE, &block);
    if (MPI_SUCCESS == mpi_rc) {
        mpi_rc = PMPI_Type_commit(&block);
        if (MPI_SUCCESS == mpi_rc) {
            mpi_rc = c->wait_sleep ? ob_api_allreduce_asleep(MPI_IN_PLACE, buf, 1, block, ob_api_dist_op,
                                                             c->comm, 0.0, 0.0)
                                   : PMPI_Allreduce(MPI_IN_PLACE, buf, 1, block, ob_api_dist_op, c->comm);
        }
        PMPI_Type_free(&block);
    }
    if (MPI_SUCCESS == mpi_rc) {
        memcpy(sums, buf + sizeof head, (size_t) nsum * sizeof *sums);
        memcpy(maxs, buf + sizeof head + (size_t) nsum * sizeof *sums, (size_t) nmax * sizeof *maxs);
    }
    free(buf);
    return MPI_SUCCESS == mpi_rc ? OMNIBATCH_SUCCESS
                                 : ob_api_mpi_fail(mpi_rc, "omnibatch_next_step", "MPI_Allreduce");
}

static int ob_api_dist_exscan(void *ctx, int64_t *v, int n)
{
    struct omnibatch_context *c = ctx;
    MPI_Request req = MPI_REQUEST_NULL;
    int mpi_rc;

    if (c->wait_sleep) {
        mpi_rc = PMPI_Iexscan(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, c->comm, &req);
        mpi_rc = MPI_SUCCESS == mpi_rc ? ob_api_wait_asleep(&req, 0.0, 0.0) : mpi_rc;
    } else {
        mpi_rc = PMPI_Exscan(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, c->comm);
    }

    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, "omnibatch_next_step", "MPI_Exscan");
    }
    if (0 == c->rank) {
        /* MPI leaves the first rank's result undefined. */
        memset(v, 0, (size_t) n * sizeof *v);
    }
    return OMNIBATCH_SUCCESS;
}

/* Whether this context decides distributed: chosen once, the same on every
 * rank (the setting, P and the granularity are). */
int ob_api_dist_on(struct omnibatch_context *c)
{
    const ob_config *cfg = NULL;
    ob_planner_kind kind = OB_PLANNER_AUTO;
    int divides = 0 == c->global_batch % c->opt.granularity;
    ob_planner_params params;

    if (0 != c->dist_chosen) {
        return c->dist_chosen > 0;
    }
    if (OMNIBATCH_SUCCESS == ob_config_global(&cfg) && NULL != cfg) {
        kind = cfg->planner;
    }
    c->dist_chosen = -1;
    if (OB_PLANNER_DISTRIBUTED == kind || (OB_PLANNER_AUTO == kind && c->nranks >= OB_PLANNER_AUTO_RANKS)) {
        if (!divides) {
            ob_log_warn_rank0("OMNIBATCH_PLANNER: the granularity %ld does not divide the global batch %ld: "
                              "the central planner decides", c->opt.granularity, c->global_batch);
            return 0;
        }
        params = c->ctl.params;
        if (MPI_OP_NULL == ob_api_dist_op && MPI_SUCCESS != PMPI_Op_create(ob_api_dist_reduce, 1, &ob_api_dist_op)) {
            return 0;
        }
        if (OMNIBATCH_SUCCESS == ob_dist_init(&c->dist, c->nranks, c->global_batch, &params)) {
            c->dist.pooling = NULL != cfg ? cfg->pool : 1;
            c->dist_chosen = 1;
            ob_log_debug(1, "rank %d: the distributed decision plans for %d ranks", c->rank, c->nranks);
        }
    }
    return c->dist_chosen > 0;
}

/* Does every rank hold this rank's value?  The maxima of v and ~v are both v only if all are equal. */
static int ob_api_dist_same(struct omnibatch_context *c, uint64_t v, const char *what)
{
    uint64_t mine[2] = { v, ~v };
    uint64_t most[2];
    int mpi_rc = PMPI_Allreduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, c->comm);

    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, "omnibatch_next_step", "MPI_Allreduce");
    }
    if (most[0] != mine[0] || most[1] != mine[1]) {
        return ob_fail(OMNIBATCH_ERR_DISAGREE, "omnibatch_next_step: step %ld: the ranks reached different %s "
                       "(OMNIBATCH_VERIFY, distributed decision)", c->next_global_step, what);
    }
    return OMNIBATCH_SUCCESS;
}

/* OMNIBATCH_VERIFY: the central planner on what every rank's share saw. */
static int ob_api_dist_check_central(struct omnibatch_context *c, const ob_dist_trace *mine)
{
    int P = c->nranks;
    ob_dist_trace *all = malloc((size_t) P * sizeof *all);
    ob_rank_model *m = malloc((size_t) P * sizeof *m);
    long *cur = malloc((size_t) P * 2 * sizeof *cur);
    ob_planner_params p = c->ctl.params;
    ob_decision d;
    int mpi_rc, rc = OMNIBATCH_SUCCESS;
    const ob_decision *in = &c->dist.inner;

    if (NULL == all || NULL == m || NULL == cur) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "OMNIBATCH_VERIFY: no memory for %d ranks", P);
    } else if (MPI_SUCCESS != (mpi_rc = PMPI_Allgather(mine, (int) sizeof *mine, MPI_BYTE, all, (int) sizeof *mine,
                                                        MPI_BYTE, c->comm))) {
        rc = ob_api_mpi_fail(mpi_rc, "omnibatch_next_step", "MPI_Allgather");
    } else {
        for (int i = 0; i < P; i++) {
            m[i] = all[i].model;
            cur[i] = all[i].current;
        }
        p.deadband = 0.0;
        rc = ob_plan_decide(&p, m, P, c->global_batch, cur, cur + P, &d);
        if (OMNIBATCH_SUCCESS == rc
            && (fabs(d.t_optimum - in->t_optimum) > OB_API_DIST_AGREE * d.t_optimum
                || fabs(d.t_candidate - in->t_candidate) > OB_API_DIST_AGREE * d.t_candidate)) {
            rc = ob_fail(OMNIBATCH_ERR_DISAGREE, "omnibatch_next_step: step %ld: the distributed decision found "
                         "optimum %.17g s and integer plan %.17g s, the central planner %.17g s and %.17g s "
                         "(OMNIBATCH_VERIFY)", c->next_global_step, in->t_optimum, in->t_candidate, d.t_optimum,
                         d.t_candidate);
        }
    }
    free(all);
    free(m);
    free(cur);
    return rc;
}

/* Every rank's batch, after a change, into the plan the context keeps. */
static int ob_api_dist_refresh(struct omnibatch_context *c, long mine)
{
    long *plan = malloc((size_t) c->nranks * sizeof *plan);
    int mpi_rc, rc;

    if (NULL == plan) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_next_step: no memory for the plan of %d ranks", c->nranks);
    }
    if (c->wait_sleep) {
        MPI_Request req = MPI_REQUEST_NULL;

        mpi_rc = PMPI_Iallgather(&mine, 1, MPI_LONG, plan, 1, MPI_LONG, c->comm, &req);
        mpi_rc = MPI_SUCCESS == mpi_rc ? ob_api_wait_asleep(&req, 0.0, 0.0) : mpi_rc;
    } else {
        mpi_rc = PMPI_Allgather(&mine, 1, MPI_LONG, plan, 1, MPI_LONG, c->comm);
    }
    rc = MPI_SUCCESS == mpi_rc ? ob_controller_set_plan(&c->ctl, plan)
                               : ob_api_mpi_fail(mpi_rc, "omnibatch_next_step", "MPI_Allgather");
    free(plan);
    return rc;
}

static int ob_api_dist_decide(struct omnibatch_context *c, const ob_rank_record *mine, ob_decision *d,
                              int *failed)
{
    ob_dist_comm comm = { ob_api_dist_allreduce, ob_api_dist_exscan, c, 0, 0 };
    ob_dist_block blk = { 1, c->rank };
    ob_dist_trace trace;
    long batch = c->ctl.plan[c->rank];
    long offset = 0;
    int rc;

    memset(&trace, 0, sizeof trace);
    rc = ob_dist_update(&c->dist, &comm, blk, mine, &batch, &offset, d, &trace);
    if (OMNIBATCH_SUCCESS != rc) {
        /* Every rank met the same values and keeps the same plan: training
         * goes on with it rather than stop over one unusable decision. */
        ob_log_warn_rank0("step %ld: the plan stays as it is: %s", c->next_global_step, ob_last_error());
        *failed = 1;
        return OMNIBATCH_SUCCESS;
    }
    ob_log_debug(3, "rank %d: distributed decision: %ld collectives, %ld bytes sent", c->rank, comm.collectives,
                 comm.bytes);
    if (c->dist.pooled > 0 && !c->dist_pooled_said) {
        c->dist_pooled_said = 1;
        ob_log_debug(1, "rank %d: planned on pooled speeds from step %ld (OMNIBATCH_POOL)", c->rank,
                     c->next_global_step);
    }
    if (c->opt.verify && d->t_optimum > 0.0) {
        if (OMNIBATCH_SUCCESS != (rc = ob_api_dist_same(c, c->dist.digest, "decisions"))
            || OMNIBATCH_SUCCESS != (rc = ob_api_dist_check_central(c, &trace))) {
            return rc;
        }
    }
    if (d->changed && OMNIBATCH_SUCCESS != (rc = ob_api_dist_refresh(c, batch))) {
        return rc;
    }
    return OMNIBATCH_SUCCESS;
}

int ob_api_dist_exchange(struct omnibatch_context *c, const ob_rank_record *mine)
{
    ob_decision d;
    int failed = 0;
    int rc;

    memset(&d, 0, sizeof d);
    c->stats.exchanges++;
    /* The news is told (as ob_exchange_decide() does): left set, every
     * later step would bring a decision forward. */
    c->speed_changed = 0;
    c->compute_sum = 0.0;
    c->blocked_sum = 0.0;
    c->compute_n = 0;
    if (c->opt.verify && OMNIBATCH_SUCCESS != (rc = ob_api_dist_same(c, ob_controller_plan_hash(&c->ctl), "plans"))) {
        return rc;
    }
    if (!c->opt.adaptive) {
        return OMNIBATCH_SUCCESS;
    }
    rc = ob_api_dist_decide(c, mine, &d, &failed);
    /* The step model's reduction, as the central exchange keeps it (ob_active.h). */
    c->reduction = c->dist.reduction;
    if (OMNIBATCH_SUCCESS != rc || failed) {
        return rc;
    }
    /* REACT's follow-ups after a change, which next_step asks the controller
     * for (the same on every rank: d.changed is), and the parked ranks'
     * probes, on the plan every rank now holds whole: without them a rank
     * parked by the distributed decision never worked again. */
    ob_controller_note_decision(&c->ctl, d.changed);
    ob_exchange_count_steps(c);
    ob_controller_probe_parked(&c->ctl);
    if (d.t_optimum > 0.0) {
        c->stats.predicted_step_s = d.t_next;
        c->stats.optimum_step_s = d.t_optimum;
    }
    if (d.changed && 0 == c->rank && ob_log_debug_level() >= 1) {
        ob_log_debug(1, "step %ld: plan changed, expected step %.4g s -> %.4g s (optimum %.4g s, distributed)",
                     c->next_global_step, d.t_current, d.t_next, d.t_optimum);
    }
    if (c->opt.verify) {
        return ob_api_dist_same(c, ob_controller_plan_hash(&c->ctl), "plans");
    }
    return OMNIBATCH_SUCCESS;
}
