/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, part four: the state of a run for checkpoints and
 * restarts (omnibatch.h; the blob's layout is src/control/ob_state.h).  Every
 * call here is collective and decides its outcome together, so a rank whose
 * argument is bad fails every rank instead of leaving them waiting.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ob_api.h"
#include "ob_error.h"
#include "ob_log.h"
#include "ob_planner.h"
#include "ob_state.h"
#include "ob_topology.h"

/* What each rank tells the others when a state is applied. */
typedef struct ob_state_rank {
    char host[OB_STATE_HOST_BYTES];
    int32_t cores;
    int32_t entry;               /* its entry in the state, -1: none (a new host) */
    double alpha;                /* its restored model (entry >= 0) */
    double beta;
    double weight;               /* its prior weight (cores, or 1 with the equal prior) */
} ob_state_rank;

/* One MAX allreduce: the highest failing code on any rank (0 when none),
 * and whether every rank passed the same 64-bit key (its maxima and those
 * of its complement are then this rank's own). */
static int ob_state_agree(struct omnibatch_context *c, const char *fn, int rc, uint64_t key)
{
    uint64_t mine[3] = { (uint64_t) (OMNIBATCH_SUCCESS == rc ? 0 : rc), key, ~key };
    uint64_t most[3];
    int mpi_rc = PMPI_Allreduce(mine, most, 3, MPI_UINT64_T, MPI_MAX, c->comm);

    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Allreduce");
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (0 != most[0]) {
        return ob_fail((int) most[0], "%s: failed on another rank (%s)", fn, omnibatch_strerror((int) most[0]));
    }
    if (most[1] != key || most[2] != ~key) {
        return ob_fail(OMNIBATCH_ERR_DISAGREE, "%s: the ranks passed different states: every rank must pass "
                       "the same", fn);
    }
    return OMNIBATCH_SUCCESS;
}

static void ob_state_whoami(char *host, int *cores)
{
    ob_topology_info info;

    memset(host, 0, OB_STATE_HOST_BYTES);
    if (OMNIBATCH_SUCCESS == ob_topology_query(NULL, NULL, &info)) {
        snprintf(host, OB_STATE_HOST_BYTES, "%s", info.hostname);
        *cores = info.cores;
        return;
    }
    if (0 != gethostname(host, OB_STATE_HOST_BYTES - 1)) {
        snprintf(host, OB_STATE_HOST_BYTES, "?");
    }
    *cores = 0;
}

OMNIBATCH_EXPORT int omnibatch_state_size(omnibatch_t ctx, size_t *size)
{
    const char *fn = "omnibatch_state_size";
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_api_check_context(fn, ctx))) {
        return rc;
    }
    if (NULL == size) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: size=NULL: expected the address of a size_t", fn);
    }
    *size = ob_state_size(ctx->nranks);
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_get_state(omnibatch_t ctx, void *buf, size_t size)
{
    const char *fn = "omnibatch_get_state";
    struct omnibatch_context *c = ctx;
    ob_state_entry mine;
    int rc = OMNIBATCH_SUCCESS;
    int cores = 0;
    int mpi_rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_api_check_context(fn, c))) {
        return rc;
    }
    if (NULL == buf || size < ob_state_size(c->nranks)) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "%s: buf=%p, size=%zu: expected room for %zu bytes "
                     "(omnibatch_state_size())", fn, buf, size, ob_state_size(c->nranks));
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_state_agree(c, fn, rc, 0))) {
        return rc;
    }
    /* The running step counts as done: its time is learnt now. */
    ob_measure_close(c);
    /* What the next step would have opened with: it opens as after a restart. */
    ob_exchange_drop(c);
    memset(&mine, 0, sizeof mine);
    ob_state_whoami(mine.host, &cores);
    mine.cores = cores;
    mine.plan = c->ctl.plan[c->rank];
    mine.est = c->est;
    mpi_rc = PMPI_Allgather(&mine, (int) sizeof mine, MPI_BYTE, (char *) buf + sizeof(ob_state_header),
                            (int) sizeof mine, MPI_BYTE, c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Allgather");
    }
    ob_state_finish(buf, c->nranks, c->global_batch, c->dataset_size, c->next_global_step, c->opt.seed);
    return OMNIBATCH_SUCCESS;
}

