/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, part two: handing out steps, timing them, and the
 * periodic plan exchange.  One allgather of one fixed-size record per rank
 * every `period` steps; every rank then runs the same controller code on
 * the same records, so all hold the same plan without a root.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ob_active.h"
#include "ob_hook.h"
#include "ob_api.h"
#include "ob_config.h"
#include "ob_cpuquota.h"
#include "ob_error.h"
#include "ob_log.h"
#include "ob_maths.h"
#include "ob_shard.h"
#include "ob_timing.h"

/* The median of the last OB_API_CPU_AFTER steps' values in \p ring, \p now's
 * included: an evaluation, or a long wait, every few steps moves it not. */
static double ob_api_recent_median(double *ring, int *count, double now)
{
    double v[OB_API_CPU_AFTER];
    int n;

    ring[*count % OB_API_CPU_AFTER] = now;
    (*count)++;
    n = *count < OB_API_CPU_AFTER ? *count : OB_API_CPU_AFTER;
    memcpy(v, ring, (size_t) n * sizeof v[0]);
    return ob_median(v, n);
}

/* The least measured compute of the last OB_API_CPU_AFTER steps at this
 * step's batch, \p compute included; 0 until OB_API_WALL_MIN of them. */
static double ob_api_least_wall(struct omnibatch_context *c, double compute)
{
    double least = compute;
    int n;

    if (c->step.count != c->wall_batch) {
        c->wall_batch = c->step.count;
        c->wall_n = 0;
    }
    c->wall_recent[c->wall_n % OB_API_CPU_AFTER] = compute;
    c->wall_n++;
    n = c->wall_n < OB_API_CPU_AFTER ? c->wall_n : OB_API_CPU_AFTER;
    for (int k = 0; k < n; k++) {
        least = c->wall_recent[k] < least ? c->wall_recent[k] : least;
    }
    return c->wall_n >= OB_API_WALL_MIN ? least : 0.0;
}

/* The median of the values in \p ring (\p count of them written, the last
 * OB_API_CPU_AFTER kept), none added; 0 for none. */
static double ob_api_ring_median(const double *ring, int count)
{
    double v[OB_API_CPU_AFTER];
    int n = count < OB_API_CPU_AFTER ? count : OB_API_CPU_AFTER;

    if (0 == n) {
        return 0.0;
    }
    memcpy(v, ring, (size_t) n * sizeof v[0]);
    return ob_median(v, n);
}

/* ob_api_least_wall() as it would answer for \p compute, nothing written. */
static double ob_api_least_wall_peek(const struct omnibatch_context *c, double compute)
{
    double least = compute;
    int n;

    if (c->step.count != c->wall_batch) {
        return OB_API_WALL_MIN <= 1 ? compute : 0.0; /* a new batch starts over */
    }
    n = c->wall_n < OB_API_CPU_AFTER ? c->wall_n : OB_API_CPU_AFTER;
    for (int k = 0; k < n; k++) {
        /* The oldest value, which \p compute would replace, is not among them. */
        if (k != c->wall_n % OB_API_CPU_AFTER) {
            least = c->wall_recent[k] < least ? c->wall_recent[k] : least;
        }
    }
    return c->wall_n + 1 >= OB_API_WALL_MIN ? least : 0.0;
}

/* The quota again, once OB_API_QUOTA_REREAD_NS have passed since it was
 * read: a platform that resizes a container's CPU mid-run changes what a
 * step of this rank costs, not its CPU time per step, which alone the plan
 * would never see (a rank cut from 0.5 to 0.1 core kept its share, and the
 * step took five times as long).  A quota removed (0) leaves the rank
 * planned on its measured compute.  Where no quota was set at
 * omnibatch_create the rank is not planned on its CPU, and the wait each
 * rank takes is agreed there for the run: a quota that comes later shows
 * in the measured compute only. */
static void ob_api_quota_reread(struct omnibatch_context *c, uint64_t now)
{
    double q;

    if (now - c->quota_read_ns < OB_API_QUOTA_REREAD_NS) {
        return;
    }
    c->quota_read_ns = now;
    q = ob_cpu_quota("/proc/self/cgroup", "/sys/fs/cgroup");
    if (q != c->cpu_quota) {
        ob_log_debug(1, "rank %d: CPU quota %.4g -> %.4g cores (step %ld)", c->rank, c->cpu_quota, q,
                     c->step.global_step);
        c->cpu_quota = q;
    }
}

