/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The preload-mode report from synthetic per-rank statistics: who is named
 * the straggler, how long the others wait, the balancing split and its
 * predicted speed-up, and JSON that parses.  Expected figures are worked out
 * here from the synthetic steps, not taken from the writer.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_report.h"
#include "ob_starve.h"

#define MAXR 16

#include "ob_json_check.h"

START_TEST(test_the_validator_rejects_broken_json)
{
    ck_assert(json_parses("{\"a\": [1, 2.5e-3, null, true, \"x\\\"y\"]}"));
    ck_assert(!json_parses("{\"a\": nan}"));
    ck_assert(!json_parses("{\"a\": 1,}"));
    ck_assert(!json_parses("{\"a\" 1}"));
    ck_assert(!json_parses("[1, 2"));
    ck_assert(!json_parses("{\"a\": \"tab\there\"}"));
}
END_TEST

/* --------------------------------------------------------- synthetic runs */

typedef struct run {
    int P;
    ob_rank_stats stats[MAXR];
    ob_report_settings settings;
    ob_report rep;
    char *text;
    char *json;
} run;

/* Synchronous SGD: every rank's step spans `span` seconds; a rank that
 * computes c blocks span - c.  Steps vary by +-10% around the means. */
static void run_fill(run *r, int P, const double *compute, double span, long steps, const long *batch)
{
    memset(r, 0, sizeof *r);
    r->P = P;
    r->settings.min_bytes = 1024;
    r->settings.warmup = 2;
    for (int i = 0; i < P; i++) {
        ob_rank_stats_init(&r->stats[i], i);
        snprintf(r->stats[i].host, sizeof r->stats[i].host, "h%d", i);
        r->stats[i].cores = 4;
        r->stats[i].calls_per_step = 3;
        for (long k = 0; k < steps; k++) {
            double jitter = 0 == k % 2 ? 1.1 : 0.9;      /* even steps: means stay exact */

            ob_rank_stats_add(&r->stats[i], NULL == batch ? -1 : batch[i], compute[i] * jitter,
                              span * jitter - compute[i] * jitter);
        }
    }
}

static char *capture(int (*writer)(FILE *, const ob_report *), const ob_report *rep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(writer(f, rep), 0);
    fclose(f);
    return buf;
}

static void run_report(run *r)
{
    ck_assert_int_eq(ob_report_analyse(r->stats, r->P, &r->settings, &r->rep), 0);
    r->text = capture(ob_report_write_text, &r->rep);
    r->json = capture(ob_report_write_json, &r->rep);
    ck_assert_msg(json_parses(r->json), "JSON does not parse:\n%s", r->json);
}

static void run_free(run *r)
{
    ob_report_free(&r->rep);
    free(r->text);
    free(r->json);
}

static void assert_contains(const char *text, const char *needle)
{
    ck_assert_msg(NULL != strstr(text, needle), "expected \"%s\" in:\n%s", needle, text);
}

START_TEST(test_names_the_slow_rank_and_what_others_lose)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    run r;
    char line[256];

    /* Rank 2 computes 30 ms; every step spans 31 ms, so the others block
     * 21 ms of 31; 1 ms of it is the reduction (rank 2's blocked time, which
     * every rank spends), 20 ms waiting: 65%. */
    run_fill(&r, 4, compute, 0.031, 40, NULL);
    run_report(&r);
    ck_assert_int_eq(r.rep.nstragglers, 1);
    ck_assert_int_eq(r.rep.stragglers[0], 2);
    ck_assert_int_eq(r.rep.slowest, 2);
    ck_assert_double_eq_tol(r.rep.spread, 3.0, 1e-9);
    ck_assert_double_eq_tol(r.rep.imbalance, 0.030 / 0.015, 1e-9);
    ck_assert_double_eq_tol(r.rep.others_waiting, 0.020 / 0.031, 1e-9);
    snprintf(line, sizeof line, "rank 2 (host h2) is the straggler: it computes 3.0x as long as "
             "the fastest; ranks 0,1,3 wait %.0f%% of their step", 100.0 * 0.020 / 0.031);
    assert_contains(r.text, line);
    assert_contains(r.json, "\"stragglers\": [2]");
    run_free(&r);
}
END_TEST

START_TEST(test_split_in_shares_without_a_global_batch)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    run r;
    /* alpha = 0: equal finish times need b_i proportional to 1 / c_i:
     * 1/10 : 1/10 : 1/30 : 1/10 = 3 : 3 : 1 : 3. */
    static const double share[4] = { 0.3, 0.3, 0.1, 0.3 };
    double balanced;

    run_fill(&r, 4, compute, 0.031, 40, NULL);
    run_report(&r);
    ck_assert(r.rep.split_ok);
    ck_assert_int_eq(r.rep.global_batch, 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq_tol(r.rep.ranks[i].share, share[i], 1e-6);
        ck_assert_int_eq(r.rep.ranks[i].plan, -1);
    }
    /* Each rank then computes c_i * P * share_i = 12 ms; the allreduces
     * still cost the least blocked time, rank 2's 1 ms. */
    balanced = 0.010 * 4 * 0.3 + 0.001;
    ck_assert_double_eq_tol(r.rep.step_balanced, balanced, 1e-9);
    ck_assert_double_eq_tol(r.rep.step_now, 0.031, 1e-9);
    ck_assert_double_eq_tol(r.rep.speedup, 0.031 / balanced, 1e-6);
    assert_contains(r.text, "shares of the global batch");
    assert_contains(r.text, " 30.0% 30.0% 10.0% 30.0%");
    assert_contains(r.json, "\"global_batch\": null");
    run_free(&r);
}
END_TEST