/* The blob fits this context, and nothing was handed out yet. */
static int ob_state_check_for(const struct omnibatch_context *c, const char *fn, const void *buf, size_t size,
                              ob_state_header *h)
{
    int rc;

    if (0 != c->next_global_step || c->have_step) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: step %ld was already handed out: a state applies before "
                       "the first omnibatch_next_step()", fn, c->next_global_step);
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_state_check(buf, size, h))) {
        char why[256];

        snprintf(why, sizeof why, "%s", ob_last_error());
        return ob_fail(rc, "%s: %s", fn, why);
    }
    if (h->global_batch != c->global_batch || h->dataset_size != c->dataset_size) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: the state is of global_batch=%lld, dataset_size=%lld; this "
                       "context has %ld and %ld: expected the same (the data position depends on both)", fn,
                       (long long) h->global_batch, (long long) h->dataset_size, c->global_batch,
                       c->dataset_size);
    }
    return OMNIBATCH_SUCCESS;
}

/* This rank's entry: the occurrence-th rank on its host and cores takes
 * the occurrence-th entry saved for them; its learnt model into \p est
 * (installed only once every rank has the whole state). */
static void ob_state_resume_rank(const struct omnibatch_context *c, const void *buf, ob_state_rank *all,
                                 ob_estimator *est)
{
    ob_state_rank *me = &all[c->rank];
    int occurrence = 0;

    for (int j = 0; j < c->rank; j++) {
        occurrence += 0 == strcmp(all[j].host, me->host) && all[j].cores == me->cores;
    }
    me->entry = ob_state_match(buf, me->host, me->cores, occurrence);
    if (me->entry >= 0) {
        ob_state_entry e;

        ob_state_entry_get(buf, me->entry, &e);
        *est = e.est;
        /* This run's settings: its forgetting and its number of ranks. */
        est->forget = c->opt.forget;
        ob_estimator_set_ranks(est, c->nranks);
        ob_estimator_model(est, &me->alpha, &me->beta);
    }
    me->weight = OMNIBATCH_PRIOR_EQUAL == c->opt.prior || me->cores < 1 ? 1.0 : (double) me->cores;
}

/* The same saved plan, rank for rank: the warm start is the learnt plan. */
static int ob_state_same_ranks(const struct omnibatch_context *c, const ob_state_header *h, const ob_state_rank *all)
{
    if (h->nranks != c->nranks) {
        return 0;
    }
    for (int i = 0; i < c->nranks; i++) {
        if (all[i].entry != i) {
            return 0;
        }
    }
    return 1;
}

/* The same ranks: their saved plan into \p plan, if it still fits the
 * bounds and the granularity (at most one rank off a multiple of it,
 * carrying the rest of the global batch, as the planner keeps it: a run
 * restarted at another granularity kept the old plan, for good where it
 * does not adapt).  1 when it was taken, 0 when the models must decide. */
static int ob_state_saved_plan(const struct omnibatch_context *c, const void *buf, long *plan)
{
    const int P = c->nranks;
    int odd = 0;

    for (int i = 0; i < P; i++) {
        ob_state_entry e;

        ob_state_entry_get(buf, i, &e);
        plan[i] = (long) e.plan;
        odd += 0 != plan[i] % c->opt.granularity;
    }
    /* New bounds (a rank parked at min_batch 0, restarted at 1): the models decide. */
    return odd <= 1 && OMNIBATCH_SUCCESS == ob_plan_check(c->ctl.bounds, P, c->global_batch, plan);
}

/* The rounded optimum of the models into \p plan, a rank with none (a new
 * host) getting the known ranks' mean fixed cost and mean per-sample cost
 * per unit of prior weight. */
static int ob_state_model_plan(const struct omnibatch_context *c, const ob_state_rank *all, double alpha,
                               double rate, int known, long *plan)
{
    const int P = c->nranks;
    ob_rank_model *m = calloc((size_t) P, sizeof *m);
    double *target = calloc((size_t) P, sizeof *target);
    int rc;

    if (NULL == m || NULL == target) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "omnibatch_set_state: no memory for %d ranks", P);
    } else {
        for (int i = 0; i < P; i++) {
            int mine = all[i].entry >= 0 && all[i].beta > 0.0;

            m[i].alpha = mine ? all[i].alpha : alpha / known;
            m[i].beta = mine ? all[i].beta : rate / known / all[i].weight;
            m[i].lo = c->ctl.bounds[i].lo;
            m[i].hi = c->ctl.bounds[i].hi;
        }
        rc = ob_plan_optimum(m, P, c->global_batch, target, NULL);
        if (OMNIBATCH_SUCCESS == rc) {
            rc = ob_plan_round(m, P, c->global_batch, c->opt.granularity, target, plan);
        }
        if (OMNIBATCH_SUCCESS == rc) {
            rc = ob_plan_check(c->ctl.bounds, P, c->global_batch, plan);
        }
    }
    free(m);
    free(target);
    return rc;
}

