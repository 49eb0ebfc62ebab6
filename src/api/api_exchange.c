/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, the plan exchange: one allgather of one fixed-size
 * record per rank every `period` steps (or brought forward, OMNIBATCH_REACT);
 * every rank then runs the same controller code on the same records, so all
 * hold the same plan without a root.  The collective a step opens with is
 * started in the step before's first gradient allreduce, where every rank
 * is anyway (ob_exchange_begin(), ob_exchange_post()); ob_exchange_step()
 * finishes it, or runs the exchange, at the step's start.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ob_api.h"
#include "ob_config.h"
#include "ob_error.h"
#include "ob_hook.h"
#include "ob_log.h"
#include "ob_timing.h"

/* Which collective omnibatch_next_step() opens step \p gs with: the rule of
 * ob_exchange_due(), REACT's message left to the flags. */
static int ob_next_kind(struct omnibatch_context *c, long gs)
{
    if (0 == gs || !(c->opt.adaptive || c->opt.verify)) {
        return OB_API_NEXT_NONE;
    }
    if (0 == gs % c->opt.period) {
        return OB_API_NEXT_EXCHANGE;
    }
    if (!c->opt.react || !c->opt.adaptive) {
        return OB_API_NEXT_NONE;
    }
    if (gs >= c->early_hold_until && ob_controller_follow_up_due(&c->ctl)) {
        return OB_API_NEXT_EXCHANGE;
    }
    return OB_API_NEXT_REACT;
}

int ob_exchange_begin(struct omnibatch_context *c, uint64_t now)
{
    const long gs = c->next_global_step;
    int kind = ob_next_kind(c, gs);
    double compute;
    int adds;
    int news;
    int dist;
    ob_estimator est;

    /* Started here, the collective carries a look at the step up to its
     * first gradient allreduce: the whole step where the last step had that
     * one call, and every rank knows it (each call is a collective).  With
     * several calls a step (a bucketed code) the compute after the first
     * would be missing: the exchange, and REACT's flag, are left to
     * omnibatch_next_step, on the whole step.  The first step, which has
     * none before it, starts it here (warm-up by default, and then its look
     * adds nothing to the model).  Only what every rank shares decides:
     * warmup may differ between ranks, and a rank that started the
     * collective here while another waited for it in next_step hung both. */
    if (OB_API_NEXT_NONE == kind || (1 != c->clock.last_reductions && c->step.global_step > 0)) {
        return OB_API_NEXT_NONE;
    }
    /* The distributed decision keeps its collectives in next_step (REACT's
     * flag alone goes early there). */
    dist = ob_api_dist_on(c);
    if (OB_API_NEXT_EXCHANGE == kind && dist) {
        return OB_API_NEXT_NONE;
    }
    /* Polling, REACT's flags go in the records, so that an exchange they
     * bring forward is gathered already (asleep, the flags ride the
     * arrival's allreduce, and the records follow where one is set). */
    if (OB_API_NEXT_REACT == kind && !c->wait_sleep && !dist) {
        kind = OB_API_NEXT_RECORDS;
    }
    /* The step's measurement as ob_measure_close() will take it (for a
     * step with one gradient allreduce, the same; with more, the compute
     * after this one is missing), folded into a copy of the model.  A first
     * sample with no step closed before it goes at the close (the
     * exchange's record needs a step's blocked time, below). */
    news = ob_measure_look(c, now, &est, &compute, &adds);
    c->next.peeked = OB_MEASURE_NEWS_CHANGE == news || (OB_MEASURE_NEWS_FIRST == news && c->step.global_step > 0);
    c->next.flag = OB_API_NEXT_EXCHANGE != kind && (c->speed_changed || c->next.peeked);
    if (!dist) {
        /* The record, also for REACT: the exchange its flags bring forward. */
        double sum = c->compute_sum + (adds ? compute : 0.0);
        long n = c->compute_n + (adds ? 1 : 0);

        ob_controller_record(&c->ctl, c->rank, &est, n > 0 ? sum / (double) n : 0.0, &c->next.mine);
        /* The step's own blocked time is not known yet. */
        c->next.mine.blocked_mean = ob_measure_blocked_mean(c);
        ob_cpu_watch_fill(&c->cpu_watch, &c->next.mine);
        c->next.mine.changed = c->next.flag;
    }
    c->next.kind = kind;
    c->next.step = gs;
    c->next.request = MPI_REQUEST_NULL;
    c->next.any = 0;
    return kind;
}

