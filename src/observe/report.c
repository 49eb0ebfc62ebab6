/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The preload-mode report (ob_report.h): the analysis.  The two writers
 * are in report_write.c.
 *
 * In synchronous SGD every rank's step takes the same wall time, so the
 * step time says nothing about who is slow; the split of that time does.
 * A rank that computes longer blocks less in the allreduces: the straggler
 * is the rank with the most compute and the least blocked time, and the
 * others' blocked time is what it costs them.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_planner.h"
#include "ob_report.h"
#include "ob_starve.h"
#include "omnibatch_status.h"

/* Without a global batch the split is computed on this many notional
 * samples and given as shares (to 0.01%). */
#define OB_REPORT_SHARE_BASIS 10000L
/* A rank measured with no compute at all (its blocked time filled the
 * step) is planned as this fraction of the slowest, not as infinitely fast. */
#define OB_REPORT_COMPUTE_FLOOR 1e-6
/* Ranks that reach the reduction within this share of the step of the
 * last one arrive together (they waited for each other before it). */
#define OB_REPORT_ARRIVAL_TIE 0.02
/* The batch must vary this much (coefficient of variation) before the
 * fixed per-step cost alpha is told apart from the per-sample cost. */
#define OB_REPORT_BATCH_SPREAD 0.05

void ob_rank_stats_init(ob_rank_stats *s, int rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
}

void ob_rank_stats_set_plan(ob_rank_stats *s, long plan, double alpha, double beta)
{
    s->ctl_model = 1;
    s->ctl_plan = plan;
    s->ctl_alpha = alpha;
    s->ctl_beta = beta;
}

void ob_rank_stats_set_cpu(ob_rank_stats *s, const ob_cpu_use *use)
{
    s->cpu_known = 1;
    s->cpu = *use;
}

void ob_rank_stats_add(ob_rank_stats *s, long batch, double compute, double blocked)
{
    ob_rank_stats_add_step(s, batch, compute, blocked, compute + blocked);
}

void ob_rank_stats_add_moved(ob_rank_stats *s, long taken, long given)
{
    if (taken < 0 || given < 0) {
        return;
    }
    s->moved_steps++;
    s->taken_sum += taken;
    s->given_sum += given;
}

void ob_rank_stats_add_step(ob_rank_stats *s, long batch, double compute, double blocked, double step)
{
    double inside = compute + blocked;
    double other = step - inside;

    /* An evaluation or a checkpoint between two steps is not the step's
     * work: a step's other time counts up to OB_REPORT_OTHER_CAP of the rest. */
    other = other > OB_REPORT_OTHER_CAP * inside ? OB_REPORT_OTHER_CAP * inside : other;
    if (0 == batch) {
        s->parked_steps++;
        s->parked_run++;
        s->parked_longest = s->parked_run > s->parked_longest ? s->parked_run : s->parked_longest;
        return;
    }
    s->parked_run = 0;
    s->steps++;
    s->step_sum += other > 0.0 ? inside + other : inside;
    s->compute_sum += compute;
    s->blocked_sum += blocked;
    if (batch >= 0) {
        double b = (double) batch;

        s->batch_steps++;
        s->batch_sum += b;
        s->batch_sq_sum += b * b;
        s->batch_compute_sum += b * compute;
        s->compute_batched_sum += compute;
    }
}

/* The rank's model t = alpha + beta * b from its (batch, compute) sums:
 * least squares when the batch varied enough, else alpha = 0. */
static int ob_report_fit(const ob_rank_stats *s, double *alpha, double *beta)
{
    double n = (double) s->batch_steps;
    double mb, mc, var, cov;

    if (s->batch_steps <= 0) {
        return 0;
    }
    mb = s->batch_sum / n;
    mc = s->compute_batched_sum / n;
    if (!(mb > 0.0) || !(mc > 0.0)) {
        return 0;
    }
    var = s->batch_sq_sum / n - mb * mb;
    cov = s->batch_compute_sum / n - mb * mc;
    if (var > (OB_REPORT_BATCH_SPREAD * mb) * (OB_REPORT_BATCH_SPREAD * mb) && cov > 0.0
        && mc - (cov / var) * mb >= 0.0) {
        *beta = cov / var;
        *alpha = mc - *beta * mb;
    } else {
        *alpha = 0.0;
        *beta = mc / mb;
    }
    return 1;
}