START_TEST(test_split_in_samples_with_a_global_batch)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    run r;
    long sum = 0;

    run_fill(&r, 4, compute, 0.031, 40, NULL);
    r.settings.global_batch = 250;
    run_report(&r);
    ck_assert(r.rep.split_ok);
    ck_assert_int_eq(r.rep.global_batch, 250);
    for (int i = 0; i < 4; i++) {
        /* 75, 75, 25, 75 exactly. */
        ck_assert_int_eq(r.rep.ranks[i].plan, 2 == i ? 25 : 75);
        sum += r.rep.ranks[i].plan;
    }
    ck_assert_int_eq(sum, 250);
    assert_contains(r.text, "balanced split of the global batch 250: 75 75 25 75");
    assert_contains(r.json, "\"balanced_batch\": 25}");
    run_free(&r);
}
END_TEST

/* A code on the API: every rank carries the controller's plan and model
 * (ob_hook.h), and the report shows those, not a split of its own fit. */
static void run_fill_api(run *r, const long *plan, int with_plans)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    static const long batch[4] = { 62, 62, 63, 63 };
    static const double beta[4] = { 1e-4, 1e-4, 3e-4, 1e-4 };

    run_fill(r, 4, compute, 0.031, 40, batch);
    r->settings.global_batch = 250;
    r->settings.steps_from_api = 1;
    for (int i = 0; i < with_plans; i++) {
        ob_rank_stats_set_plan(&r->stats[i], plan[i], 1e-3, beta[i]);
    }
}

START_TEST(test_an_api_code_shows_the_controllers_plan_and_models)
{
    static const long plan[4] = { 70, 70, 40, 70 };
    run r;

    run_fill_api(&r, plan, 4);
    run_report(&r);
    ck_assert(r.rep.split_ok);
    ck_assert(r.rep.split_from_controller);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(r.rep.ranks[i].plan, plan[i]);
        ck_assert_double_eq_tol(r.rep.ranks[i].share, (double) plan[i] / 250.0, 1e-12);
        ck_assert_double_eq_tol(r.rep.ranks[i].alpha, 1e-3, 1e-15);
        ck_assert_double_eq_tol(r.rep.ranks[i].beta, 2 == i ? 3e-4 : 1e-4, 1e-15);
    }
    /* The plan's step by those models: rank 2's 1 ms + 40 x 0.3 ms, and the
     * reduction of 1 ms (rank 2's blocked time). */
    ck_assert_double_eq_tol(r.rep.step_balanced, 0.013 + 0.001, 1e-12);
    assert_contains(r.text, "balanced split of the global batch 250 (the controller's plan and "
                    "models): 70 70 40 70");
    assert_contains(r.json, "\"split_source\": \"controller\"");
    assert_contains(r.json, "\"model_beta_s\": 0.0003");
    run_free(&r);
}
END_TEST

START_TEST(test_without_every_ranks_plan_the_report_fits_its_own)
{
    static const long plan[4] = { 70, 70, 40, 70 };
    static const long short_plan[4] = { 70, 70, 40, 69 };     /* sums to 249, not B */
    run r;

    /* Rank 3 sent no plan (the controller does not plan, or no model yet). */
    run_fill_api(&r, plan, 3);
    run_report(&r);
    ck_assert(r.rep.split_ok);
    ck_assert(!r.rep.split_from_controller);
    ck_assert_int_ne(r.rep.ranks[2].plan, 40);
    assert_contains(r.json, "\"split_source\": \"fit\"");
    run_free(&r);
    /* Plans that are no split of the global batch are not shown as one. */
    run_fill_api(&r, short_plan, 4);
    run_report(&r);
    ck_assert(!r.rep.split_from_controller);
    run_free(&r);
    /* Nor are plans of a code that did not reduce through the API. */
    run_fill_api(&r, plan, 4);
    r.settings.steps_from_api = 0;
    run_report(&r);
    ck_assert(!r.rep.split_from_controller);
    run_free(&r);
}
END_TEST

/* The split in samples keeps the bounds and the granularity, as the API's
 * plan does: unbounded it would give rank 2 about 26 of 256. */
START_TEST(test_split_in_samples_keeps_bounds_and_granularity)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    run r;

    run_fill(&r, 4, compute, 0.031, 40, NULL);
    r.settings.global_batch = 256;
    r.settings.min_batch = 40;
    r.settings.max_batch = 72;
    r.settings.granularity = 8;
    run_report(&r);
    ck_assert(r.rep.split_ok);
    assert_contains(r.text, "balanced split of the global batch 256: 72 72 40 72");
    /* Predicted from that plan: rank 2's 40 samples at 0.030 * 4 / 256 s each,
     * plus the least blocked time (0.001 s). */
    ck_assert_double_eq_tol(r.rep.step_balanced, 0.030 * 4.0 / 256.0 * 40.0 + 0.001, 1e-9);
    run_free(&r);
    /* Bounds no split can keep are explained, not broken. */
    run_fill(&r, 4, compute, 0.031, 40, NULL);
    r.settings.global_batch = 256;
    r.settings.max_batch = 60;
    run_report(&r);
    ck_assert(!r.rep.split_ok);
    assert_contains(r.text, "no balanced split: ");
    run_free(&r);
}
END_TEST

