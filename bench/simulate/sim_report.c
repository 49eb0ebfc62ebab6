/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What the simulator prints (sim_report.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sim_report.h"

/* "-" for not applicable, "never" for a target not reached. */
static const char *ob_sim_count_text(long v, char *buf, size_t size)
{
    if (-2 == v) {
        return "-";
    }
    if (v < 0) {
        return "never";
    }
    snprintf(buf, size, "%ld", v);
    return buf;
}

void ob_sim_print_header(const ob_sim_opts *o)
{
    printf("simulate: the controller alone (no MPI); rank i takes (alpha + beta*b) / s_i seconds for b samples,\n"
           "  alpha = %g s, beta = %g s/sample at speed 1; noise %s %g on every timing (seed %llu);\n"
           "  B = %ld * P; decisions every %ld steps (gain %g, dead-band %g, forget %g);\n"
           "  OmniLearn's rule side by side on the same ranks, adjusting every %ld steps (an \"epoch\").\n",
           o->alpha, o->beta, o->noise_uniform ? "uniform within +-" : "normal, spread", o->noise,
           (unsigned long long) o->seed, o->batch_per_rank, o->period, o->gain, o->deadband, o->forget,
           o->epoch);
    printf("  oracle = the planner's optimum T on the true models (continuous); floor = best integer plan / oracle;\n"
           "  settle / conv = decisions until the plan is within %.2fx of the best integer plan for good / and\n"
           "  no longer changes (before any change event); steady = mean true step time of the plan / oracle\n"
           "  over the last quarter of the run; static = equal split / oracle; recover = steps after the change\n"
           "  until within %.2fx of the best integer plan for good; OL-sum-B = largest excess of OmniLearn's\n"
           "  batches over B, in percent of B.\n"
           "  nf = the noise floor: where a plan that makes the times estimated from each rank's own timings\n"
           "  so far equal lands on average (1 + E[max of P normal errors of deviation noise / sqrt(samples)],\n"
           "  samples counted under the forgetting factor; a guide, not a bound: planning near a rank's bounds\n"
           "  or on ranks of one speed can do better):\n"
           "  nf-stdy = its mean over the last quarter x floor (to compare with steady), nf-set = the\n"
           "  decisions it takes to come within %.2fx (to compare with settle).\n", OB_SIM_CONVERGED, OB_SIM_RECOVERED,
           OB_SIM_CONVERGED);
    if (o->big_steps != o->steps) {
        printf("  Runs above 4096 ranks take %ld steps instead of %ld.\n", o->big_steps, o->steps);
    }
    for (int k = 0; k < OB_SIM_NSCENARIOS; k++) {
        if (o->scenario_on[k]) {
            printf("  %-8s %s\n", ob_sim_scenarios[k].name, ob_sim_scenarios[k].what);
        }
    }
    printf("  planner: cen = today's design (one allgather of every record, every rank solves all), dist =\n"
           "  the distributed decision (ob_planner_dist.h) over emulated collectives, each costing %g s x\n"
           "  ceil(log2 P) plus its bytes at %g B/s; cmp = one rank's compute per decision (dist: rank 0 run\n"
           "  alone against the collectives' results); coll = collectives per decision (mean, cmax = most),\n"
           "  KB = bytes per rank per decision;\n"
           "  lat = emulated decision latency (collectives + cmp).\n", o->latency, o->bandwidth);
    printf("\n%-8s %6s %4s %5s %8s %8s %5s %4s %8s %8s %6s %5s %4s %7s %6s %7s %6s %7s %7s %9s %9s %7s %7s\n",
           "scenario", "P", "plan", "steps", "cmp-mean", "cmp-max", "coll", "cmax", "KB", "lat-mean", "settle", "conv",
           "chg", "steady", "floor", "nf-stdy", "nf-set", "static", "recover", "OL-steady", "OL-sum-B", "OL-rec",
           "wall-s");
    printf("%-8s %6s %4s %5s %8s %8s %5s %4s %8s %8s %6s %5s %4s %7s %6s %7s %6s %7s %7s %9s %9s %7s %7s\n", "", "",
           "", "", "ms", "ms", "/dec", "", "/rank", "ms", "dec", "dec", "", "/orc", "", "/orc", "dec", "/orc", "steps",
           "/orc", "", "steps", "");
    fflush(stdout);
}

void ob_sim_print_row(const ob_sim_result *r)
{
    char b1[32];
    char b2[32];
    char b3[32];
    char b4[32];
    char b5[32];
    char excess[32];
    snprintf(excess, sizeof excess, "+%.1f%%", 100.0 * (double) r->ol_excess_max / (double) r->B);
    printf("%-8s %6d %4s %5ld %8.3f %8.3f %5.1f %4ld %8.2f %8.3f %6s %5s %4ld %7.3f %6.3f %7.3f %6s %7.3f %7s %9.3f "
           "%9s %7s %7.2f\n", r->sc->name, r->P, OB_SIM_CENTRAL == r->planner ? "cen" : "dist", r->steps,
           1e3 * r->dec_mean_s, 1e3 * r->dec_max_s, r->coll_mean, r->coll_max, r->bytes_mean / 1024.0,
           1e3 * r->lat_mean_s, ob_sim_count_text(r->settle, b1, sizeof b1),
           ob_sim_count_text(r->converge, b2, sizeof b2), r->changes, r->steady, r->floor, r->nf_steady,
           ob_sim_count_text(r->nf_settle, b5, sizeof b5), r->statik,
           ob_sim_count_text(r->recover, b3, sizeof b3), r->ol_steady, excess,
           ob_sim_count_text(r->ol_recover, b4, sizeof b4), r->wall_s);
    fflush(stdout);
}

int ob_sim_write_summary(const ob_sim_opts *o, const ob_sim_result *r, int n, double total_s)
{
    FILE *f = fopen(o->summary, "w");
    if (NULL == f) {
        fprintf(stderr, "simulate: --summary='%s': cannot write it\n", o->summary);
        return 1;
    }
    fprintf(f, "{\n  \"benchmark\": \"simulate\",\n");
    fprintf(f, "  \"settings\": {\"alpha\": %g, \"beta\": %g, \"noise\": %g, \"noise_law\": \"%s\", "
               "\"seed\": %llu, "
               "\"batch_per_rank\": %ld, \"period\": %ld, \"gain\": %g, \"deadband\": %g, \"forget\": %g, "
               "\"omnilearn_epoch\": %ld, \"steps\": %ld, \"big_steps\": %ld, \"change_at\": %g, "
               "\"converged\": %g, \"recovered\": %g},\n",
            o->alpha, o->beta, o->noise, o->noise_uniform ? "uniform" : "normal", (unsigned long long) o->seed,
            o->batch_per_rank, o->period, o->gain,
            o->deadband, o->forget, o->epoch, o->steps, o->big_steps, o->change_at, OB_SIM_CONVERGED,
            OB_SIM_RECOVERED);
    fprintf(f, "  \"runs\": [\n");
    for (int k = 0; k < n; k++) {
        /* -1: never reached; null: not applicable. */
        char rec[32];
        char olrec[32];
        if (-2 == r[k].recover) {
            strcpy(rec, "null");
            strcpy(olrec, "null");
        } else {
            snprintf(rec, sizeof rec, "%ld", r[k].recover);
            snprintf(olrec, sizeof olrec, "%ld", r[k].ol_recover);
        }
        fprintf(f, "    {\"planner\": \"%s\", \"collectives_mean\": %.3f, \"collectives_max\": %ld, "
                   "\"bytes_per_rank_mean\": %.1f, \"latency_ms_mean\": %.6f, \"latency_ms_max\": %.6f, ",
                OB_SIM_CENTRAL == r[k].planner ? "central" : "distributed", r[k].coll_mean, r[k].coll_max, r[k].bytes_mean,
                1e3 * r[k].lat_mean_s, 1e3 * r[k].lat_max_s);
        fprintf(f, "\"scenario\": \"%s\", \"ranks\": %d, \"global_batch\": %ld, \"steps\": %ld, "
                   "\"change_step\": %ld, \"decisions\": %ld, \"plan_changes\": %ld, "
                   "\"decision_ms_mean\": %.6f, \"decision_ms_max\": %.6f, \"settle_decisions\": %ld, "
                   "\"converge_decisions\": %ld, \"steady_over_oracle\": %.6f, \"floor_over_oracle\": %.6f, "
                   "\"noise_floor_steady_over_oracle\": %.6f, \"noise_floor_settle_decisions\": %ld, "
                   "\"static_over_oracle\": %.6f, \"recover_steps\": %s, \"omnilearn_steady_over_oracle\": %.6f, "
                   "\"omnilearn_sum_excess_max\": %ld, \"omnilearn_sum_excess_fraction\": %.6f, "
                   "\"omnilearn_recover_steps\": %s, \"wall_s\": %.3f}%s\n",
                r[k].sc->name, r[k].P, r[k].B, r[k].steps, r[k].change_step, r[k].decisions, r[k].changes,
                1e3 * r[k].dec_mean_s, 1e3 * r[k].dec_max_s, r[k].settle, r[k].converge, r[k].steady, r[k].floor,
                r[k].nf_steady, r[k].nf_settle, r[k].statik, rec, r[k].ol_steady, r[k].ol_excess_max,
                (double) r[k].ol_excess_max / (double) r[k].B, olrec, r[k].wall_s, k + 1 < n ? "," : "");
    }
    fprintf(f, "  ],\n  \"wall_s\": %.3f\n}\n", total_s);
    if (0 != fclose(f)) {
        fprintf(stderr, "simulate: --summary='%s': write failed\n", o->summary);
        return 1;
    }
    return 0;
}