/* Every rank's bounds for a split of B, and its granularity: in samples
 * the API's (unset: 1, B and 1); in shares none. */
static long ob_report_bounds(const ob_report *rep, long B, ob_rank_model *m)
{
    const ob_report_settings *s = &rep->settings;
    int in_samples = rep->global_batch > 0;
    long lo = in_samples && s->min_batch > 1 ? s->min_batch : 1;
    long hi = in_samples && s->max_batch > 0 && s->max_batch < B ? s->max_batch : B;

    for (int i = 0; i < rep->nranks; i++) {
        m[i].lo = lo;
        m[i].hi = hi;
    }
    return in_samples && s->granularity > 1 ? s->granularity : 1;
}

/* The split in samples, and its predicted step time: the plan's own,
 * granules included, not the continuous optimum's. */
static int ob_report_round(const ob_rank_model *m, int P, long B, long granularity,
                           const double *target, long *plan, double *T)
{
    int rc = ob_plan_round(m, P, B, granularity, target, plan);

    if (OMNIBATCH_SUCCESS == rc) {
        *T = ob_plan_step_time(m, P, plan);
    }
    return rc;
}

/* Each rank's model of compute into \p m, and the global batch of the
 * split into *B (rep->global_batch: 0 when only shares are known); 0 with
 * rep->split_error when a rank has no usable model. */
static int ob_report_models(ob_report *rep, ob_rank_model *m, long *B)
{
    int P = rep->nranks;

    if (rep->batch_known) {
        double sum = 0.0;

        for (int i = 0; i < P; i++) {
            sum += rep->ranks[i].batch;
        }
        *B = rep->settings.global_batch > 0 ? rep->settings.global_batch : lround(sum);
        rep->global_batch = *B;
        for (int i = 0; i < P; i++) {
            if (!ob_report_fit(&rep->stats[i], &m[i].alpha, &m[i].beta)) {
                snprintf(rep->split_error, sizeof rep->split_error,
                         "rank %d: no usable (batch, compute) pairs", i);
                return 0;
            }
        }
    } else {
        /* Every rank ran the same share: beta_i proportional to compute_i. */
        double floor_compute = OB_REPORT_COMPUTE_FLOOR * rep->ranks[rep->slowest].compute;

        *B = rep->settings.global_batch > 0 ? rep->settings.global_batch : OB_REPORT_SHARE_BASIS;
        rep->global_batch = rep->settings.global_batch > 0 ? *B : 0;
        for (int i = 0; i < P; i++) {
            double c = rep->ranks[i].compute > floor_compute ? rep->ranks[i].compute : floor_compute;

            m[i].alpha = 0.0;
            m[i].beta = c * (double) P / (double) *B;
        }
    }
    return 1;
}

/* A code on the API: the controller's plan and models, when every rank
 * has them and the plan is a split of the global batch (ob_report.h);
 * 0 otherwise. */
static int ob_report_controller_split(ob_report *rep, ob_rank_model *m, long *plan)
{
    long B = rep->settings.global_batch, sum = 0;

    if (!rep->settings.steps_from_api || B <= 0) {
        return 0;
    }
    for (int i = 0; i < rep->nranks; i++) {
        const ob_rank_stats *s = &rep->stats[i];

        if (!s->ctl_model || s->ctl_plan < 0 || !(s->ctl_alpha >= 0.0) || !(s->ctl_beta >= 0.0)) {
            return 0;
        }
        m[i].alpha = s->ctl_alpha;
        m[i].beta = s->ctl_beta;
        plan[i] = (long) s->ctl_plan;
        sum += plan[i];
    }
    if (sum != B) {
        return 0;
    }
    rep->global_batch = B;
    rep->split_from_controller = 1;
    return 1;
}