START_TEST(test_known_batches_fit_the_per_step_cost)
{
    run r;
    /* t = alpha + beta * b with b alternating 48 / 80 around 64. */
    static const double alpha[3] = { 0.002, 0.004, 0.001 };
    static const double beta[3] = { 1e-4, 3e-4, 1e-4 };
    long sum = 0;

    memset(&r, 0, sizeof r);
    r.P = 3;
    r.settings.min_bytes = 1024;
    for (int i = 0; i < 3; i++) {
        ob_rank_stats_init(&r.stats[i], i);
        snprintf(r.stats[i].host, sizeof r.stats[i].host, "node-%d", i);
        for (int k = 0; k < 20; k++) {
            long b = 0 == k % 2 ? 48 : 80;
            double c = alpha[i] + beta[i] * (double) b;

            ob_rank_stats_add(&r.stats[i], b, c, 0.03 - c);
        }
    }
    run_report(&r);
    ck_assert(r.rep.batch_known);
    ck_assert_int_eq(r.rep.global_batch, 192);
    for (int i = 0; i < 3; i++) {
        ck_assert_double_eq_tol(r.rep.ranks[i].batch, 64.0, 1e-12);
        ck_assert_double_eq_tol(r.rep.ranks[i].alpha, alpha[i], 1e-9);
        ck_assert_double_eq_tol(r.rep.ranks[i].beta, beta[i], 1e-12);
        sum += r.rep.ranks[i].plan;
    }
    ck_assert_int_eq(sum, 192);
    /* Equal finish: alpha_i + beta_i b_i = T for all i with sum b_i = 192:
     * T = (192 + sum alpha/beta) / sum(1/beta). */
    {
        double s1 = 0.0, s2 = 0.0, T;

        for (int i = 0; i < 3; i++) {
            s1 += alpha[i] / beta[i];
            s2 += 1.0 / beta[i];
        }
        T = (192.0 + s1) / s2;
        for (int i = 0; i < 3; i++) {
            ck_assert_double_eq_tol(r.rep.ranks[i].share * 192.0, (T - alpha[i]) / beta[i], 1e-6);
        }
    }
    assert_contains(r.text, "(now 64 64 64)");
    run_free(&r);
}
END_TEST

START_TEST(test_balanced_run_names_nobody)
{
    static const double compute[3] = { 0.0200, 0.0205, 0.0198 };
    run r;

    run_fill(&r, 3, compute, 0.0210, 10, NULL);
    run_report(&r);
    ck_assert_int_eq(r.rep.nstragglers, 0);
    assert_contains(r.text, "no straggler");
    ck_assert_ptr_null(strstr(r.text, "is the straggler"));
    assert_contains(r.json, "\"stragglers\": []");
    run_free(&r);
}
END_TEST

START_TEST(test_two_slow_ranks_are_both_named)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.0295 };
    run r;

    run_fill(&r, 4, compute, 0.031, 10, NULL);
    run_report(&r);
    ck_assert_int_eq(r.rep.nstragglers, 2);
    assert_contains(r.text, "ranks 2,3 (hosts h2, h3) are the stragglers: they compute 3.0x as long "
                    "as the fastest; ranks 0,1 wait");
    run_free(&r);
}
END_TEST

START_TEST(test_stragglers_on_one_host_name_it_once)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.0295 };
    run r;

    run_fill(&r, 4, compute, 0.031, 10, NULL);
    strcpy(r.stats[3].host, r.stats[2].host);
    run_report(&r);
    assert_contains(r.text, "ranks 2,3 (host h2) are the stragglers");
    run_free(&r);
}
END_TEST

START_TEST(test_long_rank_lists_are_ranges)
{
    double compute[9];
    run r;

    for (int i = 0; i < 9; i++) {
        compute[i] = 6 == i ? 0.05 : 0.01;
    }
    run_fill(&r, 9, compute, 0.051, 10, NULL);
    run_report(&r);
    assert_contains(r.text, "rank 6 (host h6) is the straggler");
    assert_contains(r.text, "ranks 0-5,7,8 wait");
    run_free(&r);
}
END_TEST

START_TEST(test_rank_without_steps_is_reported_not_analysed)
{
    static const double compute[3] = { 0.010, 0.010, 0.030 };
    run r;

    run_fill(&r, 3, compute, 0.031, 10, NULL);
    ob_rank_stats_init(&r.stats[1], 1);
    snprintf(r.stats[1].host, sizeof r.stats[1].host, "h1");
    run_report(&r);
    ck_assert(!r.rep.measured);
    ck_assert_int_eq(r.rep.nstragglers, 0);
    assert_contains(r.text, "no training step measured on rank 1: no float or double MPI_SUM "
                    "allreduce of at least 1024 bytes");
    assert_contains(r.json, "\"measured\": false");
    ck_assert_ptr_null(strstr(r.json, "nan"));
    run_free(&r);
}
END_TEST

START_TEST(test_infeasible_split_is_explained)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    run r;

    /* A global batch of 3 cannot give 4 ranks one sample each. */
    run_fill(&r, 4, compute, 0.031, 10, NULL);
    r.settings.global_batch = 3;
    run_report(&r);
    ck_assert(!r.rep.split_ok);
    ck_assert_str_ne(r.rep.split_error, "");
    assert_contains(r.text, "no balanced split: ");
    assert_contains(r.json, "\"split_ok\": false");
    assert_contains(r.json, "\"speedup\": null");
    run_free(&r);
}
END_TEST

