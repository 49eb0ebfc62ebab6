/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The preload-mode report (ob_report.h): analysis and the two writers.
 *
 * In synchronous SGD every rank's step takes the same wall time, so the
 * step time says nothing about who is slow; the split of that time does.
 * A rank that computes longer blocks less in the allreduces: the straggler
 * is the rank with the most compute and the least blocked time, and the
 * others' blocked time is what it costs them.
 */
#include "config.h"

#include <errno.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_planner.h"
#include "ob_report.h"
#include "omnibatch_status.h"

/* Without a global batch the split is computed on this many notional
 * samples and given as shares (to 0.01%). */
#define OB_REPORT_SHARE_BASIS 10000L
/* A rank measured with no compute at all (its blocked time filled the
 * step) is planned as this fraction of the slowest, not as infinitely fast. */
#define OB_REPORT_COMPUTE_FLOOR 1e-6
/* The batch must vary this much (coefficient of variation) before the
 * fixed per-step cost alpha is told apart from the per-sample cost. */
#define OB_REPORT_BATCH_SPREAD 0.05

void ob_rank_stats_init(ob_rank_stats *s, int rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
}

void ob_rank_stats_add(ob_rank_stats *s, long batch, double compute, double blocked)
{
    ob_rank_stats_add_step(s, batch, compute, blocked, compute + blocked);
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

static void ob_report_split(ob_report *rep)
{
    int P = rep->nranks;
    ob_rank_model *m = calloc((size_t) P, sizeof *m);
    double *target = calloc((size_t) P, sizeof *target);
    long *plan = calloc((size_t) P, sizeof *plan);
    long B = 0, granularity;
    double T = 0.0, other = 0.0;
    int rc;

    if (NULL == m || NULL == target || NULL == plan) {
        snprintf(rep->split_error, sizeof rep->split_error, "out of memory");
        goto done;
    }
    if (!ob_report_models(rep, m, &B)) {
        goto done;
    }
    granularity = ob_report_bounds(rep, B, m);
    for (int i = 0; i < P; i++) {
        rep->ranks[i].alpha = m[i].alpha;
        rep->ranks[i].beta = m[i].beta;
        other = rep->ranks[i].other > other ? rep->ranks[i].other : other;
    }
    rc = ob_plan_optimum(m, P, B, target, &T);
    if (OMNIBATCH_SUCCESS == rc && rep->global_batch > 0) {
        rc = ob_report_round(m, P, B, granularity, target, plan, &T);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        snprintf(rep->split_error, sizeof rep->split_error, "%s", ob_last_error());
        goto done;
    }
    for (int i = 0; i < P; i++) {
        rep->ranks[i].share = target[i] / (double) B;
        rep->ranks[i].plan = rep->global_batch > 0 ? plan[i] : -1;
    }
    /* The reduction is what the allreduces cost when nobody waits for
     * anybody, and what a rank does outside compute and the allreduces does
     * not scale with its batch: both stay after balancing. */
    rep->step_balanced = T + rep->reduction + other;
    rep->speedup = rep->step_balanced > 0.0 ? rep->step_predicted / rep->step_balanced : (double) NAN;
    rep->max_gain = rep->step_predicted > 0.0 ? 1.0 - rep->step_balanced / rep->step_predicted : 0.0;
    rep->split_ok = 1;

done:
    free(m);
    free(target);
    free(plan);
}

/* The step model (ob_report.h): the reduction is the least blocked time;
 * each rank's wait is the rest of its blocked time; the step predicted now
 * is the last rank to reach the reduction (compute and other) plus it. */
static void ob_report_step_model(ob_report *rep)
{
    double R = rep->ranks[0].blocked, last = 0.0, mean_step = 0.0;

    for (int i = 1; i < rep->nranks; i++) {
        R = rep->ranks[i].blocked < R ? rep->ranks[i].blocked : R;
    }
    for (int i = 0; i < rep->nranks; i++) {
        ob_report_rank *r = &rep->ranks[i];
        double arrive = r->compute + r->other;

        r->reduction = R;
        r->wait = r->blocked - R;
        r->waiting = r->step > 0.0 ? r->wait / r->step : 0.0;
        last = arrive > last ? arrive : last;
        mean_step += r->step;
    }
    rep->reduction = R;
    rep->step_now = mean_step / rep->nranks;
    rep->step_predicted = last + R;
    rep->reduction_share = rep->step_now > 0.0 ? R / rep->step_now : 0.0;
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
    if (NULL == rep->ranks || NULL == rep->stragglers) {
        ob_report_free(rep);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "report: no memory for %d ranks", nranks);
    }
    ob_report_rank_means(rep);
    rep->slow_link = -1;
    if (!rep->measured) {
        rep->batch_known = 0;
        return OMNIBATCH_SUCCESS;
    }
    ob_report_step_model(rep);
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
    rep->ranks = NULL;
    rep->stragglers = NULL;
}