int ob_exchange_post(struct omnibatch_context *c, int carried, int any)
{
    int mpi_rc = MPI_SUCCESS;

    if (carried && OB_API_NEXT_REACT == c->next.kind) {
        c->next.any = any;
        /* A flag is set: the exchange it brings forward is gathered from
         * here, every rank knowing it now. */
        if (0 != any && !ob_api_dist_on(c)) {
            c->next.kind = OB_API_NEXT_EXCHANGE;
        }
    }
    c->next.request = MPI_REQUEST_NULL;
    if (OB_API_NEXT_REACT == c->next.kind && !carried) {
        mpi_rc = PMPI_Iallreduce(&c->next.flag, &c->next.any, 1, MPI_INT, MPI_MAX, c->comm, &c->next.request);
    } else if (OB_API_NEXT_EXCHANGE == c->next.kind || OB_API_NEXT_RECORDS == c->next.kind) {
        mpi_rc = PMPI_Iallgather(&c->next.mine, (int) sizeof c->next.mine, MPI_BYTE, c->records,
                                 (int) sizeof c->next.mine, MPI_BYTE, c->comm, &c->next.request);
    }
    if (MPI_SUCCESS != mpi_rc) {
        c->next.kind = OB_API_NEXT_NONE;
        c->next.request = MPI_REQUEST_NULL;
    }
    return mpi_rc;
}

/* Complete the started collective (its kind stays). */
static int ob_next_wait(struct omnibatch_context *c)
{
    int mpi_rc = MPI_SUCCESS;

    if (MPI_REQUEST_NULL != c->next.request) {
        mpi_rc = c->wait_sleep ? ob_api_wait_asleep(&c->next.request, 0.0, 0.0)
                               : PMPI_Wait(&c->next.request, MPI_STATUS_IGNORE);
    }
    c->next.request = MPI_REQUEST_NULL;
    return mpi_rc;
}

/* Complete the started collective; it is then forgotten. */
static int ob_next_finish(struct omnibatch_context *c)
{
    int mpi_rc = ob_next_wait(c);

    c->next.kind = OB_API_NEXT_NONE;
    return mpi_rc;
}

/* REACT's answer from what the last step's gradient allreduce started:
 * whether any rank's flag is set, in \p any. */
static int ob_next_react(struct omnibatch_context *c, int *any)
{
    int mpi_rc = MPI_SUCCESS;

    *any = 0;
    if (OB_API_NEXT_EXCHANGE == c->next.kind) {
        /* Asleep: the flags rode the arrival and the records followed. */
        *any = c->next.any;
    } else if (OB_API_NEXT_RECORDS == c->next.kind) {
        mpi_rc = ob_next_wait(c);
        for (int i = 0; MPI_SUCCESS == mpi_rc && i < c->nranks; i++) {
            *any = *any || 0 != c->records[i].changed;
        }
        /* Where a flag is set, the records are the exchange's. */
        c->next.kind = MPI_SUCCESS == mpi_rc && *any ? OB_API_NEXT_EXCHANGE : OB_API_NEXT_NONE;
    } else {
        mpi_rc = ob_next_finish(c);
        *any = c->next.any;
    }
    return mpi_rc;
}

void ob_exchange_drop(struct omnibatch_context *c)
{
    if (OB_API_NEXT_NONE != c->next.kind) {
        (void) ob_next_finish(c);
    }
}

/* Under OMNIBATCH_VERIFY: does every rank hold the plan this rank holds?
 * The maxima of h and ~h are both this rank's own only if all are equal. */
static int ob_verify_plan(struct omnibatch_context *c)
{
    uint64_t mine[2];
    uint64_t most[2];
    int mpi_rc;

    mine[0] = ob_controller_plan_hash(&c->ctl);
    mine[1] = ~mine[0];
    mpi_rc = PMPI_Allreduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, c->comm);
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, "omnibatch_next_step", "MPI_Allreduce");
    }
    if (most[0] != mine[0] || most[1] != mine[1]) {
        return ob_fail(OMNIBATCH_ERR_DISAGREE, "omnibatch_next_step: step %ld: the ranks computed "
                       "different plans from the same records (OMNIBATCH_VERIFY)",
                       c->next_global_step);
    }
    return OMNIBATCH_SUCCESS;
}

/* OMNIBATCH_DEBUG >= 2, rank 0: every decision, with each rank's record and
 * the plan now held, so that a plan that does not move can be explained. */