/* The warm plan into \p plan (*taken: whether there is one): the saved plan
 * when the ranks are the same; otherwise the models' plan, the prior in the
 * known ranks' units for new hosts.  With no rank known the prior plan of
 * create stays.  Nothing installed. */
static int ob_state_warm_plan(const struct omnibatch_context *c, const void *buf, const ob_state_header *h,
                              const ob_state_rank *all, long *plan, int *taken)
{
    double alpha = 0.0, rate = 0.0;
    int known = 0;

    *taken = 1;
    if (ob_state_same_ranks(c, h, all) && ob_state_saved_plan(c, buf, plan)) {
        return OMNIBATCH_SUCCESS;
    }
    for (int i = 0; i < c->nranks; i++) {
        if (all[i].entry >= 0 && all[i].beta > 0.0) {
            alpha += all[i].alpha;
            rate += all[i].beta * all[i].weight;
            known++;
        }
    }
    *taken = known > 0;
    return 0 == known ? OMNIBATCH_SUCCESS : ob_state_model_plan(c, all, alpha, rate, known, plan);
}

/* Everything this rank resumes from, gathered, and the warm plan: nothing
 * in the context is written (the caller installs it once every rank has). */
static int ob_state_prepare(struct omnibatch_context *c, const char *fn, const void *buf, const ob_state_header *h,
                            ob_state_rank *all, ob_estimator *est, long *plan, int *taken)
{
    ob_state_rank mine;
    int cores = 0;
    int mpi_rc;

    memset(&mine, 0, sizeof mine);
    ob_state_whoami(mine.host, &cores);
    mine.cores = cores;
    mine.entry = -1;
    mpi_rc = PMPI_Allgather(&mine, (int) sizeof mine, MPI_BYTE, all, (int) sizeof mine, MPI_BYTE, c->comm);
    if (MPI_SUCCESS == mpi_rc) {
        ob_state_resume_rank(c, buf, all, est);
        mine = all[c->rank];
        mpi_rc = PMPI_Allgather(&mine, (int) sizeof mine, MPI_BYTE, all, (int) sizeof mine, MPI_BYTE, c->comm);
    }
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Allgather");
    }
    /* Every rank computes the same plan from the same gathered models. */
    return ob_state_warm_plan(c, buf, h, all, plan, taken);
}

OMNIBATCH_EXPORT int omnibatch_set_state(omnibatch_t ctx, const void *buf, size_t size)
{
    const char *fn = "omnibatch_set_state";
    struct omnibatch_context *c = ctx;
    ob_state_header h;
    ob_state_rank *all = NULL;
    ob_estimator est;
    long *plan = NULL;
    int taken = 0;
    int rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_api_check_context(fn, c))) {
        return rc;
    }
    memset(&h, 0, sizeof h);
    rc = ob_state_check_for(c, fn, buf, size, &h);
    if (OMNIBATCH_SUCCESS == rc && (NULL == (all = calloc((size_t) c->nranks, sizeof *all))
                                    || NULL == (plan = malloc((size_t) c->nranks * sizeof *plan)))) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for %d ranks", fn, c->nranks);
    }
    if (OMNIBATCH_SUCCESS == (rc = ob_state_agree(c, fn, rc, h.checksum))) {
        est = c->est;
        rc = ob_state_prepare(c, fn, buf, &h, all, &est, plan, &taken);
        /* Installed only where every rank got that far (an allocation that
         * failed on one rank fails them all), so that every rank returns the
         * same code and, on failure, its context as it was.  Not after an MPI
         * error: no collective is defined after a failed one. */
        if (OMNIBATCH_ERR_MPI != rc) {
            rc = ob_state_agree(c, fn, rc, 0);
        }
    }
    if (OMNIBATCH_SUCCESS == rc) {
        c->est = est;
        if (taken) {
            rc = ob_controller_set_plan(&c->ctl, plan);
        }
        c->next_global_step = (long) h.next_step;
        c->stats.steps = c->next_global_step;
        c->opt.seed = h.seed;
        if (0 == c->rank) {
            int resumed = 0;

            for (int i = 0; i < c->nranks; i++) {
                resumed += all[i].entry >= 0;
            }
            ob_log_debug(1, "state: resumed at step %lld; %d of %d ranks from their learnt models, the "
                         "others from the prior", (long long) h.next_step, resumed, c->nranks);
        }
    }
    free(all);
    free(plan);
    return rc;
}

