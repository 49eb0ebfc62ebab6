/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The preload-mode report's two writers (ob_report.h): text for a person,
 * one JSON object for a program.  They only print what ob_report_analyse()
 * derived (report.c).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_json.h"
#include "ob_report.h"
#include "ob_starve.h"
#include "omnibatch_status.h"

/* ------------------------------------------------------------------- text */

/* Starved ranks whose evidence gets a line each (the JSON has them all). */
#define OB_REPORT_STARVED_LINES 8

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

/* Whether rank list[k] runs on a host no earlier rank of the list runs on. */
static int ob_report_new_host(const ob_report *rep, const int *list, int k)
{
    const char *host = rep->stats[list[k]].host;

    for (int j = 0; j < k; j++) {
        if (0 == strcmp(host, rep->stats[list[j]].host)) {
            return 0;
        }
    }
    return 1;
}

/* "a, b": the hosts of the \p n ranks of \p list, each once ("vm, vm"
 * says nothing "vm" does not). */
static void ob_report_host_names(FILE *f, const ob_report *rep, const int *list, int n)
{
    for (int k = 0, shown = 0; k < n; k++) {
        if (ob_report_new_host(rep, list, k)) {
            fprintf(f, "%s%s", shown++ > 0 ? ", " : "", rep->stats[list[k]].host);
        }
    }
}

/* " (host a, b)" of ob_report_host_names(). */
static void ob_report_text_hosts(FILE *f, const ob_report *rep, const int *list, int n)
{
    int nhosts = 0;

    for (int k = 0; k < n; k++) {
        nhosts += ob_report_new_host(rep, list, k);
    }
    fprintf(f, " (host%s ", 1 == nhosts ? "" : "s");
    ob_report_host_names(f, rep, list, n);
    fprintf(f, ")");
}