/* An unmodified code: each rank's model fitted to its measured steps,
 * and the planner's water-filling split of it into \p plan (in samples
 * when the global batch is known) and \p target, its step time *T; 0 with
 * rep->split_error when there is none. */
static int ob_report_fitted_split(ob_report *rep, ob_rank_model *m, double *target, long *plan,
                                  long *B, double *T)
{
    int P = rep->nranks;
    long granularity;
    int rc;

    if (!ob_report_models(rep, m, B)) {
        return 0;
    }
    granularity = ob_report_bounds(rep, *B, m);
    rc = ob_plan_optimum(m, P, *B, target, T);
    if (OMNIBATCH_SUCCESS == rc && rep->global_batch > 0) {
        rc = ob_report_round(m, P, *B, granularity, target, plan, T);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        snprintf(rep->split_error, sizeof rep->split_error, "%s", ob_last_error());
        return 0;
    }
    return 1;
}

/*
 * What stays of "other" (time outside compute and the gradient allreduces)
 * once the ranks are balanced: that of the last rank to reach the
 * reduction (the most compute + other), among ranks arriving together the
 * one with the most compute.  A code that waits for the others outside the
 * allreduce (a barrier before it, a rank's own polling) has that wait in
 * its "other"; the rank everyone waits for waits for nobody, so its other
 * is its own work.  The largest other of any rank would count the fast
 * ranks' wait as work that balancing cannot remove.
 */
static double ob_report_other_after(const ob_report *rep)
{
    int k = -1;
    double last = 0.0, cut;

    for (int i = 0; i < rep->nranks; i++) {
        double a = rep->ranks[i].compute + rep->ranks[i].other;

        last = a > last ? a : last;
    }
    cut = last - OB_REPORT_ARRIVAL_TIE * rep->step_now;
    for (int i = 0; i < rep->nranks; i++) {
        const ob_report_rank *r = &rep->ranks[i];

        if (r->compute + r->other >= cut && (k < 0 || r->compute > rep->ranks[k].compute)) {
            k = i;
        }
    }
    return k < 0 ? 0.0 : rep->ranks[k].other;
}

static void ob_report_split(ob_report *rep)
{
    int P = rep->nranks;
    ob_rank_model *m = calloc((size_t) P, sizeof *m);
    double *target = calloc((size_t) P, sizeof *target);
    long *plan = calloc((size_t) P, sizeof *plan);
    long B = 0;
    double T = 0.0;

    if (NULL == m || NULL == target || NULL == plan) {
        snprintf(rep->split_error, sizeof rep->split_error, "out of memory");
        goto done;
    }
    if (ob_report_controller_split(rep, m, plan)) {
        B = rep->global_batch;
        T = ob_plan_step_time(m, P, plan);
        for (int i = 0; i < P; i++) {
            target[i] = (double) plan[i];
        }
    } else if (!ob_report_fitted_split(rep, m, target, plan, &B, &T)) {
        goto done;
    }
    for (int i = 0; i < P; i++) {
        rep->ranks[i].alpha = m[i].alpha;
        rep->ranks[i].beta = m[i].beta;
        rep->ranks[i].share = target[i] / (double) B;
        rep->ranks[i].plan = rep->global_batch > 0 ? plan[i] : -1;
    }
    /* The reduction is what the allreduces cost when nobody waits for
     * anybody, and what the last rank does outside compute and the
     * allreduces does not scale with its batch: both stay after balancing;
     * so do a starved rank's stalls, which no split removes. */
    rep->step_balanced = T + rep->least_blocked + ob_report_other_after(rep);
    rep->speedup = rep->step_balanced > 0.0 ? rep->step_predicted / rep->step_balanced : (double) NAN;
    rep->max_gain = rep->step_predicted > 0.0 ? 1.0 - rep->step_balanced / rep->step_predicted : 0.0;
    rep->split_ok = 1;

done:
    free(m);
    free(target);
    free(plan);
}