/* ------------------------------------------------------------------- text */

/* "0,1,3" or "0-5,7": runs of three or more as ranges. */
static void ob_report_list(FILE *f, const int *v, int n)
{
    for (int i = 0; i < n;) {
        int j = i;

        while (j + 1 < n && v[j + 1] == v[j] + 1) {
            j++;
        }
        fprintf(f, "%s", i > 0 ? "," : "");
        if (j - i >= 2) {
            fprintf(f, "%d-%d", v[i], v[j]);
            i = j + 1;
        } else {
            fprintf(f, "%d", v[i]);
            i++;
        }
    }
}

/* Whether straggler k runs on a host no earlier straggler runs on. */
static int ob_report_new_host(const ob_report *rep, int k)
{
    const char *host = rep->stats[rep->stragglers[k]].host;

    for (int j = 0; j < k; j++) {
        if (0 == strcmp(host, rep->stats[rep->stragglers[j]].host)) {
            return 0;
        }
    }
    return 1;
}

static void ob_report_text_header(FILE *f, const ob_report *rep)
{
    long cps = rep->stats[0].calls_per_step;

    fprintf(f, "omnibatch: report: %d rank%s", rep->nranks, 1 == rep->nranks ? "" : "s");
    if (rep->measured) {
        fprintf(f, ", %ld measured step%s per rank (after %ld warm-up)", rep->steps,
                1 == rep->steps ? "" : "s", rep->settings.warmup);
    }
    if (cps > 0) {
        fprintf(f, ", %ld gradient allreduce%s per step (%s)", cps, 1 == cps ? "" : "s",
                rep->settings.steps_from_api ? "omnibatch API"
                : rep->settings.calls_per_step_given > 0 ? "OMNIBATCH_CALLS_PER_STEP" : "detected");
    }
    fprintf(f, "\n");
    fprintf(f, "  %5s  %-20s %5s %5s %9s %10s %10s %11s %10s %8s\n", "rank", "host", "cores", "gpus", "batch",
            "compute_s", "blocked_s", "reduction_s", "waiting_s", "waiting");
    for (int i = 0; i < rep->nranks; i++) {
        const ob_rank_stats *s = &rep->stats[i];
        const ob_report_rank *r = &rep->ranks[i];
        char batch[32] = "-";

        if (isfinite(r->batch)) {
            snprintf(batch, sizeof batch, "%.1f", r->batch);
        }
        if (s->steps > 0) {
            fprintf(f, "  %5d  %-20.20s %5d %5d %9s %10.6f %10.6f %11.6f %10.6f %7.1f%%\n", i, s->host,
                    s->cores, s->gpus, batch, r->compute, r->blocked, r->reduction, r->wait, 100.0 * r->waiting);
        } else {
            fprintf(f, "  %5d  %-20.20s %5d %5d %9s %10s %10s %11s %10s %8s\n", i, s->host, s->cores, s->gpus,
                    "-", "-", "-", "-", "-", "-");
        }
    }
}