START_TEST(test_rank_without_compute_still_gets_a_split)
{
    /* A rank whose blocked time filled its steps: planned as very fast,
     * not refused by the planner. */
    static const double compute[3] = { 0.0, 0.010, 0.030 };
    run r;

    run_fill(&r, 3, compute, 0.031, 10, NULL);
    run_report(&r);
    ck_assert(r.rep.split_ok);
    ck_assert_double_gt(r.rep.ranks[0].share, r.rep.ranks[1].share);
    ck_assert_double_ge(r.rep.ranks[1].share, r.rep.ranks[2].share);
    ck_assert_double_eq_tol(r.rep.ranks[0].share + r.rep.ranks[1].share + r.rep.ranks[2].share, 1.0, 1e-9);
    run_free(&r);
}
END_TEST

START_TEST(test_odd_host_names_stay_valid_json)
{
    static const double compute[2] = { 0.010, 0.020 };
    run r;

    run_fill(&r, 2, compute, 0.021, 10, NULL);
    snprintf(r.stats[0].host, sizeof r.stats[0].host, "a\"b\\c\td");
    run_report(&r);
    assert_contains(r.json, "\"host\": \"a\\\"b\\\\c\\u0009d\"");
    run_free(&r);
}
END_TEST

/* Steps of \p step wall seconds: compute, blocked and the rest "other". */
static void run_fill_steps(run *r, int P, const double *compute, const double *blocked, double step, long steps)
{
    memset(r, 0, sizeof *r);
    r->P = P;
    r->settings.min_bytes = 1024;
    r->settings.global_batch = 256;
    for (int i = 0; i < P; i++) {
        ob_rank_stats_init(&r->stats[i], i);
        snprintf(r->stats[i].host, sizeof r->stats[i].host, "host%d", i);
        for (long k = 0; k < steps; k++) {
            ob_rank_stats_add_step(&r->stats[i], -1, compute[i], blocked[i], step);
        }
    }
}

START_TEST(test_verdict_compute_imbalanced_includes_the_reduction)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    run r;

    run_fill(&r, 4, compute, 0.031, 40, NULL);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMPUTE_IMBALANCED);
    ck_assert_double_eq_tol(r.rep.reduction, 0.001, 1e-9);
    ck_assert_double_eq_tol(r.rep.ranks[0].wait, 0.020, 1e-9);
    /* Predicted now: the last to arrive (rank 2, 30 ms) plus the reduction. */
    ck_assert_double_eq_tol(r.rep.step_predicted, 0.031, 1e-9);
    ck_assert_double_eq_tol(r.rep.step_balanced, 0.012 + 0.001, 1e-9);
    assert_contains(r.text, "verdict: compute-imbalanced: the split above makes the step 0.013000 s, "
                    "reduction included (2.38x faster)");
    assert_contains(r.json, "\"verdict\": \"compute-imbalanced\"");
    assert_contains(r.json, "\"slowest_host\": \"h2\"");
    assert_contains(r.json, "\"slow_link_host\": null");
    ck_assert_int_eq(r.rep.slow_link, -1);
    run_free(&r);
}
END_TEST

START_TEST(test_verdict_network_bound_is_communication_bound)
{
    /* The one-host run: 5 us of compute, 21 ms blocked.  Rank 0
     * computes 1 us longer, so it is the last to arrive; no split can win
     * more than a fraction of a per cent. */
    static const double compute[3] = { 6e-6, 5e-6, 5e-6 };
    static const double blocked[3] = { 0.021, 0.021001, 0.021001 };
    run r;

    run_fill_steps(&r, 3, compute, blocked, 0.021006, 20);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMMUNICATION_BOUND);
    ck_assert_double_eq_tol(r.rep.reduction_share, 0.021 / 0.021006, 1e-9);
    ck_assert(r.rep.max_gain < 0.001);
    ck_assert_int_eq(r.rep.slow_link, -1);
    assert_contains(r.text, "verdict: communication-bound: the reduction is 100% of the step "
                    "(0.021000 s of 0.021006 s); rebalancing the batch can win at most 0%");
    ck_assert_ptr_null(strstr(r.text, "slow link"));
    run_free(&r);
}
END_TEST

START_TEST(test_verdict_slow_link_names_its_host)
{
    /* Equal compute; host2's link is slow: the others wait 21 ms a step in
     * the allreduce for its reduction, which it spends outside compute
     * (finishing the slow reduction before it can start its next step). */
    static const double compute[3] = { 0.020, 0.020, 0.020 };
    static const double blocked[3] = { 0.180, 0.180, 0.159 };
    run r;

    run_fill_steps(&r, 3, compute, blocked, 0.200, 30);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMMUNICATION_BOUND);
    ck_assert_int_eq(r.rep.slow_link, 2);
    ck_assert_double_eq_tol(r.rep.reduction, 0.159, 1e-9);
    ck_assert_double_eq_tol(r.rep.ranks[2].other, 0.021, 1e-9);
    /* The "now" prediction is the measured step. */
    ck_assert_double_eq_tol(r.rep.step_predicted, 0.200, 1e-9);
    ck_assert_double_eq_tol(r.rep.step_now, 0.200, 1e-9);
    /* The slow-link host gets no more work than the others. */
    ck_assert(r.rep.ranks[2].plan <= r.rep.ranks[0].plan && r.rep.ranks[2].plan <= r.rep.ranks[1].plan);
    assert_contains(r.text, "slow link: host host2 (rank 2): the other ranks wait 11% of the step for its "
                    "reduction, not for its compute");
    assert_contains(r.json, "\"slow_link_host\": \"host2\"");
    assert_contains(r.json, "\"verdict\": \"communication-bound\"");
    run_free(&r);
}
END_TEST