/* Under a CPU quota q a step of T has at most q T of CPU, whichever part of
 * the step the rank spends it in: a rank that spends cpu in a step needs
 * cpu / q of it.  That is its compute and the rest up to the gradient
 * allreduce's end (the transfer's own CPU counts when it waits asleep), the
 * median of the last steps' CPU after it, and the median of the last steps'
 * CPU in omnibatch_next_step (the exchange) and in the waits for the other
 * ranks, when it waits asleep: each wait's CPU is the others' lateness, but
 * every step has one, and asleep its median is that fixed cost (0.25 ms a
 * step on a virtual machine: 2.5 ms of a 0.1-core rank's step; left out,
 * such a rank was given 10% more than its share).  Polling, a wait's CPU is
 * its length: counted, a rank that waits would look slow, be given less and
 * wait longer.  The controller plans on that, not on
 * the measured compute: where the quota runs out mid-compute the kernel
 * stops the rank until its period ends, so the compute measured swings with
 * where the step falls in the period (at a 100 ms period, 13 to 70 ms at one
 * batch), and the larger of the two chased those stalls.  The least compute
 * of the last steps at the batch still counts where it is the larger: a rank
 * slowed by something the quota does not see (crowded cores, reading its
 * data).  Nothing is taken off for the reduction, although the step's
 * reduction is in the q T: measured as the least time any rank was blocked,
 * it also holds the stalls of a rank throttled in it (20-90 ms, against a
 * transfer of a few), and a common term moves no sample between ranks that
 * all run under quotas.  The report keeps what the compute measured. */
static double ob_api_quota_compute(struct omnibatch_context *c, double compute)
{
    double before, after, own, need, wall;

    if (!(c->cpu_quota > 0.0)) {
        return compute;
    }
    before = (double) (c->cpu_reduced_ns - c->cpu_begin_ns - c->cpu_blocked_ns) * 1e-9;
    after = ob_api_recent_median(c->cpu_after, &c->cpu_after_n, (double) (ob_cpu_ns() - c->cpu_reduced_ns) * 1e-9);
    own = c->wait_sleep ? ob_api_recent_median(c->cpu_own, &c->cpu_own_n,
                                               (double) (c->cpu_next_step_ns + c->cpu_blocked_ns) * 1e-9)
                        : 0.0;
    need = (before + after + own) / c->cpu_quota;
    wall = ob_api_least_wall(c, compute);

    if (0 != c->cpu_entry_ns) {
        (void) ob_api_recent_median(c->cpu_post, &c->cpu_post_n,
                                    before - (double) (c->cpu_entry_ns - c->cpu_begin_ns) * 1e-9);
    }
    return need > wall ? need : wall;
}

/* The record's blocked time: the mean over the measured steps closed since
 * the last exchange; before any, the last (warm-up) step's, without which
 * the reduction would look free to the first decision, and a change that
 * saves microseconds of compute on a step spent in the reduction would be
 * made. */
static double ob_api_blocked_mean(const struct omnibatch_context *c)
{
    return c->compute_n > 0 ? c->blocked_sum / (double) c->compute_n : c->stats.blocked_s;
}

/* News the other ranks should hear of at once (OMNIBATCH_REACT), from
 * ob_api_sample_add(): a confirmed change of speed, or the model's first
 * sample, so that the first exchange comes at the first measured step, not
 * at step period. */
#define OB_NEWS_CHANGE 1
#define OB_NEWS_FIRST 2

/* A step's sample into \p est (a probe where the rank was \p parked: the
 * only news of its speed); its news (OB_NEWS_*), 0 for none. */
static int ob_api_sample_add(ob_estimator *est, int parked, double batch, double compute)
{
    const int first = 0 == ob_estimator_count(est);
    ob_sample_verdict v = parked ? ob_estimator_add_probe(est, batch, compute) : ob_estimator_add(est, batch, compute);

    if (OB_SAMPLE_CHANGE == v) {
        return OB_NEWS_CHANGE;
    }
    return first && ob_estimator_count(est) > 0 ? OB_NEWS_FIRST : 0;
}

/* ob_api_quota_compute() as it will answer, looked at from the start of the
 * step's first gradient allreduce (CPU \p cpu_now): the CPU to there, the
 * median of the last steps' from there to the reduction's end, the medians
 * of the last steps' after it and in next_step and the waits; nothing
 * written. */
static double ob_api_quota_peek(const struct omnibatch_context *c, double compute, uint64_t cpu_now)
{
    double before, after, own, need, wall;

    if (!(c->cpu_quota > 0.0)) {
        return compute;
    }
    before = (double) (cpu_now - c->cpu_begin_ns - c->cpu_blocked_ns) * 1e-9
             + ob_api_ring_median(c->cpu_post, c->cpu_post_n);
    after = ob_api_ring_median(c->cpu_after, c->cpu_after_n);
    own = c->wait_sleep ? ob_api_ring_median(c->cpu_own, c->cpu_own_n) : 0.0;
    need = (before + after + own) / c->cpu_quota;
    wall = ob_api_least_wall_peek(c, compute);

    return need > wall ? need : wall;
}