/* The step model (ob_report.h): the reduction is the least blocked time,
 * each rank's less the share a starved rank lost to its stalls; each
 * rank's wait is the rest of its blocked time beyond the least; the step
 * predicted now is the last rank to reach the reduction (compute and
 * other) plus the least blocked time (the stalls are in the step). */
static void ob_report_step_model(ob_report *rep)
{
    double least = rep->ranks[0].blocked, R = -1.0, last = 0.0, mean_step = 0.0;

    for (int i = 0; i < rep->nranks; i++) {
        const ob_report_rank *r = &rep->ranks[i];
        double own = r->blocked * (1.0 - r->lost);

        least = r->blocked < least ? r->blocked : least;
        R = R < 0.0 || own < R ? own : R;
    }
    for (int i = 0; i < rep->nranks; i++) {
        ob_report_rank *r = &rep->ranks[i];
        double arrive = r->compute + r->other;

        r->reduction = R;
        r->stalled = least - R;
        r->wait = r->blocked - least;
        r->waiting = r->step > 0.0 ? r->wait / r->step : 0.0;
        last = arrive > last ? arrive : last;
        mean_step += r->step;
    }
    rep->reduction = R;
    rep->least_blocked = least;
    rep->stalled = least - R;
    rep->step_now = mean_step / rep->nranks;
    rep->step_predicted = last + least;
    rep->reduction_share = rep->step_now > 0.0 ? R / rep->step_now : 0.0;
}

/* Each rank's CPU shares from its sums (ob_cpuuse.h), or unknown. */
static void ob_report_cpu_shares(const ob_rank_stats *s, ob_report_rank *r)
{
    r->cpu_share = (double) NAN;
    r->throttled_share = r->held_share = r->wait_share = -1.0;
    if (s->cpu_known) {
        r->cpu_share = ob_cpu_use_cpu_share(&s->cpu);
        r->throttled_share = ob_cpu_use_throttled_share(&s->cpu);
        r->held_share = ob_cpu_use_held_share(&s->cpu);
        r->wait_share = ob_cpu_use_wait_share(&s->cpu);
    }
}

static int ob_report_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;

    return (x > y) - (x < y);
}

/* The usual rank's wait for a CPU: the lower median of the known waits of
 * the ranks no quota starved (of all ranks when the quota starved every
 * one), < 0 when none is known.  The median, not the least: three ranks
 * polling on two cores are not shared out evenly over a short run (25%,
 * 33% and 52% of their ready time), and the least of them made the unlucky
 * one look starved by its neighbours; a rank on busier cores than most is
 * still singled out.  Not a rank its quota stops: ready to run only in the
 * short stretches its budget allows, it waits little there (37% against
 * the others' 65%).  Two ranks: the lower is the median. */
static double ob_report_usual_wait(const ob_report *rep)
{
    double *waits = malloc((size_t) rep->nranks * sizeof *waits);
    double usual = -1.0;
    int n = 0;

    if (NULL == waits) {
        return -1.0;    /* no contention judged; the quota still is */
    }
    for (int pass = 0; pass < 2 && 0 == n; pass++) {
        for (int i = 0; i < rep->nranks; i++) {
            const ob_report_rank *r = &rep->ranks[i];

            if (r->wait_share >= 0.0 && (1 == pass || r->throttled_share < OB_STARVED_THROTTLED)) {
                waits[n++] = r->wait_share;
            }
        }
    }
    if (n > 0) {
        qsort(waits, (size_t) n, sizeof *waits, ob_report_cmp_double);
        usual = waits[(n - 1) / 2];
    }
    free(waits);
    return usual;
}

/* The ranks the CPU starved and what they lost (ob_starve.h), and the one
 * that lost most.  Before the step model, which takes their stalls out. */