static void ob_report_text_split(FILE *f, const ob_report *rep)
{
    if (!rep->split_ok) {
        fprintf(f, "  no balanced split: %s\n", rep->split_error);
        return;
    }
    if (rep->global_batch > 0) {
        fprintf(f, "  balanced split of the global batch %ld:", rep->global_batch);
        for (int i = 0; i < rep->nranks; i++) {
            fprintf(f, " %ld", rep->ranks[i].plan);
        }
        if (rep->batch_known) {
            fprintf(f, " (now");
            for (int i = 0; i < rep->nranks; i++) {
                fprintf(f, " %.0f", rep->ranks[i].batch);
            }
            fprintf(f, ")");
        }
        fprintf(f, "\n");
    } else {
        fprintf(f, "  balanced split, in shares of the global batch (OMNIBATCH_GLOBAL_BATCH gives sizes):");
        for (int i = 0; i < rep->nranks; i++) {
            fprintf(f, " %.1f%%", 100.0 * rep->ranks[i].share);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "  predicted step time, reduction included: %.6f s now (measured %.6f s), %.6f s with "
            "that split (%.2fx faster)\n", rep->step_predicted, rep->step_now, rep->step_balanced, rep->speedup);
}

/* The verdict line, and the slow link when there is one. */
static void ob_report_text_verdict(FILE *f, const ob_report *rep)
{
    double gain = rep->max_gain > 0.0 ? rep->max_gain : 0.0;

    fprintf(f, "  verdict: %s: ", ob_report_verdict_name(rep->verdict));
    if (OB_VERDICT_COMPUTE_IMBALANCED == rep->verdict && rep->split_ok) {
        fprintf(f, "the split above makes the step %.6f s, reduction included (%.2fx faster)", rep->step_balanced,
                rep->speedup);
    } else if (OB_VERDICT_COMPUTE_IMBALANCED == rep->verdict) {
        fprintf(f, "rank %d computes %.1fx as long as the fastest", rep->slowest, rep->spread);
    } else {
        fprintf(f, "the reduction is %.0f%% of the step (%.6f s of %.6f s)", 100.0 * rep->reduction_share,
                rep->reduction, rep->step_now);
        if (rep->split_ok) {
            fprintf(f, "; rebalancing the batch can win at most %.0f%%", 100.0 * gain);
        }
    }
    fprintf(f, "\n");
    if (rep->slow_link >= 0) {
        fprintf(f, "  slow link: host %s (rank %d): the other ranks wait %.0f%% of the step for its reduction, "
                "not for its compute\n", rep->stats[rep->slow_link].host, rep->slow_link,
                100.0 * rep->others_link_wait);
    }
}

/* The ranks that measured nothing, and why that can be. */
static void ob_report_text_unmeasured(FILE *f, const ob_report *rep)
{
    int *missing = malloc((size_t) rep->nranks * sizeof *missing);
    int n = 0;

    for (int i = 0; NULL != missing && i < rep->nranks; i++) {
        if (rep->stats[i].steps <= 0) {
            missing[n++] = i;
        }
    }
    fprintf(f, "  no training step measured on rank%s ", 1 == n ? "" : "s");
    ob_report_list(f, missing, n);
    fprintf(f, ": no float or double MPI_SUM allreduce of at least %zu bytes repeated there "
            "(OMNIBATCH_MIN_BYTES)", rep->settings.min_bytes);
    if (rep->settings.warmup > 0) {
        fprintf(f, " after the %ld warm-up steps (OMNIBATCH_WARMUP)", rep->settings.warmup);
    }
    fprintf(f, "\n");
    free(missing);
}

/* " (host a, b)": each straggler's host once ("hosts vm, vm" says nothing
 * "host vm" does not). */
static void ob_report_text_hosts(FILE *f, const ob_report *rep)
{
    int nhosts = 0;

    for (int k = 0; k < rep->nstragglers; k++) {
        nhosts += ob_report_new_host(rep, k);
    }
    fprintf(f, " (host%s", 1 == nhosts ? "" : "s");
    for (int k = 0, shown = 0; k < rep->nstragglers; k++) {
        if (ob_report_new_host(rep, k)) {
            fprintf(f, "%s %s", shown++ > 0 ? "," : "", rep->stats[rep->stragglers[k]].host);
        }
    }
    fprintf(f, ")");
}

/* The stragglers' line: who, how much longer, and how long the others wait. */
static void ob_report_text_stragglers(FILE *f, const ob_report *rep)
{
    int nothers = rep->nranks - rep->nstragglers;
    int *others = malloc((size_t) (nothers > 0 ? nothers : 1) * sizeof *others);
    int one = 1 == rep->nstragglers;

    for (int i = 0, k = 0, o = 0; NULL != others && i < rep->nranks; i++) {
        if (k < rep->nstragglers && rep->stragglers[k] == i) {
            k++;
        } else {
            others[o++] = i;
        }
    }
    fprintf(f, "  rank%s ", one ? "" : "s");
    ob_report_list(f, rep->stragglers, rep->nstragglers);
    ob_report_text_hosts(f, rep);
    fprintf(f, " %s: %s %.1fx as long as the fastest", one ? "is the straggler" : "are the stragglers",
            one ? "it computes" : "they compute",
            rep->ranks[rep->slowest].compute / rep->ranks[rep->fastest].compute);
    if (nothers > 0 && NULL != others) {
        fprintf(f, "; rank%s ", 1 == nothers ? "" : "s");
        ob_report_list(f, others, nothers);
        fprintf(f, " wait%s %.0f%% of %s step", 1 == nothers ? "s" : "", 100.0 * rep->others_waiting,
                1 == nothers ? "its" : "their");
    }
    fprintf(f, "\n");
    free(others);
}

/* Ranks parked at batch 0 (OMNIBATCH_MIN_BATCH=0), and for how long. */
static void ob_report_text_parked(FILE *f, const ob_report *rep)
{
    for (int i = 0; i < rep->nranks; i++) {
        const ob_rank_stats *s = &rep->stats[i];

        if (s->parked_steps > 0) {
            fprintf(f, "  parked: rank %d (%s) at batch 0 for %lld step%s, the longest stretch %lld\n", i,
                    s->host, (long long) s->parked_steps, 1 == s->parked_steps ? "" : "s",
                    (long long) s->parked_longest);
        }
    }
}

int ob_report_write_text(FILE *f, const ob_report *rep)
{
    ob_report_text_header(f, rep);
    if (!rep->measured) {
        ob_report_text_unmeasured(f, rep);
    } else {
        fprintf(f, "  imbalance: max/mean compute %.2f, slowest/fastest %.2fx\n", rep->imbalance,
                rep->spread);
        if (0 == rep->nstragglers) {
            fprintf(f, "  no straggler: every rank computes within %.0f%% of the fastest; "
                    "the ranks wait %.0f%% of their step on average\n",
                    100.0 * (OB_REPORT_STRAGGLER_RATIO - 1.0), 100.0 * rep->others_waiting);
        } else {
            ob_report_text_stragglers(f, rep);
        }
        ob_report_text_split(f, rep);
        ob_report_text_verdict(f, rep);
    }
    ob_report_text_parked(f, rep);
    if (rep->settings.trace_dropped > 0) {
        fprintf(f, "  trace: %ld step rows past the memory cap were not written\n",
                rep->settings.trace_dropped);
    }
    if (0 != fflush(f) || ferror(f)) {
        return ob_fail(OMNIBATCH_ERR_IO, "%s", strerror(errno));
    }
    return OMNIBATCH_SUCCESS;
}

/* ------------------------------------------------------------------- JSON */

static void ob_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; '\0' != *s; s++) {
        unsigned char c = (unsigned char) *s;

        if ('"' == c || '\\' == c) {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

/* JSON has no NaN or infinity: null. */
static void ob_json_number(FILE *f, double x)
{
    if (isfinite(x)) {
        fprintf(f, "%.9g", x);
    } else {
        fprintf(f, "null");
    }
}

static void ob_json_key_number(FILE *f, const char *key, double x, const char *after)
{
    fprintf(f, "\"%s\": ", key);
    ob_json_number(f, x);
    fprintf(f, "%s", after);
}

/* The step model's figures and the verdict, each line followed by ",\n  ". */
static void ob_report_json_verdict(FILE *f, const ob_report *rep)
{
    double nan = (double) NAN;

    ob_json_key_number(f, "predicted_now_s", rep->measured ? rep->step_predicted : nan, ",\n  ");
    ob_json_key_number(f, "reduction_s", rep->measured ? rep->reduction : nan, ",\n  ");
    ob_json_key_number(f, "reduction_share", rep->measured ? rep->reduction_share : nan, ",\n  ");
    ob_json_key_number(f, "max_gain", rep->split_ok ? rep->max_gain : nan, ",\n  ");
    fprintf(f, "\"verdict\": \"%s\",\n  \"slowest_host\": ", ob_report_verdict_name(rep->verdict));
    if (rep->measured) {
        ob_json_string(f, rep->stats[rep->slowest].host);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"slow_link_host\": ");
    if (rep->slow_link >= 0) {
        ob_json_string(f, rep->stats[rep->slow_link].host);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  ");
}

int ob_report_write_json(FILE *f, const ob_report *rep)
{
    fprintf(f, "{\n  \"omnibatch_version\": \"%s\",\n", OMNIBATCH_VERSION_STRING);
    fprintf(f, "  \"ranks\": %d,\n  \"measured\": %s,\n", rep->nranks, rep->measured ? "true" : "false");
    fprintf(f, "  \"steps\": %ld,\n  \"warmup_steps\": %ld,\n", rep->measured ? rep->steps : 0L,
            rep->settings.warmup);
    fprintf(f, "  \"calls_per_step\": %lld,\n  \"calls_per_step_given\": %s,\n",
            (long long) rep->stats[0].calls_per_step,
            rep->settings.calls_per_step_given > 0 ? "true" : "false");
    fprintf(f, "  \"steps_from_api\": %s,\n", rep->settings.steps_from_api ? "true" : "false");
    fprintf(f, "  \"min_bytes\": %zu,\n", rep->settings.min_bytes);
    fprintf(f, "  \"per_rank\": [\n");
    for (int i = 0; i < rep->nranks; i++) {
        const ob_rank_stats *s = &rep->stats[i];
        const ob_report_rank *r = &rep->ranks[i];

        fprintf(f, "    {\"rank\": %d, \"host\": ", i);
        ob_json_string(f, s->host);
        fprintf(f, ", \"cores\": %d, \"gpus\": %d, \"steps\": %lld, \"parked_steps\": %lld, "
                "\"parked_longest\": %lld, ", s->cores, s->gpus, (long long) s->steps,
                (long long) s->parked_steps, (long long) s->parked_longest);
        ob_json_key_number(f, "batch", r->batch, ", ");
        ob_json_key_number(f, "compute_s", r->compute, ", ");
        ob_json_key_number(f, "blocked_s", r->blocked, ", ");
        ob_json_key_number(f, "step_s", r->step, ", ");
        ob_json_key_number(f, "reduction_s", r->reduction, ", ");
        ob_json_key_number(f, "waiting_s", r->wait, ", ");
        ob_json_key_number(f, "other_s", r->other, ", ");
        ob_json_key_number(f, "waiting", r->waiting, ", ");
        ob_json_key_number(f, "balanced_share", r->share, ", ");
        fprintf(f, "\"balanced_batch\": ");
        if (r->plan >= 0) {
            fprintf(f, "%ld}", r->plan);
        } else {
            fprintf(f, "null}");
        }
        fprintf(f, "%s\n", i + 1 < rep->nranks ? "," : "");
    }
    fprintf(f, "  ],\n");
    if (rep->measured) {
        fprintf(f, "  \"slowest_rank\": %d,\n  \"fastest_rank\": %d,\n", rep->slowest, rep->fastest);
        fprintf(f, "  ");
        ob_json_key_number(f, "imbalance", rep->imbalance, ",\n  ");
        ob_json_key_number(f, "spread", rep->spread, ",\n");
    }
    fprintf(f, "  \"stragglers\": [");
    for (int k = 0; k < rep->nstragglers; k++) {
        fprintf(f, "%s%d", k > 0 ? ", " : "", rep->stragglers[k]);
    }
    fprintf(f, "],\n  ");
    ob_json_key_number(f, "others_waiting", rep->measured ? rep->others_waiting : (double) NAN, ",\n  ");
    if (rep->global_batch > 0) {
        fprintf(f, "\"global_batch\": %ld,\n  ", rep->global_batch);
    } else {
        fprintf(f, "\"global_batch\": null,\n  ");
    }
    fprintf(f, "\"split_ok\": %s,\n  ", rep->split_ok ? "true" : "false");
    if (!rep->split_ok && '\0' != rep->split_error[0]) {
        fprintf(f, "\"split_error\": ");
        ob_json_string(f, rep->split_error);
        fprintf(f, ",\n  ");
    }
    ob_json_key_number(f, "step_time_s", rep->measured ? rep->step_now : (double) NAN, ",\n  ");
    ob_json_key_number(f, "predicted_step_time_s", rep->split_ok ? rep->step_balanced : (double) NAN, ",\n  ");
    ob_json_key_number(f, "speedup", rep->split_ok ? rep->speedup : (double) NAN, ",\n  ");
    ob_report_json_verdict(f, rep);
    fprintf(f, "\"trace_rows_dropped\": %ld\n}\n", rep->settings.trace_dropped);
    if (0 != fflush(f) || ferror(f)) {
        return ob_fail(OMNIBATCH_ERR_IO, "%s", strerror(errno));
    }
    return OMNIBATCH_SUCCESS;
}