START_TEST(test_slow_cpu_is_no_slow_link)
{
    /* The others wait for rank 2 because it computes longer: compute-imbalanced,
     * no slow link. */
    static const double compute[3] = { 0.020, 0.020, 0.040 };
    static const double blocked[3] = { 0.050, 0.050, 0.030 };
    run r;

    run_fill_steps(&r, 3, compute, blocked, 0.070, 30);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMPUTE_IMBALANCED);
    ck_assert_int_eq(r.rep.slow_link, -1);
    ck_assert(r.rep.ranks[2].plan < r.rep.ranks[0].plan);
    run_free(&r);
}
END_TEST

START_TEST(test_predicted_now_counts_what_is_neither)
{
    /* A throttled rank spends 17 ms a step outside compute and the allreduce
     * (its optimiser): the measured step is 47 ms, and "now" must say so. */
    static const double compute[2] = { 0.010, 0.010 };
    static const double blocked[2] = { 0.037, 0.020 };
    run r;

    run_fill_steps(&r, 2, compute, blocked, 0.047, 30);
    run_report(&r);
    ck_assert_double_eq_tol(r.rep.step_now, 0.047, 1e-9);
    ck_assert_double_eq_tol(r.rep.step_predicted, 0.047, 1e-9);
    ck_assert_double_eq_tol(r.rep.ranks[1].other, 0.017, 1e-9);
    assert_contains(r.text, "0.047000 s now (measured 0.047000 s)");
    run_free(&r);
}
END_TEST

START_TEST(test_a_wait_outside_the_allreduce_is_no_work)
{
    /* A code that waits for the others partly before its allreduce (a
     * barrier, a polled request): the fast rank computes 10 ms, waits 10 ms
     * there and 10 ms in the allreduce; the slow one computes 30 ms; both
     * spend 5 ms reducing.  The fast rank's 10 ms of "other" is waiting,
     * which balancing removes: the balanced split (192, 64 of 256) computes
     * 15 ms on each, so the step is 15 + 5 ms, not 15 + 5 + 10. */
    run r;

    memset(&r, 0, sizeof r);
    r.P = 2;
    r.settings.min_bytes = 1024;
    r.settings.global_batch = 256;
    for (int i = 0; i < 2; i++) {
        ob_rank_stats_init(&r.stats[i], i);
        snprintf(r.stats[i].host, sizeof r.stats[i].host, "host%d", i);
        for (long k = 0; k < 30; k++) {
            ob_rank_stats_add_step(&r.stats[i], -1, 0 == i ? 0.010 : 0.030, 0 == i ? 0.015 : 0.005, 0.035);
        }
    }
    run_report(&r);
    ck_assert_double_eq_tol(r.rep.ranks[0].other, 0.010, 1e-12);
    ck_assert_double_eq_tol(r.rep.ranks[1].other, 0.0, 1e-12);
    ck_assert_double_eq_tol(r.rep.step_predicted, 0.035, 1e-12);
    ck_assert_int_eq(r.rep.ranks[0].plan, 192);
    ck_assert_int_eq(r.rep.ranks[1].plan, 64);
    ck_assert_double_eq_tol(r.rep.step_balanced, 0.020, 1e-12);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMPUTE_IMBALANCED);
    run_free(&r);
}
END_TEST

START_TEST(test_an_evaluation_between_steps_is_not_the_step)
{
    /* Nine steps of 20 ms, and one followed by a 1 s evaluation: its other
     * time counts only up to its compute and blocked time (OB_REPORT_OTHER_CAP). */
    ob_rank_stats s;

    ob_rank_stats_init(&s, 0);
    for (int k = 0; k < 9; k++) {
        ob_rank_stats_add_step(&s, 8, 0.010, 0.010, 0.020);
    }
    ob_rank_stats_add_step(&s, 8, 0.010, 0.010, 1.0);
    ck_assert_double_eq_tol(s.step_sum, 9 * 0.020 + 0.020 * (1.0 + OB_REPORT_OTHER_CAP), 1e-12);
    /* A step shorter than its parts (clock skew) counts as its parts. */
    ob_rank_stats_add_step(&s, 8, 0.010, 0.010, 0.015);
    ck_assert_double_eq_tol(s.step_sum, 10 * 0.020 + 0.020 * (1.0 + OB_REPORT_OTHER_CAP), 1e-12);
}
END_TEST

START_TEST(test_verdict_balanced)
{
    static const double compute[3] = { 0.0200, 0.0205, 0.0198 };
    run r;

    run_fill(&r, 3, compute, 0.0210, 10, NULL);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_BALANCED);
    assert_contains(r.text, "verdict: balanced: ");
    assert_contains(r.json, "\"verdict\": \"balanced\"");
    run_free(&r);
}
END_TEST

/* ---------------------------------------------------- starved of CPU */

/* What the kernel gave a rank over a 20 s run: \p cpu s of CPU, its main
 * thread on a CPU \p run s and runnable off it \p delay s, and (quota > 0)
 * its cgroup stopped \p throttled_s s in \p throttled of \p periods periods. */