static void ob_log_debug_decision(const struct omnibatch_context *c, const ob_decision *d)
{
    ob_log_debug(2, "step %ld: decision: expected step %.4g s now, %.4g s candidate, %.4g s "
                 "next (water level %.4g s)%s", c->next_global_step, d->t_current, d->t_candidate,
                 d->t_next, d->t_optimum, d->changed ? ", plan changed" : "");
    for (int i = 0; i < c->nranks; i++) {
        const ob_rank_record *r = &c->records[i];

        ob_log_debug(2, "step %ld: rank %d: batch %ld, compute %.4g s, model %.4g s + %.4g s x b "
                     "on %lld samples, error %.3g", c->next_global_step, i, c->ctl.plan[i],
                     r->compute_mean, r->alpha, r->beta, (long long) r->samples, r->rel_error);
    }
}

static int ob_exchange_gather(struct omnibatch_context *c, ob_rank_record *mine);
static int ob_exchange_decide(struct omnibatch_context *c);

static int ob_exchange(struct omnibatch_context *c)
{
    const char *fn = "omnibatch_next_step";
    ob_rank_record mine;
    int mpi_rc;
    int rc;

    if (OB_API_NEXT_EXCHANGE == c->next.kind && c->next_global_step == c->next.step) {
        /* Started with the last step's gradient allreduce, from a look at
         * its measurement; a change of speed the closing saw and the look
         * did not (a step with more than one gradient allreduce) is still
         * to be exchanged. */
        int missed = c->closed_change && !c->next.peeked;

        c->last_record = c->next.mine;
        mpi_rc = ob_next_finish(c);
        if (MPI_SUCCESS != mpi_rc) {
            return ob_api_mpi_fail(mpi_rc, fn, "MPI_Iallgather");
        }
        rc = ob_exchange_decide(c);
        c->speed_changed = c->speed_changed || missed;
        return rc;
    } else {
        ob_controller_record(&c->ctl, c->rank, &c->est,
                             c->compute_n > 0 ? c->compute_sum / (double) c->compute_n : 0.0, &mine);
        /* The step model's reduction (ob_controller.h): the controller judges a
         * change on the whole step, compute and reduction. */
        mine.blocked_mean = ob_measure_blocked_mean(c);
        ob_cpu_watch_fill(&c->cpu_watch, &mine);
        c->last_record = mine;
        if (ob_api_dist_on(c)) {
            return ob_api_dist_exchange(c, &mine);
        }
        mpi_rc = ob_exchange_gather(c, &mine);
    }
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, fn, "MPI_Allgather");
    }
    return ob_exchange_decide(c);
}

/* Every rank's record into c->records: asleep like the gradient's wait
 * where that sleeps (a rank under a CPU quota that polled here for a
 * throttled one would spend its quota, be throttled in turn, and hold the
 * next step back). */
static int ob_exchange_gather(struct omnibatch_context *c, ob_rank_record *mine)
{
    int mpi_rc;

    if (c->wait_sleep) {
        MPI_Request req = MPI_REQUEST_NULL;

        mpi_rc = PMPI_Iallgather(mine, (int) sizeof *mine, MPI_BYTE, c->records, (int) sizeof *mine,
                                 MPI_BYTE, c->comm, &req);
        if (MPI_SUCCESS == mpi_rc) {
            mpi_rc = ob_api_wait_asleep(&req, 0.0, 0.0);
        }
    } else {
        mpi_rc = PMPI_Allgather(mine, (int) sizeof *mine, MPI_BYTE, c->records, (int) sizeof *mine,
                                MPI_BYTE, c->comm);
    }
    return mpi_rc;
}

/* The decision on the records every rank now holds: the same on every rank. */
static int ob_exchange_decide(struct omnibatch_context *c)
{
    const char *fn = "omnibatch_next_step";
    ob_decision d;
    int rc;

    memset(&d, 0, sizeof d);
    c->stats.exchanges++;
    c->reduction = ob_controller_reduction(c->records, c->nranks);
    c->speed_changed = 0;
    c->compute_sum = 0.0;
    c->blocked_sum = 0.0;
    c->compute_n = 0;
    if (c->opt.verify) {
        rc = ob_controller_verify(&c->ctl, c->records);
        if (OMNIBATCH_SUCCESS != rc) {
            char why[256];

            snprintf(why, sizeof why, "%s", ob_last_error());
            return ob_fail(rc, "%s: step %ld: %s (OMNIBATCH_VERIFY)", fn, c->next_global_step, why);
        }
    }
    if (!c->opt.adaptive) {
        return OMNIBATCH_SUCCESS;
    }
    ob_exchange_count_steps(c);
    rc = ob_controller_update(&c->ctl, c->records, &d);
    if (OMNIBATCH_SUCCESS != rc) {
        /* Every rank met the same records and kept the same plan: training
         * goes on with it rather than stop over one unusable decision. */
        ob_log_warn_rank0("step %ld: the plan stays as it is: %s", c->next_global_step,
                          ob_last_error());
        return OMNIBATCH_SUCCESS;
    }
    if (d.t_optimum > 0.0) {
        c->stats.predicted_step_s = d.t_next;
        c->stats.optimum_step_s = d.t_optimum;
    }
    if (d.changed && 0 == c->rank && ob_log_debug_level() >= 1) {
        ob_log_debug(1, "step %ld: plan changed, predicted step %.4g s -> %.4g s (optimum %.4g s)",
                     c->next_global_step, d.t_current, d.t_next, d.t_optimum);
    }
    if (0 == c->rank && ob_log_debug_level() >= 2) {
        ob_log_debug_decision(c, &d);
    }
    if (c->opt.verify) {
        return ob_verify_plan(c);
    }
    return OMNIBATCH_SUCCESS;
}