static void ob_report_find_starved(ob_report *rep)
{
    rep->usual_wait = ob_report_usual_wait(rep);
    rep->most_starved = -1;
    for (int i = 0; i < rep->nranks; i++) {
        ob_report_rank *r = &rep->ranks[i];

        r->lost = ob_starved_share(r->throttled_share, r->held_share, r->wait_share, rep->usual_wait,
                                   &r->starved_by);
        if (0 == r->starved_by) {
            continue;
        }
        rep->starved[rep->nstarved++] = i;
        if (rep->most_starved < 0 || r->lost > rep->ranks[rep->most_starved].lost) {
            rep->most_starved = i;
        }
    }
}

/* What the most starved rank's stalls take of the step: in synchronous
 * SGD every rank waits for them.  After the step model. */
static void ob_report_starved_cost(ob_report *rep)
{
    if (rep->most_starved >= 0) {
        const ob_report_rank *r = &rep->ranks[rep->most_starved];

        rep->starved_step_s = r->lost * r->step;
        rep->starved_share = rep->step_now > 0.0 ? rep->starved_step_s / rep->step_now : 0.0;
    }
}

/* The rank the others wait for (the least blocked) when its extra compute
 * does not explain their wait: its reduction is what they wait for, and
 * its host's link is slow (ob_report.h); -1 otherwise. */
static int ob_report_find_slow_link(const ob_report *rep, double *others_wait)
{
    int P = rep->nranks, k = 0;
    double wait = 0.0, compute = 0.0;

    if (P < 2) {
        return -1;
    }
    for (int i = 1; i < P; i++) {
        k = rep->ranks[i].blocked < rep->ranks[k].blocked ? i : k;
    }
    /* A starved rank's stalls, not its link, are what the others wait for. */
    if (0 != rep->ranks[k].starved_by) {
        return -1;
    }
    for (int i = 0; i < P; i++) {
        if (i != k) {
            wait += rep->ranks[i].wait / (P - 1);
            compute += rep->ranks[i].compute / (P - 1);
        }
    }
    if (wait >= OB_REPORT_LINK_WAIT * rep->step_now
        && rep->ranks[k].compute - compute < OB_REPORT_LINK_EXPLAINED * wait) {
        *others_wait = rep->step_now > 0.0 ? wait / rep->step_now : 0.0;
        return k;
    }
    return -1;
}

/* The verdict (ob_report.h). */
static void ob_report_judge(ob_report *rep)
{
    int gains = rep->split_ok ? rep->max_gain >= OB_REPORT_MIN_GAIN : rep->nstragglers > 0;

    rep->slow_link = ob_report_find_slow_link(rep, &rep->others_link_wait);
    if (gains) {
        rep->verdict = OB_VERDICT_COMPUTE_IMBALANCED;
    } else if (rep->nstarved > 0) {
        rep->verdict = OB_VERDICT_CPU_STARVED;
    } else if (rep->reduction_share >= OB_REPORT_COMM_SHARE) {
        rep->verdict = OB_VERDICT_COMMUNICATION_BOUND;
    } else {
        rep->verdict = OB_VERDICT_BALANCED;
    }
}

/* Each rank's means per step; rep->measured = 0 when a rank measured none. */
static void ob_report_rank_means(ob_report *rep)
{
    rep->measured = 1;
    rep->batch_known = 1;
    rep->steps = -1;
    for (int i = 0; i < rep->nranks; i++) {
        const ob_rank_stats *s = &rep->stats[i];
        ob_report_rank *r = &rep->ranks[i];

        r->plan = -1;
        r->batch = (double) NAN;
        r->share = (double) NAN;
        ob_report_cpu_shares(s, r);
        if (s->steps <= 0) {
            rep->measured = 0;
            r->compute = r->blocked = r->waiting = (double) NAN;
            r->step = r->reduction = r->wait = r->other = (double) NAN;
            continue;
        }
        r->compute = s->compute_sum / (double) s->steps;
        r->blocked = s->blocked_sum / (double) s->steps;
        r->step = s->step_sum / (double) s->steps;
        r->other = r->step - r->compute - r->blocked > 0.0 ? r->step - r->compute - r->blocked : 0.0;
        if (s->batch_steps > 0) {
            r->batch = s->batch_sum / (double) s->batch_steps;
        } else {
            rep->batch_known = 0;
        }
        if (rep->steps < 0 || s->steps < rep->steps) {
            rep->steps = s->steps;
        }
    }
}