static void set_cpu(run *r, int i, double cpu, double run_s, double delay, double quota, long periods,
                    long throttled, double throttled_s)
{
    ob_cpu_use u = { .wall_s = 20.0, .cpu_s = cpu, .nivcsw = 3259, .nvcsw = 12, .run_s = run_s,
                     .delay_s = delay, .quota = quota, .periods = -1, .throttled = -1, .throttled_s = -1.0 };

    if (quota > 0.0) {
        u.periods = periods;
        u.throttled = throttled;
        u.throttled_s = throttled_s;
    }
    ob_rank_stats_set_cpu(&r->stats[i], &u);
}

/* The run: 4 ranks compute 0.124 ms and block 6.128 ms of a 6.252 ms
 * step, because rank 3, under a 0.1-core quota stopped 88% of the time, is
 * descheduled inside the allreduce.  Without the evidence (the code before
 * it) the report said communication-bound; with it, cpu-starved, rank 3,
 * its stalls 88% of the step, and the transfer what is left. */
START_TEST(test_a_rank_starved_by_its_quota_is_named_not_the_network)
{
    static const double compute[4] = { 0.000124, 0.000124, 0.000124, 0.000124 };
    run r;

    run_fill(&r, 4, compute, 0.006252, 20, NULL);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMMUNICATION_BOUND);
    ck_assert_int_eq(r.rep.nstarved, 0);
    run_free(&r);

    run_fill(&r, 4, compute, 0.006252, 20, NULL);
    for (int i = 0; i < 3; i++) {
        set_cpu(&r, i, 19.5, 19.5, 0.4, 0.0, 0, 0, 0.0);
    }
    set_cpu(&r, 3, 2.0, 2.0, 17.9, 0.1, 2000, 1800, 17.6);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_CPU_STARVED);
    ck_assert_int_eq(r.rep.nstarved, 1);
    ck_assert_int_eq(r.rep.starved[0], 3);
    ck_assert_int_eq(r.rep.ranks[3].starved_by, OB_STARVED_BY_QUOTA);
    ck_assert_double_eq_tol(r.rep.ranks[3].lost, 0.88, 1e-12);
    ck_assert_double_eq_tol(r.rep.least_blocked, 0.006128, 1e-12);
    ck_assert_double_eq_tol(r.rep.reduction, 0.006128 * 0.12, 1e-12);
    ck_assert_double_eq_tol(r.rep.stalled, 0.006128 * 0.88, 1e-12);
    ck_assert_double_eq_tol(r.rep.starved_share, 0.88, 1e-9);
    /* The step predicted now is still the measured one; no split wins. */
    ck_assert_double_eq_tol(r.rep.step_predicted, 0.006252, 1e-9);
    ck_assert(r.rep.max_gain < OB_REPORT_MIN_GAIN);
    ck_assert_int_eq(r.rep.slow_link, -1);
    assert_contains(r.text, "verdict: cpu-starved: rank 3 (host h3) was starved of CPU: its stalls take 88% of "
                    "the step (0.005502 s of 0.006252 s), and every rank waits for them inside the reduction, "
                    "whose transfer is 0.000735 s (12% of the step); rebalancing the batch can win at most 0%");
    assert_contains(r.text, "starved of CPU: rank 3 (host h3): its cgroup's CPU quota of 0.1 cores stopped it in "
                    "1800 of 2000 periods, 17.600 s (88% of the time); held off the CPU 89% of the time, on one "
                    "10%, 3259 involuntary switches");
    assert_contains(r.text, "what helps: a larger CPU quota (now, in cores: rank 3's 0.1); OMNIBATCH_WAIT=sleep "
                    "with the gradient reduced through omnibatch_allreduce_gradient (an MPI_Allreduce polls), "
                    "so that a rank waiting for the others does not spend its CPU polling; fewer ranks or "
                    "other busy processes on h3");
    ck_assert_ptr_null(strstr(r.text, "communication-bound"));
    assert_contains(r.json, "\"verdict\": \"cpu-starved\"");
    assert_contains(r.json, "\"starved_ranks\": [3]");
    assert_contains(r.json, "\"starved_hosts\": [\"h3\"]");
    assert_contains(r.json, "\"throttled_periods\": 1800, \"throttled_s\": 17.6, \"throttled_share\": 0.88, "
                    "\"starved_share\": 0.88, \"starved_by\": \"quota\", ");
    assert_contains(r.json, "\"cpu_quota\": null, \"periods\": null");
    run_free(&r);
}
END_TEST

/* A crowded machine shared fairly (4 ranks on 2 busy cores: everyone
 * waits ~80% of the time it is ready to run) starves no one: the
 * network-bound run keeps its verdict. */
START_TEST(test_a_fairly_crowded_machine_keeps_the_network_bound_verdict)
{
    static const double compute[3] = { 6e-6, 5e-6, 5e-6 };
    static const double blocked[3] = { 0.021, 0.021001, 0.021001 };
    run r;

    run_fill_steps(&r, 3, compute, blocked, 0.021006, 20);
    set_cpu(&r, 0, 4.0, 4.0, 15.8, 0.0, 0, 0, 0.0);
    set_cpu(&r, 1, 3.6, 3.6, 16.2, 0.0, 0, 0, 0.0);
    set_cpu(&r, 2, 4.4, 4.4, 15.4, 0.0, 0, 0, 0.0);
    run_report(&r);
    ck_assert_int_eq(r.rep.nstarved, 0);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMMUNICATION_BOUND);
    ck_assert_double_eq_tol(r.rep.reduction, 0.021, 1e-12);
    ck_assert_double_eq(r.rep.stalled, 0.0);
    assert_contains(r.text, "verdict: communication-bound: the reduction is 100% of the step ");
    ck_assert_ptr_null(strstr(r.text, "starved"));
    assert_contains(r.json, "\"starved_ranks\": []");
    run_free(&r);
}
END_TEST