OMNIBATCH_EXPORT int omnibatch_save(omnibatch_t ctx, const char *path)
{
    const char *fn = "omnibatch_save";
    struct omnibatch_context *c = ctx;
    char tmp[4096];
    void *buf = NULL;
    size_t size = 0;
    int rc = OMNIBATCH_SUCCESS;
    int mpi_rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_api_check_context(fn, c))) {
        return rc;
    }
    if (NULL == path || '\0' == path[0] || strlen(path) + 16 > sizeof tmp) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "%s: path=%s%s%s: expected a file name shorter than %zu bytes", fn,
                     NULL == path ? "" : "'", NULL == path ? "NULL" : path, NULL == path ? "" : "'",
                     sizeof tmp - 16);
    } else {
        size = ob_state_size(c->nranks);
        buf = malloc(size);
        if (NULL == buf) {
            rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for a state of %zu bytes", fn, size);
        }
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_state_agree(c, fn, rc, 0))) {
        free(buf);
        return rc;
    }
    rc = omnibatch_get_state(c, buf, size);
    if (OMNIBATCH_SUCCESS == rc && 0 == c->rank) {
        /* Written aside and renamed: a crash mid-write leaves the old file whole. */
        FILE *f;

        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        f = fopen(tmp, "wb");
        if (NULL == f || size != fwrite(buf, 1, size, f) || 0 != fclose(f) || 0 != rename(tmp, path)) {
            rc = ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot write the state to '%s'", fn, path);
            if (NULL != f) {
                remove(tmp);
            }
        }
    }
    free(buf);
    mpi_rc = PMPI_Bcast(&rc, 1, MPI_INT, 0, c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Bcast");
    }
    if (OMNIBATCH_SUCCESS != rc && 0 != c->rank) {
        return ob_fail(rc, "%s: rank 0 could not write the state to '%s'", fn, path);
    }
    return rc;
}

/* Rank 0's file, read whole: *size = 0 and a detail line when it cannot be. */
static void *ob_state_read_file(const char *fn, const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    void *buf = NULL;
    long n = -1;

    *size = 0;
    if (NULL != f && 0 == fseek(f, 0, SEEK_END)) {
        n = ftell(f);
    }
    if (NULL != f && n > 0 && 0 == fseek(f, 0, SEEK_SET) && NULL != (buf = malloc((size_t) n))
        && (size_t) n == fread(buf, 1, (size_t) n, f)) {
        *size = (size_t) n;
    } else {
        free(buf);
        buf = NULL;
        ob_fail(OMNIBATCH_ERR_ARG, "%s: cannot read a state from '%s'", fn, path);
    }
    if (NULL != f) {
        fclose(f);
    }
    return buf;
}

OMNIBATCH_EXPORT int omnibatch_restore(omnibatch_t ctx, const char *path)
{
    const char *fn = "omnibatch_restore";
    struct omnibatch_context *c = ctx;
    unsigned long long n = 0;
    void *buf = NULL;
    size_t size = 0;
    int rc;
    int mpi_rc;

    if (OMNIBATCH_SUCCESS != (rc = ob_api_check_context(fn, c))) {
        return rc;
    }
    if (0 == c->rank) {
        buf = NULL == path ? NULL : ob_state_read_file(fn, path, &size);
        if (NULL == path) {
            ob_fail(OMNIBATCH_ERR_ARG, "%s: path=NULL: expected the file omnibatch_save() wrote", fn);
        }
        n = (unsigned long long) size;
    }
    mpi_rc = PMPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        free(buf);
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Bcast");
    }
    if (0 == n) {
        return 0 == c->rank ? OMNIBATCH_ERR_ARG
                            : ob_fail(OMNIBATCH_ERR_ARG, "%s: rank 0 could not read a state from '%s'", fn,
                                      NULL == path ? "(null)" : path);
    }
    if (0 != c->rank) {
        size = (size_t) n;
        buf = malloc(size);
    }
    /* Every rank takes part in the broadcast; one without memory, or without
     * a path (the other ranks' is not read, but a rank that has none is
     * mistaken, as a binding that could not convert its argument), fails
     * every rank below. */
    if (NULL == path && 0 != c->rank) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "%s: path=NULL: expected the file omnibatch_save() wrote", fn);
    } else if (NULL == buf) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for a state of %llu bytes", fn, n);
    } else {
        rc = OMNIBATCH_SUCCESS;
    }
    if (OMNIBATCH_SUCCESS != (rc = ob_state_agree(c, fn, rc, 0))) {
        free(buf);
        return rc;
    }
    mpi_rc = PMPI_Bcast(buf, (int) size, MPI_BYTE, 0, c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        free(buf);
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Bcast");
    }
    rc = omnibatch_set_state(c, buf, size);
    free(buf);
    return rc;
}
