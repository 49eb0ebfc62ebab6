/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The emulated collectives of the distributed decision (sim_dist.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "sim_dist.h"

#define OB_SIM_LOG_MAX ((int) (sizeof ((ob_sim_dist *) 0)->log / sizeof ((ob_sim_dist *) 0)->log[0]))

static int ob_sim_allreduce(void *ctx, int64_t *sums, int nsum, double *maxs, int nmax)
{
    ob_sim_dist *sd = ctx;
    ob_sim_coll *c;

    if (sd->replay) {
        if (sd->pos >= sd->n || sd->log[sd->pos].nsum != nsum || sd->log[sd->pos].nmax != nmax) {
            sd->failed = 1;
            return ob_fail(OMNIBATCH_ERR_STATE, "simulate: the replayed rank asked for collective %d of "
                           "another shape than the one logged", sd->pos);
        }
        c = &sd->log[sd->pos++];
        memcpy(sums, c->sums, (size_t) nsum * sizeof *sums);
        memcpy(maxs, c->maxs, (size_t) nmax * sizeof *maxs);
        return OMNIBATCH_SUCCESS;
    }
    if (sd->n >= OB_SIM_LOG_MAX) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: more than %d collectives in one decision", OB_SIM_LOG_MAX);
    }
    c = &sd->log[sd->n];
    free(c->sums);
    free(c->maxs);
    c->sums = malloc((size_t) (nsum > 0 ? nsum : 1) * sizeof *c->sums);
    c->maxs = malloc((size_t) (nmax > 0 ? nmax : 1) * sizeof *c->maxs);
    if (NULL == c->sums || NULL == c->maxs) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: no memory for the log of collectives");
    }
    c->nsum = nsum;
    c->nmax = nmax;
    memcpy(c->sums, sums, (size_t) nsum * sizeof *sums);
    memcpy(c->maxs, maxs, (size_t) nmax * sizeof *maxs);
    sd->n++;
    return OMNIBATCH_SUCCESS;
}

/* One block holding every rank, or rank 0 replayed: nothing comes before. */
static int ob_sim_exscan(void *ctx, int64_t *v, int n)
{
    (void) ctx;
    memset(v, 0, (size_t) n * sizeof *v);
    return OMNIBATCH_SUCCESS;
}

ob_dist_comm ob_sim_dist_comm(ob_sim_dist *sd)
{
    ob_dist_comm c = { ob_sim_allreduce, ob_sim_exscan, sd, 0, 0 };

    return c;
}

void ob_sim_dist_reset(ob_sim_dist *sd, int replay)
{
    sd->replay = replay;
    sd->pos = 0;
    sd->failed = 0;
    if (!replay) {
        sd->n = 0;
    }
}

void ob_sim_dist_free(ob_sim_dist *sd)
{
    for (int k = 0; k < OB_SIM_LOG_MAX; k++) {
        free(sd->log[k].sums);
        free(sd->log[k].maxs);
    }
    memset(sd, 0, sizeof *sd);
}

double ob_sim_dist_cost(long collectives, long bytes, int P, double latency, double bandwidth)
{
    double hops = P > 1 ? ceil(log2((double) P)) : 0.0;

    return (double) collectives * latency * hops + (double) bytes / bandwidth;
}