/* Two runs of the starved scenario: 4 ranks on 2 cores, rank 3 under a
 * 0.1-core quota, stopped by it 84% of the time.  The three others poll in
 * the allreduce: in CI they waited for a CPU 62%, 65% and 68% of the time
 * they were ready to run, rank 3 only 37% of the short stretches its
 * budget allows; in a shorter run here, 33%, 52% and 25%.  Neither rank 3's
 * rate (it once made ranks 0-2 look starved by their neighbours) nor the
 * luckiest poller's (it made rank 1 look so) is the usual rank's: rank 3
 * alone is named, by its quota. */
START_TEST(test_the_usual_rank_sets_the_rate_not_the_luckiest)
{
    static const double compute[4] = { 0.000045, 0.000047, 0.000047, 0.000044 };
    static const double ci[3] = { 12.4, 13.0, 13.6 };          /* delay of 20 s, held 62-68% */
    static const double here[3] = { 6.6, 10.4, 5.0 };          /* 33%, 52%, 25% */
    const double *runs[2] = { ci, here };
    const double usual[2] = { 13.0 / 20.0, 6.6 / 20.0 };
    run r;

    for (int k = 0; k < 2; k++) {
        run_fill(&r, 4, compute, 0.019476, 20, NULL);
        for (int i = 0; i < 3; i++) {
            set_cpu(&r, i, 20.0 - runs[k][i], 20.0 - runs[k][i], runs[k][i], 0.0, 0, 0, 0.0);
        }
        set_cpu(&r, 3, 2.0, 2.0, 18.0, 0.1, 2000, 1960, 16.8);
        run_report(&r);
        ck_assert_double_eq_tol(r.rep.usual_wait, usual[k], 1e-12);
        ck_assert_int_eq(r.rep.nstarved, 1);
        ck_assert_int_eq(r.rep.starved[0], 3);
        ck_assert_int_eq(r.rep.ranks[3].starved_by, OB_STARVED_BY_QUOTA);
        ck_assert_int_eq(r.rep.verdict, OB_VERDICT_CPU_STARVED);
        assert_contains(r.text, "verdict: cpu-starved: rank 3 (host h3) was starved of CPU: its stalls take 84% of ");
        assert_contains(r.json, "\"starved_ranks\": [3]");
        run_free(&r);
    }

    /* Every rank under a quota: the median of all is the rate. */
    run_fill(&r, 2, compute, 0.019476, 20, NULL);
    set_cpu(&r, 0, 2.0, 2.0, 18.0, 0.1, 2000, 1960, 16.8);
    set_cpu(&r, 1, 2.0, 2.0, 18.0, 0.1, 2000, 1900, 17.2);
    run_report(&r);
    ck_assert_double_eq_tol(r.rep.usual_wait, 0.8 / 2.8, 1e-12);
    ck_assert_int_eq(r.rep.nstarved, 2);
    run_free(&r);
}
END_TEST

/* A busy neighbour on rank 1's cores: it waits for a CPU 60% of the time
 * it is ready to run, the others 5%; it is starved by contention, and the
 * rank the others wait for is not called a slow link. */
START_TEST(test_a_rank_crowded_by_neighbours_is_no_slow_link)
{
    static const double compute[3] = { 0.020, 0.020, 0.020 };
    static const double blocked[3] = { 0.180, 0.159, 0.180 };
    run r;

    run_fill_steps(&r, 3, compute, blocked, 0.200, 30);
    run_report(&r);
    ck_assert_int_eq(r.rep.slow_link, 1);
    run_free(&r);

    run_fill_steps(&r, 3, compute, blocked, 0.200, 30);
    set_cpu(&r, 0, 19.0, 19.0, 1.0, 0.0, 0, 0, 0.0);
    set_cpu(&r, 1, 8.0, 8.0, 12.0, 0.0, 0, 0, 0.0);
    set_cpu(&r, 2, 19.0, 19.0, 1.0, 0.0, 0, 0, 0.0);
    run_report(&r);
    ck_assert_int_eq(r.rep.slow_link, -1);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_CPU_STARVED);
    ck_assert_int_eq(r.rep.ranks[1].starved_by, OB_STARVED_BY_CONTENTION);
    /* Held off 60% of its time, (0.6 - 0.05) / 0.6 of it beyond the others' rate. */
    ck_assert_double_eq_tol(r.rep.ranks[1].lost, 0.6 * 0.55 / 0.6, 1e-12);
    ck_assert_double_eq_tol(r.rep.reduction, 0.159 * (1.0 - 0.55), 1e-12);
    assert_contains(r.text, "starved of CPU: rank 1 (host host1): it waited for a CPU 60% of the time it was "
                    "ready to run (the median rank 5%); held off the CPU 60% of the time, on one 40%");
    assert_contains(r.text, "what helps: OMNIBATCH_WAIT=sleep with");
    ck_assert_ptr_null(strstr(r.text, "slow link"));
    assert_contains(r.json, "\"starved_by\": \"contention\"");
    run_free(&r);
}
END_TEST