/* A share as a whole percentage, "-" when unknown (< 0 or NaN). */
static const char *ob_report_percent(char *buf, size_t size, double share)
{
    if (share >= 0.0) {
        snprintf(buf, size, "%.0f%%", 100.0 * share);
    } else {
        snprintf(buf, size, "-");
    }
    return buf;
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
    fprintf(f, "  %5s  %-20s %5s %5s %9s %10s %10s %11s %10s %8s %5s %8s %9s\n", "rank", "host", "cores", "gpus",
            "batch", "compute_s", "blocked_s", "reduction_s", "waiting_s", "waiting", "cpu", "off_cpu", "throttled");
    for (int i = 0; i < rep->nranks; i++) {
        const ob_rank_stats *s = &rep->stats[i];
        const ob_report_rank *r = &rep->ranks[i];
        char batch[32] = "-", cpu[16], held[16], throttled[16];

        if (isfinite(r->batch)) {
            snprintf(batch, sizeof batch, "%.1f", r->batch);
        }
        ob_report_percent(cpu, sizeof cpu, r->cpu_share);
        ob_report_percent(held, sizeof held, r->held_share);
        ob_report_percent(throttled, sizeof throttled, r->throttled_share);
        if (s->steps > 0) {
            fprintf(f, "  %5d  %-20.20s %5d %5d %9s %10.6f %10.6f %11.6f %10.6f %7.1f%% %5s %8s %9s\n", i,
                    s->host, s->cores, s->gpus, batch, r->compute, r->blocked, r->reduction, r->wait,
                    100.0 * r->waiting, cpu, held, throttled);
        } else {
            fprintf(f, "  %5d  %-20.20s %5d %5d %9s %10s %10s %11s %10s %8s %5s %8s %9s\n", i, s->host, s->cores,
                    s->gpus, "-", "-", "-", "-", "-", "-", cpu, held, throttled);
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
        fprintf(f, "  balanced split of the global batch %ld%s:", rep->global_batch,
                rep->split_from_controller ? " (the controller's plan and models)" : "");
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

/* One starved rank's evidence: what stopped it, and how much CPU it had. */
static void ob_report_text_starved_rank(FILE *f, const ob_report *rep, int i)
{
    const ob_rank_stats *s = &rep->stats[i];
    const ob_report_rank *r = &rep->ranks[i];

    fprintf(f, "  starved of CPU: rank %d (host %s):", i, s->host);
    if (r->starved_by & OB_STARVED_BY_QUOTA) {
        fprintf(f, " its cgroup's CPU quota of %.3g core%s stopped it in %lld of %lld periods, %.3f s (%.0f%% of "
                "the time);", s->cpu.quota, 1.0 == s->cpu.quota ? "" : "s", (long long) s->cpu.throttled,
                (long long) s->cpu.periods, s->cpu.throttled_s, 100.0 * r->throttled_share);
    }
    if (r->starved_by & OB_STARVED_BY_CONTENTION) {
        fprintf(f, " it waited for a CPU %.0f%% of the time it was ready to run (the median rank %.0f%%);",
                100.0 * r->wait_share, 100.0 * rep->usual_wait);
    }
    fprintf(f, " held off the CPU %.0f%% of the time, on one %.0f%%, %lld involuntary switches\n",
            100.0 * (r->held_share >= 0.0 ? r->held_share : r->lost), 100.0 * r->cpu_share,
            (long long) s->cpu.nivcsw);
}

/* What helps a starved run: the quotas that stopped ranks, waiting asleep,
 * fewer ranks where they crowd. */
static void ob_report_text_starved_help(FILE *f, const ob_report *rep)
{
    int quota = 0;

    fprintf(f, "  what helps:");
    for (int k = 0; k < rep->nstarved; k++) {
        int i = rep->starved[k];

        if (rep->ranks[i].starved_by & OB_STARVED_BY_QUOTA) {
            fprintf(f, "%s rank %d's %.3g", quota++ > 0 ? "," : " a larger CPU quota (now, in cores:", i,
                    rep->stats[i].cpu.quota);
        }
    }
    fprintf(f, "%s OMNIBATCH_WAIT=sleep%s, so that a rank waiting for the others does not spend its CPU "
            "polling; fewer ranks or other busy processes on ", quota > 0 ? ");" : "",
            rep->settings.steps_from_api ? ""
            : " with the gradient reduced through omnibatch_allreduce_gradient (an MPI_Allreduce polls)");
    ob_report_host_names(f, rep, rep->starved, rep->nstarved);
    fprintf(f, "\n");
}

/* The cpu-starved verdict's text: who, what their stalls take of the
 * step, and the transfer without them. */
static void ob_report_text_starved_verdict(FILE *f, const ob_report *rep)
{
    int one = 1 == rep->nstarved;

    fprintf(f, "rank%s ", one ? "" : "s");
    ob_report_list(f, rep->starved, rep->nstarved);
    ob_report_text_hosts(f, rep, rep->starved, rep->nstarved);
    fprintf(f, " %s starved of CPU: %s take %.0f%% of the step (%.6f s of %.6f s), and every rank waits for "
            "them inside the reduction, whose transfer is %.6f s (%.0f%% of the step)", one ? "was" : "were",
            one ? "its stalls" : "the stalls of the most starved", 100.0 * rep->starved_share,
            rep->starved_step_s, rep->step_now, rep->reduction, 100.0 * rep->reduction_share);
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
    } else if (OB_VERDICT_CPU_STARVED == rep->verdict) {
        ob_report_text_starved_verdict(f, rep);
        if (rep->split_ok) {
            fprintf(f, "; rebalancing the batch can win at most %.0f%%", 100.0 * gain);
        }
    } else {
        fprintf(f, "the reduction is %.0f%% of the step (%.6f s of %.6f s)", 100.0 * rep->reduction_share,
                rep->reduction, rep->step_now);
        if (rep->split_ok) {
            fprintf(f, "; rebalancing the batch can win at most %.0f%%", 100.0 * gain);
        }
    }
    fprintf(f, "\n");
    for (int k = 0; k < rep->nstarved && k < OB_REPORT_STARVED_LINES; k++) {
        ob_report_text_starved_rank(f, rep, rep->starved[k]);
    }
    if (rep->nstarved > OB_REPORT_STARVED_LINES) {
        fprintf(f, "  starved of CPU: %d more ranks (the JSON report has each one's figures)\n",
                rep->nstarved - OB_REPORT_STARVED_LINES);
    }
    if (rep->nstarved > 0) {
        ob_report_text_starved_help(f, rep);
    }
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
    ob_report_text_hosts(f, rep, rep->stragglers, rep->nstragglers);
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

/* Steps worked in chunks: what each rank took from the others' ranges and
 * gave of its own, per step. */
static void ob_report_text_moved(FILE *f, const ob_report *rep)
{
    for (int i = 0; i < rep->nranks; i++) {
        const ob_rank_stats *s = &rep->stats[i];

        if (s->moved_steps > 0) {
            fprintf(f, "  chunks: rank %d (%s) took %.1f samples a step from other ranks' ranges and gave "
                    "%.1f of its own (%lld steps)\n", i, s->host, (double) s->taken_sum / (double) s->moved_steps,
                    (double) s->given_sum / (double) s->moved_steps, (long long) s->moved_steps);
        }
    }
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
    ob_report_text_moved(f, rep);
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

/* The starved ranks and their hosts (each host once), what their stalls
 * take of the step, and the blocked time they are in, each line followed
 * by ",\n  ". */
static void ob_report_json_starved(FILE *f, const ob_report *rep)
{
    double nan = (double) NAN;

    ob_json_key_number(f, "least_blocked_s", rep->measured ? rep->least_blocked : nan, ",\n  ");
    ob_json_key_number(f, "stalled_s", rep->measured ? rep->stalled : nan, ",\n  ");
    fprintf(f, "\"starved_ranks\": [");
    for (int k = 0; k < rep->nstarved; k++) {
        fprintf(f, "%s%d", k > 0 ? ", " : "", rep->starved[k]);
    }
    fprintf(f, "],\n  \"starved_hosts\": [");
    for (int k = 0, shown = 0; k < rep->nstarved; k++) {
        if (ob_report_new_host(rep, rep->starved, k)) {
            fprintf(f, "%s", shown++ > 0 ? ", " : "");
            ob_json_quoted(f, rep->stats[rep->starved[k]].host);
        }
    }
    fprintf(f, "],\n  ");
    ob_json_key_number(f, "starved_step_s", rep->most_starved >= 0 ? rep->starved_step_s : nan, ",\n  ");
    ob_json_key_number(f, "starved_step_share", rep->most_starved >= 0 ? rep->starved_share : nan, ",\n  ");
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
        ob_json_quoted(f, rep->stats[rep->slowest].host);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"slow_link_host\": ");
    if (rep->slow_link >= 0) {
        ob_json_quoted(f, rep->stats[rep->slow_link].host);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  ");
    ob_report_json_starved(f, rep);
}

/* A count, null when unknown (< 0). */
static void ob_json_key_count(FILE *f, const char *key, int64_t n, const char *after)
{
    if (n >= 0) {
        fprintf(f, "\"%s\": %lld%s", key, (long long) n, after);
    } else {
        fprintf(f, "\"%s\": null%s", key, after);
    }
}

/* A time or a share the kernel may not have told, null when unknown (< 0). */
static void ob_json_key_known(FILE *f, const char *key, double x, const char *after)
{
    ob_json_key_number(f, key, x >= 0.0 ? x : (double) NAN, after);
}

/* One rank's CPU evidence in its "per_rank" entry (ob_cpuuse.h), and what
 * starved it: "quota", "contention", both joined by "+", or null. */
static void ob_report_json_cpu(FILE *f, const ob_report *rep, int i)
{
    const ob_rank_stats *s = &rep->stats[i];
    const ob_report_rank *r = &rep->ranks[i];
    const ob_cpu_use *u = &s->cpu;
    static const char *const causes[] = { "null", "\"quota\"", "\"contention\"", "\"quota+contention\"" };

    ob_json_key_number(f, "cpu_wall_s", s->cpu_known ? u->wall_s : (double) NAN, ", ");
    ob_json_key_number(f, "cpu_s", s->cpu_known ? u->cpu_s : (double) NAN, ", ");
    ob_json_key_number(f, "cpu_share", r->cpu_share, ", ");
    ob_json_key_count(f, "involuntary_switches", s->cpu_known ? u->nivcsw : -1, ", ");
    ob_json_key_count(f, "voluntary_switches", s->cpu_known ? u->nvcsw : -1, ", ");
    ob_json_key_known(f, "cpu_run_s", s->cpu_known ? u->run_s : -1.0, ", ");
    ob_json_key_known(f, "cpu_delay_s", s->cpu_known ? u->delay_s : -1.0, ", ");
    ob_json_key_known(f, "off_cpu_share", r->held_share, ", ");
    ob_json_key_known(f, "cpu_wait_share", r->wait_share, ", ");
    ob_json_key_number(f, "cpu_quota", s->cpu_known && u->quota > 0.0 ? u->quota : (double) NAN, ", ");
    ob_json_key_count(f, "periods", s->cpu_known ? u->periods : -1, ", ");
    ob_json_key_count(f, "throttled_periods", s->cpu_known ? u->throttled : -1, ", ");
    ob_json_key_known(f, "throttled_s", s->cpu_known ? u->throttled_s : -1.0, ", ");
    ob_json_key_known(f, "throttled_share", r->throttled_share, ", ");
    ob_json_key_number(f, "starved_share", rep->measured ? r->lost : (double) NAN, ", ");
    fprintf(f, "\"starved_by\": %s, ", causes[r->starved_by & 3]);
}

/* One rank's entry of "per_rank", without its separator. */
static void ob_report_json_rank(FILE *f, const ob_report *rep, int i)
{
    const ob_rank_stats *s = &rep->stats[i];
    const ob_report_rank *r = &rep->ranks[i];
    double nan = (double) NAN;

    fprintf(f, "    {\"rank\": %d, \"host\": ", i);
    ob_json_quoted(f, s->host);
    fprintf(f, ", \"cores\": %d, \"gpus\": %d, \"steps\": %lld, \"parked_steps\": %lld, "
            "\"parked_longest\": %lld, \"chunked_steps\": %lld, \"samples_taken\": %lld, "
            "\"samples_given\": %lld, ", s->cores, s->gpus, (long long) s->steps, (long long) s->parked_steps,
            (long long) s->parked_longest, (long long) s->moved_steps, (long long) s->taken_sum,
            (long long) s->given_sum);
    ob_json_key_number(f, "batch", r->batch, ", ");
    ob_json_key_number(f, "compute_s", r->compute, ", ");
    ob_json_key_number(f, "blocked_s", r->blocked, ", ");
    ob_json_key_number(f, "step_s", r->step, ", ");
    ob_json_key_number(f, "reduction_s", r->reduction, ", ");
    ob_json_key_number(f, "waiting_s", r->wait, ", ");
    ob_json_key_number(f, "other_s", r->other, ", ");
    ob_json_key_number(f, "waiting", r->waiting, ", ");
    ob_json_key_number(f, "balanced_share", r->share, ", ");
    ob_json_key_number(f, "model_alpha_s", rep->split_ok ? r->alpha : nan, ", ");
    ob_json_key_number(f, "model_beta_s", rep->split_ok ? r->beta : nan, ", ");
    ob_report_json_cpu(f, rep, i);
    fprintf(f, "\"balanced_batch\": ");
    if (r->plan >= 0) {
        fprintf(f, "%ld}", r->plan);
    } else {
        fprintf(f, "null}");
    }
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
        ob_report_json_rank(f, rep, i);
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
    if (rep->split_ok) {
        fprintf(f, "\"split_source\": \"%s\",\n  ", rep->split_from_controller ? "controller" : "fit");
    }
    if (!rep->split_ok && '\0' != rep->split_error[0]) {
        fprintf(f, "\"split_error\": ");
        ob_json_quoted(f, rep->split_error);
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