void ob_api_step_close(struct omnibatch_context *c)
{
    uint64_t now = ob_now_ns();
    double compute = -1.0;

    if (!c->have_step) {
        return;
    }
    c->last_reductions = c->reductions;
    c->closed_change = 0;
    if (c->markers) {
        if (c->in_mark) {
            c->marked_ns += now - c->mark_begin_ns;
            c->in_mark = 0;
        }
        compute = (double) c->marked_ns * 1e-9;
    } else if (c->reductions > 0) {
        compute = (double) c->unmarked_ns * 1e-9;
    }
    c->stats.blocked_s = (double) c->blocked_ns * 1e-9;
    /* A step whose gradient went through omnibatch_allreduce_gradient is
     * measured exactly here; one whose code reduced by itself is left to the
     * layer's own detection of its MPI calls. */
    if (c->reductions > 0 && compute >= 0.0) {
        ob_step_note note;

        note.batch = c->step.count;
        note.global_batch = c->global_batch;
        note.calls = c->reductions;
        note.compute = compute;
        note.blocked = c->stats.blocked_s;
        note.span = (double) (now - c->step_begin_ns) * 1e-9;
        note.reduction = c->reduction;
        note.plan = c->ctl.plan[c->rank];
        note.alpha = c->last_record.alpha;
        note.beta = c->last_record.beta;
        note.model = c->opt.adaptive && c->last_record.samples > 0;
        ob_hook_note_step(&note);
    }
    if (compute >= 0.0 && c->cpu_plan && c->reductions > 0) {
        ob_api_quota_reread(c, now);
        compute = ob_api_quota_compute(c, compute);
    }
    /* Warm-up steps (cold caches, lazy allocation, first-touch) would teach
     * the model a speed the rank does not have; a rank without samples has
     * nothing to say about its per-sample cost. */
    if (0 == c->step.count && 0 == c->ctl.plan[c->rank]) {
        /* Parked (OMNIBATCH_MIN_BATCH=0): nothing computed, nothing learnt.
         * (The plan, not the count: an epoch's short last step may give a
         * working rank no sample.) */
        c->stats.parked_steps++;
        c->parked = 1;
    }
    if (compute >= 0.0 && c->step.global_step >= c->opt.warmup && c->step.count > 0) {
        const int news = ob_api_sample_add(&c->est, c->parked, (double) c->step.count, compute);

        c->parked = 0;
        if (news) {
            c->speed_changed = 1;
            c->closed_change = 1;
        }
        c->stats.compute_s = compute;
        c->stats.compute_total_s += compute;
        c->compute_sum += compute;
        c->blocked_sum += c->stats.blocked_s;
        c->compute_n++;
    }
    c->have_step = 0;
}

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