/* A starved rank that computes longer is a straggler the split helps:
 * compute-imbalanced, with the starvation named beside it. */
START_TEST(test_a_starved_straggler_keeps_compute_imbalanced_and_is_named)
{
    static const double compute[4] = { 0.010, 0.010, 0.030, 0.010 };
    run r;

    run_fill(&r, 4, compute, 0.031, 40, NULL);
    for (int i = 0; i < 4; i++) {
        set_cpu(&r, i, 19.0, 19.0, 0.5, 0.0, 0, 0, 0.0);
    }
    set_cpu(&r, 2, 6.0, 6.0, 14.0, 0.3, 200, 150, 13.0);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_COMPUTE_IMBALANCED);
    ck_assert_int_eq(r.rep.nstarved, 1);
    /* The split is judged as before: the stalls stay whatever the split. */
    ck_assert_double_eq_tol(r.rep.step_balanced, 0.012 + 0.001, 1e-9);
    assert_contains(r.text, "verdict: compute-imbalanced: the split above makes the step 0.013000 s");
    assert_contains(r.text, "starved of CPU: rank 2 (host h2): its cgroup's CPU quota of 0.3 cores stopped it in "
                    "150 of 200 periods, 13.000 s (65% of the time);");
    assert_contains(r.text, "what helps: a larger CPU quota (now, in cores: rank 2's 0.3);");
    run_free(&r);
}
END_TEST

/* A run without the evidence (an older library's sums, a platform without
 * the counters) says nothing of it: unknown, not 0. */
START_TEST(test_without_the_evidence_nothing_is_said_of_it)
{
    static const double compute[3] = { 0.0200, 0.0205, 0.0198 };
    run r;

    run_fill(&r, 3, compute, 0.0210, 10, NULL);
    run_report(&r);
    ck_assert_int_eq(r.rep.verdict, OB_VERDICT_BALANCED);
    assert_contains(r.json, "\"cpu_share\": null, \"involuntary_switches\": null");
    assert_contains(r.json, "\"starved_share\": 0, \"starved_by\": null, ");
    assert_contains(r.text, "waiting_s  waiting   cpu  off_cpu throttled");
    ck_assert_ptr_null(strstr(r.text, "starved"));
    run_free(&r);
}
END_TEST

START_TEST(test_analyse_rejects_bad_arguments)
{
    ob_report rep;
    ob_report_settings settings = { 0, 0, 1024, 0, 0, NULL, 0, 0, 0, 0 };
    ob_rank_stats s;

    ob_rank_stats_init(&s, 0);
    ck_assert_int_ne(ob_report_analyse(NULL, 1, &settings, &rep), 0);
    ck_assert_int_ne(ob_report_analyse(&s, 0, &settings, &rep), 0);
    ck_assert_int_ne(ob_report_analyse(&s, 1, NULL, &rep), 0);
}
END_TEST

static Suite *make_report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_the_validator_rejects_broken_json);
    tcase_add_test(tc, test_names_the_slow_rank_and_what_others_lose);
    tcase_add_test(tc, test_split_in_shares_without_a_global_batch);
    tcase_add_test(tc, test_split_in_samples_with_a_global_batch);
    tcase_add_test(tc, test_split_in_samples_keeps_bounds_and_granularity);
    tcase_add_test(tc, test_known_batches_fit_the_per_step_cost);
    tcase_add_test(tc, test_balanced_run_names_nobody);
    tcase_add_test(tc, test_two_slow_ranks_are_both_named);
    tcase_add_test(tc, test_stragglers_on_one_host_name_it_once);
    tcase_add_test(tc, test_long_rank_lists_are_ranges);
    tcase_add_test(tc, test_rank_without_steps_is_reported_not_analysed);
    tcase_add_test(tc, test_infeasible_split_is_explained);
    tcase_add_test(tc, test_rank_without_compute_still_gets_a_split);
    tcase_add_test(tc, test_odd_host_names_stay_valid_json);
    tcase_add_test(tc, test_analyse_rejects_bad_arguments);
    tcase_add_test(tc, test_verdict_compute_imbalanced_includes_the_reduction);
    tcase_add_test(tc, test_verdict_network_bound_is_communication_bound);
    tcase_add_test(tc, test_verdict_slow_link_names_its_host);
    tcase_add_test(tc, test_slow_cpu_is_no_slow_link);
    tcase_add_test(tc, test_predicted_now_counts_what_is_neither);
    tcase_add_test(tc, test_verdict_balanced);
    tcase_add_test(tc, test_a_rank_starved_by_its_quota_is_named_not_the_network);
    tcase_add_test(tc, test_a_fairly_crowded_machine_keeps_the_network_bound_verdict);
    tcase_add_test(tc, test_a_rank_crowded_by_neighbours_is_no_slow_link);
    tcase_add_test(tc, test_the_usual_rank_sets_the_rate_not_the_luckiest);
    tcase_add_test(tc, test_a_starved_straggler_keeps_compute_imbalanced_and_is_named);
    tcase_add_test(tc, test_without_the_evidence_nothing_is_said_of_it);
    tcase_add_test(tc, test_an_evaluation_between_steps_is_not_the_step);
    tcase_add_test(tc, test_a_wait_outside_the_allreduce_is_no_work);
    tcase_add_test(tc, test_an_api_code_shows_the_controllers_plan_and_models);
    tcase_add_test(tc, test_without_every_ranks_plan_the_report_fits_its_own);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_report_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
