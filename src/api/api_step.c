/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, the step: omnibatch_next_step() as its phases, each in
 * the file that owns it --
 *   1. close the step before: its measurement to this rank's model (api_measure.c);
 *   2. exchange when due or brought forward, and decide: every rank the same
 *      plan (api_exchange.c, and api_dist.c for the distributed decision);
 *   3. hand out the step: its slice of the epoch's permutation from the plan
 *      (control/shard.c), its weight, the shared word of its range where the
 *      step is worked in chunks (api_chunk.c), the mailbox the layer reads,
 *      and the clocks that time it (here).
 * The state all phases share is the context (ob_api.h): the step handed out
 * (step), its clocks (clock, cpu), the collective it opens with (next).
 */
#include "config.h"

#include <string.h>

#include "ob_active.h"
#include "ob_api.h"
#include "ob_error.h"
#include "ob_shard.h"
#include "ob_timing.h"

/* Phase 3a: step gs's place in its epoch and this rank's slice of it, and
 * the step's one weight: omnibatch_allreduce_gradient() applies it, a code
 * that reduces by itself reads it from the step. */
static int ob_step_place(struct omnibatch_context *c, long gs)
{
    const long k = gs % c->steps_per_epoch;
    int rc;

    memset(&c->step, 0, sizeof c->step);
    c->step.epoch = gs / c->steps_per_epoch;
    c->step.step = k;
    c->step.global_step = gs;
    c->step.total = c->dataset_size - k * c->global_batch;
    if (c->step.total > c->global_batch) {
        c->step.total = c->global_batch;
    }
    rc = ob_shard_locate(c->dataset_size, c->global_batch, k, c->nranks, c->ctl.plan, c->rank,
                         &c->step.start, &c->step.count);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (c->step.count > 0) {
        c->step.scale = (double) c->step.count / (double) c->step.total;
        if (OMNIBATCH_GRAD_DIVIDE_BY_P == c->opt.convention) {
            c->step.scale *= (double) c->nranks;
        }
    }
    return OMNIBATCH_SUCCESS;
}

/* Phase 3b: the step in the mailbox, so that the preload layer can weight
 * a gradient the code reduces by itself (ob_active.h). */
static void ob_step_publish(const struct omnibatch_context *c)
{
    ob_active_batch active;

    active.local = c->step.count;
    active.total = c->step.total;
    active.nranks = c->nranks;
    active.convention = OMNIBATCH_GRAD_DIVIDE_BY_P == c->opt.convention ? OB_CONVENTION_DIVIDE_BY_P
                                                                        : OB_CONVENTION_MEAN;
    active.step = c->step.global_step;
    active.comm = (uint64_t) (uintptr_t) c->comm;
    ob_active_publish(&active);
}

/* Phase 3c: the clocks of the step handed out.  Under a quota its CPU
 * counts from here; omnibatch_next_step's own, since \p entry_cpu (the
 * closing and the exchange, its wait included), goes with the waits'
 * (api_measure.c).  The compute clock starts last, in the caller. */
static void ob_step_start(struct omnibatch_context *c, uint64_t entry_cpu)
{
    if (c->cpu.plan) {
        c->cpu.begin_ns = ob_cpu_ns();
        c->cpu.next_step_ns = c->cpu.begin_ns - entry_cpu;
        c->cpu.blocked_ns = 0;
        c->cpu.entry_ns = 0;
    }
    c->next_global_step = c->step.global_step + 1;
    c->stats.steps = c->next_global_step;
    c->have_step = 1;
    c->clock.reductions = 0;
    c->clock.unmarked_ns = 0;
    c->clock.markers = 0;
    c->clock.in_mark = 0;
    c->clock.marked_ns = 0;
    c->clock.blocked_ns = 0;
}

OMNIBATCH_EXPORT int omnibatch_next_step(omnibatch_t ctx, omnibatch_step *step)
{
    const char *fn = "omnibatch_next_step";
    struct omnibatch_context *c = ctx;
    uint64_t entry_cpu;
    int rc;

    rc = ob_api_check_context(fn, c);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == step) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: step=NULL: expected the address of an "
                       "omnibatch_step", fn);
    }
    entry_cpu = c->cpu.plan ? ob_cpu_ns() : 0;

    /* 1. Close the step before. */
    ob_measure_close(c);
    /* The step's wall time runs from here to the next call: the exchange
     * and the code's own work after its reduction are in it. */
    c->clock.step_begin_ns = ob_now_ns();

    /* 2. Exchange and decide. */
    rc = ob_exchange_step(c);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }

    /* 3. Hand out the step. */
    rc = ob_step_place(c, c->next_global_step);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_chunk_begin(c);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    ob_step_publish(c);
    ob_step_start(c, entry_cpu);
    *step = c->step;
    /* Last, so that the library's own work is not the step's compute. */
    c->clock.segment_ns = ob_now_ns();
    return OMNIBATCH_SUCCESS;
}