/* The slowest and fastest ranks by compute, the stragglers, and how long
 * the others wait. */
static void ob_report_find_stragglers(ob_report *rep)
{
    int nranks = rep->nranks, nothers = 0;
    double sum = 0.0, waiting = 0.0;

    for (int i = 0; i < nranks; i++) {
        const ob_report_rank *r = &rep->ranks[i];

        sum += r->compute;
        if (r->compute > rep->ranks[rep->slowest].compute) {
            rep->slowest = i;
        }
        if (r->compute < rep->ranks[rep->fastest].compute) {
            rep->fastest = i;
        }
    }
    rep->imbalance = sum > 0.0 ? rep->ranks[rep->slowest].compute / (sum / nranks) : 1.0;
    rep->spread = rep->ranks[rep->fastest].compute > 0.0
                ? rep->ranks[rep->slowest].compute / rep->ranks[rep->fastest].compute
                : (double) INFINITY;
    if (rep->spread >= OB_REPORT_STRAGGLER_RATIO) {
        double cut = OB_REPORT_STRAGGLER_GROUP * rep->ranks[rep->slowest].compute;

        for (int i = 0; i < nranks; i++) {
            if (rep->ranks[i].compute >= cut) {
                rep->stragglers[rep->nstragglers++] = i;
            }
        }
    }
    for (int i = 0, k = 0; i < nranks; i++) {
        if (k < rep->nstragglers && rep->stragglers[k] == i) {
            k++;
            continue;
        }
        waiting += rep->ranks[i].waiting;
        nothers++;
    }
    rep->others_waiting = nothers > 0 ? waiting / nothers : 0.0;
}

int ob_report_analyse(const ob_rank_stats *stats, int nranks, const ob_report_settings *settings,
                      ob_report *rep)
{
    if (NULL == rep || NULL == stats || NULL == settings || nranks < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "ob_report_analyse: nranks=%d, stats and rep must be given",
                       nranks);
    }
    memset(rep, 0, sizeof *rep);
    rep->nranks = nranks;
    rep->stats = stats;
    rep->settings = *settings;
    rep->ranks = calloc((size_t) nranks, sizeof *rep->ranks);
    rep->stragglers = calloc((size_t) nranks, sizeof *rep->stragglers);
    rep->starved = calloc((size_t) nranks, sizeof *rep->starved);
    if (NULL == rep->ranks || NULL == rep->stragglers || NULL == rep->starved) {
        ob_report_free(rep);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "report: no memory for %d ranks", nranks);
    }
    ob_report_rank_means(rep);
    rep->slow_link = -1;
    rep->most_starved = -1;
    if (!rep->measured) {
        rep->batch_known = 0;
        return OMNIBATCH_SUCCESS;
    }
    ob_report_find_starved(rep);
    ob_report_step_model(rep);
    ob_report_starved_cost(rep);
    ob_report_find_stragglers(rep);
    ob_report_split(rep);
    ob_report_judge(rep);
    return OMNIBATCH_SUCCESS;
}

const char *ob_report_verdict_name(ob_report_verdict v)
{
    switch (v) {
    case OB_VERDICT_BALANCED:
        return "balanced";
    case OB_VERDICT_COMPUTE_IMBALANCED:
        return "compute-imbalanced";
    case OB_VERDICT_COMMUNICATION_BOUND:
        return "communication-bound";
    case OB_VERDICT_CPU_STARVED:
        return "cpu-starved";
    default:
        return "none";
    }
}

void ob_report_free(ob_report *rep)
{
    if (NULL == rep) {
        return;
    }
    free(rep->ranks);
    free(rep->stragglers);
    free(rep->starved);
    rep->ranks = NULL;
    rep->stragglers = NULL;
    rep->starved = NULL;
}