int ob_api_next_begin(struct omnibatch_context *c, uint64_t now)
{
    const long gs = c->next_global_step;
    int kind = ob_next_kind(c, gs);
    double compute;
    int adds;
    int dist;
    ob_estimator est;

    if (c->cpu_plan) {
        c->cpu_entry_ns = ob_cpu_ns();
    }
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
    if (OB_API_NEXT_NONE == kind || (1 != c->last_reductions && c->step.global_step > 0)) {
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
    /* The step's measurement as ob_api_step_close() will take it (for a
     * step with one gradient allreduce, the same; with more, the compute
     * after this one is missing), folded into a copy of the model. */
    compute = (double) (c->markers ? c->marked_ns + (c->in_mark ? now - c->mark_begin_ns : 0)
                                   : c->unmarked_ns) * 1e-9;
    if (c->cpu_plan) {
        compute = ob_api_quota_peek(c, compute, c->cpu_entry_ns);
    }
    est = c->est;
    adds = c->step.global_step >= c->opt.warmup && c->step.count > 0;
    c->next.peeked = 0;
    if (adds) {
        int news = ob_api_sample_add(&est, c->parked, (double) c->step.count, compute);

        /* A first sample with no step closed before it goes at the close
         * (the exchange's record needs a step's blocked time, below). */
        c->next.peeked = OB_NEWS_CHANGE == news || (OB_NEWS_FIRST == news && c->step.global_step > 0);
    }
    c->next.flag = OB_API_NEXT_EXCHANGE != kind && (c->speed_changed || c->next.peeked);
    if (!dist) {
        /* The record, also for REACT: the exchange its flags bring forward. */
        double sum = c->compute_sum + (adds ? compute : 0.0);
        long n = c->compute_n + (adds ? 1 : 0);

        ob_controller_record(&c->ctl, c->rank, &est, n > 0 ? sum / (double) n : 0.0, &c->next.mine);
        /* The step's own blocked time is not known yet. */
        c->next.mine.blocked_mean = ob_api_blocked_mean(c);
        ob_cpu_watch_fill(&c->cpu_watch, &c->next.mine);
        c->next.mine.changed = c->next.flag;
    }
    c->next.kind = kind;
    c->next.step = gs;
    c->next.request = MPI_REQUEST_NULL;
    c->next.any = 0;
    return kind;
}

int ob_api_next_post(struct omnibatch_context *c, int carried)
{
    int mpi_rc = MPI_SUCCESS;

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

void ob_api_next_drop(struct omnibatch_context *c)
{
    if (OB_API_NEXT_NONE != c->next.kind) {
        (void) ob_next_finish(c);
    }
}

void ob_api_count_steps(struct omnibatch_context *c)
{
    ob_controller_advance(&c->ctl, c->next_global_step - c->last_exchange_step);
    c->last_exchange_step = c->next_global_step;
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
        mine.blocked_mean = ob_api_blocked_mean(c);
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
    ob_api_count_steps(c);
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

OMNIBATCH_EXPORT int omnibatch_next_step(omnibatch_t ctx, omnibatch_step *step)
{
    const char *fn = "omnibatch_next_step";
    struct omnibatch_context *c = ctx;
    ob_active_batch active;
    uint64_t entry_cpu;
    long gs;
    long k;
    int due;
    int rc;

    rc = ob_api_check_context(fn, c);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == step) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: step=NULL: expected the address of an "
                       "omnibatch_step", fn);
    }
    entry_cpu = c->cpu_plan ? ob_cpu_ns() : 0;
    ob_api_step_close(c);
    /* The step's wall time runs from here to the next call: the exchange
     * and the code's own work after its reduction are in it. */
    c->step_begin_ns = ob_now_ns();

    gs = c->next_global_step;
    {
        uint64_t begin = ob_now_ns();

        if (gs != c->next.step) {
            ob_api_next_drop(c);
        }
        rc = ob_exchange_due(c, gs, &due);
        if (OMNIBATCH_SUCCESS == rc && due) {
            rc = ob_exchange(c);
        }
        /* Started for this step and not used (not due after all): every
         * rank is in the same case. */
        ob_api_next_drop(c);
        /* The layer, timing a code that reduces with its own MPI calls,
         * must not take the exchange, or REACT's flag, for compute
         * (ob_hook.h). */
        ob_hook_note_own(begin, ob_now_ns());
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
    }
    /* The step's CPU under a quota, from here; omnibatch_next_step's own (the
     * exchange's, its wait included) goes with the waits' (ob_api_quota_compute). */
    if (c->cpu_plan) {
        c->cpu_begin_ns = ob_cpu_ns();
        c->cpu_next_step_ns = c->cpu_begin_ns - entry_cpu;
        c->cpu_blocked_ns = 0;
        c->cpu_entry_ns = 0;
    }

    k = gs % c->steps_per_epoch;
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
    /* The one weight of the step: omnibatch_allreduce_gradient() applies
     * it, a code that reduces by itself reads it from the step. */
    if (c->step.count > 0) {
        c->step.scale = (double) c->step.count / (double) c->step.total;
        if (OMNIBATCH_GRAD_DIVIDE_BY_P == c->opt.convention) {
            c->step.scale *= (double) c->nranks;
        }
    }

    active.local = c->step.count;
    active.total = c->step.total;
    active.nranks = c->nranks;
    active.convention = OMNIBATCH_GRAD_DIVIDE_BY_P == c->opt.convention ? OB_CONVENTION_DIVIDE_BY_P
                                                                        : OB_CONVENTION_MEAN;
    active.step = gs;
    active.comm = (uint64_t) (uintptr_t) c->comm;
    ob_active_publish(&active);

    c->next_global_step = gs + 1;
    c->stats.steps = c->next_global_step;
    c->have_step = 1;
    c->reductions = 0;
    c->unmarked_ns = 0;
    c->markers = 0;
    c->in_mark = 0;
    c->marked_ns = 0;
    c->blocked_ns = 0;
    *step = c->step;
    /* Last, so that the library's own work is not the step's compute. */
    c->segment_ns = ob_now_ns();
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_compute_begin(omnibatch_t ctx)
{
    const char *fn = "omnibatch_compute_begin";
    int rc = ob_api_check_context(fn, ctx);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (!ctx->have_step) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no step is running: call omnibatch_next_step "
                       "first", fn);
    }
    if (ctx->in_mark) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: called twice without omnibatch_compute_end", fn);
    }
    ctx->markers = 1;
    ctx->in_mark = 1;
    ctx->mark_begin_ns = ob_now_ns();
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_compute_end(omnibatch_t ctx)
{
    const char *fn = "omnibatch_compute_end";
    uint64_t now = ob_now_ns();
    int rc = ob_api_check_context(fn, ctx);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (!ctx->in_mark) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no omnibatch_compute_begin to end", fn);
    }
    ctx->marked_ns += now - ctx->mark_begin_ns;
    ctx->in_mark = 0;
    return OMNIBATCH_SUCCESS;
}