/* OMNIBATCH_REACT: between the periodic exchanges, is one due now?  Yes
 * when the last decision moved the plan (every rank holds the same
 * controller, so all know it without a message) or when any rank's model
 * confirmed a lasting change of speed at the step just closed (the flags
 * started with that step's gradient allreduce, ob_next_react(), else one
 * one-integer max-allreduce here: its cost is in stats.react_total_s).  After
 * OB_API_MAX_EARLY exchanges in a row brought forward, no follow-up is for
 * a period, so that a plan refining on noisy models falls back to it; a
 * confirmed change of speed always is (a false one is rarer than one in
 * 1e7 samples, a missed one costs every step until the next exchange). */
static int ob_exchange_early(struct omnibatch_context *c, long gs, int *due)
{
    int mine = c->speed_changed;
    int any = 0;
    uint64_t t0;
    int mpi_rc;

    *due = 0;
    if (!c->opt.react || !c->opt.adaptive) {
        return OMNIBATCH_SUCCESS;
    }
    if (gs >= c->early_hold_until && ob_controller_follow_up_due(&c->ctl)) {
        *due = 1;
        return OMNIBATCH_SUCCESS;
    }
    t0 = ob_now_ns();
    if (OB_API_NEXT_NONE != c->next.kind && gs == c->next.step) {
        /* The flags went with the last step's gradient allreduce (a change
         * the closing saw and that look did not stays in speed_changed,
         * for the next step's). */
        mpi_rc = ob_next_react(c, &any);
    } else {
        mpi_rc = c->wait_sleep ? ob_api_allreduce_asleep(&mine, &any, 1, MPI_INT, MPI_MAX, c->comm, 0.0, 0.0)
                               : PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, c->comm);
    }
    c->stats.react_total_s += (double) (ob_now_ns() - t0) * 1e-9;
    if (MPI_SUCCESS != mpi_rc) {
        return ob_api_mpi_fail(mpi_rc, "omnibatch_next_step", "MPI_Allreduce");
    }
    *due = 0 != any;
    return OMNIBATCH_SUCCESS;
}

/* Whether step \p gs starts with an exchange: every period steps, or
 * brought forward (ob_exchange_early()). */
static int ob_exchange_due(struct omnibatch_context *c, long gs, int *due)
{
    int rc;

    *due = 0;
    /* Nothing to exchange when the plan cannot move and nobody checks it. */
    if (0 == gs || !(c->opt.adaptive || c->opt.verify)) {
        return OMNIBATCH_SUCCESS;
    }
    if (0 == gs % c->opt.period) {
        *due = 1;
        return OMNIBATCH_SUCCESS;
    }
    rc = ob_exchange_early(c, gs, due);
    if (OMNIBATCH_SUCCESS != rc || !*due) {
        c->early_streak = 0;
        return rc;
    }
    c->stats.early_exchanges++;
    if (++c->early_streak >= OB_API_MAX_EARLY) {
        c->early_streak = 0;
        c->early_hold_until = gs + c->opt.period;
    }
    return OMNIBATCH_SUCCESS;
}

int ob_exchange_step(struct omnibatch_context *c)
{
    const long gs = c->next_global_step;
    const uint64_t begin = ob_now_ns();
    int due = 0;
    int rc;

    if (gs != c->next.step) {
        ob_exchange_drop(c);
    }
    rc = ob_exchange_due(c, gs, &due);
    if (OMNIBATCH_SUCCESS == rc && due) {
        rc = ob_exchange(c);
    }
    /* Started for this step and not used (not due after all): every rank
     * is in the same case. */
    ob_exchange_drop(c);
    /* The layer, timing a code that reduces with its own MPI calls, must
     * not take the exchange, or REACT's flag, for compute (ob_hook.h). */
    ob_hook_note_own(begin, ob_now_ns());
    return rc;
}
