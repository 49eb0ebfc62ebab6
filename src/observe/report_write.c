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
#include "omnibatch_status.h"

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
    ob_json_key_number(f, "model_alpha_s", rep->split_ok ? r->alpha : nan, ", ");
    ob_json_key_number(f, "model_beta_s", rep->split_ok ? r->beta : nan, ", ");
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
