/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Batch scaling in the asynchronous mode, on a simulated parameter server:
 * workers of OmniLearn's heterogeneity level HL8 (cores 6, 6, 4, 32) push
 * whenever their cycle ends, the server counts each push's staleness (the
 * updates applied since the worker read the model) and the controller
 * hands each worker its next batch.  With the controller the workers' mean
 * staleness is within 1.5x of each other (their cycles equal); with equal
 * batches it spreads by about the ratio of the speeds.  A worker that slows
 * down mid-run is followed.  Plans imposed are checked.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ob_balance.h"
#include "ob_error.h"

#define W 4
#define B 256
/* A cycle of b samples: (ALPHA + BETA b) / speed + RTT seconds. */
#define ALPHA 2e-3
#define BETA 1e-4
#define RTT 5e-4

static uint64_t test_rng = 0x2545f4914f6cdd1dULL;

/* A factor in [1 - 0.05, 1 + 0.05]: timing noise. */
static double noise(void)
{
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 7;
    test_rng ^= test_rng << 17;
    return 1.0 + 0.1 * ((double) (test_rng >> 11) * 0x1.0p-53 - 0.5);
}

static double cycle(double speed, long batch)
{
    return (ALPHA + BETA * (double) batch) / speed + RTT;
}

typedef struct sim {
    double now;
    long version;
    double finish[W];
    double start[W];
    long batch[W];
    long read[W];
    double stale_sum[W];         /* over the pushes counted */
    long counted[W];
} sim;

static void sim_start(sim *s, const ob_balance *b, const double *speed)
{
    memset(s, 0, sizeof *s);
    for (int w = 0; w < W; w++) {
        s->batch[w] = ob_balance_batch(b, w);
        s->finish[w] = cycle(speed[w], s->batch[w]) * noise();
    }
}

/* \p pushes pushes in the order the cycles end; staleness counted when \p count. */
static void sim_run(sim *s, ob_balance *b, const double *speed, long pushes, int count)
{
    for (long k = 0; k < pushes; k++) {
        int w = 0;

        for (int j = 1; j < W; j++) {
            w = s->finish[j] < s->finish[w] ? j : w;
        }
        s->now = s->finish[w];
        if (count) {
            s->stale_sum[w] += (double) (s->version - s->read[w]);
            s->counted[w]++;
        }
        s->version++;
        ob_balance_observe(b, w, s->batch[w], s->now - s->start[w]);
        s->batch[w] = ob_balance_batch(b, w);
        s->read[w] = s->version;
        s->start[w] = s->now;
        s->finish[w] = s->now + cycle(speed[w], s->batch[w]) * noise();
    }
}

static void sim_clear(sim *s)
{
    memset(s->stale_sum, 0, sizeof s->stale_sum);
    memset(s->counted, 0, sizeof s->counted);
}

/* Largest over least of the workers' mean staleness. */
static double stale_spread(const sim *s)
{
    double lo = INFINITY, hi = 0.0;

    for (int w = 0; w < W; w++) {
        double m = s->counted[w] > 0 ? s->stale_sum[w] / (double) s->counted[w] : 0.0;

        lo = m < lo ? m : lo;
        hi = m > hi ? m : hi;
    }
    return hi / lo;
}

/* Largest over least of the workers' true cycles at the plan. */
static double cycle_spread(const ob_balance *b, const double *speed)
{
    double lo = INFINITY, hi = 0.0;

    for (int w = 0; w < W; w++) {
        double t = cycle(speed[w], ob_balance_batch(b, w));

        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    return hi / lo;
}

static void params(ob_balance_params *p, int adaptive)
{
    p->gain = 1.0;
    p->deadband = 0.02;
    p->granularity = 1;
    p->forget = 0.998;
    p->period = W;
    p->warmup = 1;
    p->adaptive = adaptive;
}

static const long lo[W] = { 1, 1, 1, 1 };
static const long hi[W] = { B, B, B, B };
static const double hl8[W] = { 6.0 / 32, 6.0 / 32, 4.0 / 32, 32.0 / 32 };

START_TEST(test_equal_rates_equal_staleness)
{
    ob_balance b;
    ob_balance_params p;
    sim s;
    long sum = 0;

    params(&p, 1);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    sim_start(&s, &b, hl8);
    sim_run(&s, &b, hl8, 2000, 0);
    sim_run(&s, &b, hl8, 4000, 1);
    for (int w = 0; w < W; w++) {
        sum += ob_balance_batch(&b, w);
    }
    ck_assert_int_eq(sum, B);
    ck_assert_msg(cycle_spread(&b, hl8) <= 1.1, "cycles spread %.3f", cycle_spread(&b, hl8));
    ck_assert_msg(stale_spread(&s) <= 1.5, "mean staleness spread %.3f", stale_spread(&s));
    ck_assert_int_gt(b.decisions, 0);
    ck_assert_int_gt(b.changes, 0);
    ob_balance_free(&b);
}
END_TEST

START_TEST(test_equal_batches_spread_staleness)
{
    ob_balance b;
    ob_balance_params p;
    sim s;

    params(&p, 0);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    for (int w = 0; w < W; w++) {
        ck_assert_int_eq(ob_balance_batch(&b, w), B / W);
    }
    sim_start(&s, &b, hl8);
    sim_run(&s, &b, hl8, 4000, 1);
    /* The plan never moved; the slowest worker (speed 4) is far staler than the fastest (32). */
    ck_assert_int_eq(b.changes, 0);
    ck_assert_msg(stale_spread(&s) >= 4.0, "mean staleness spread %.3f", stale_spread(&s));
    ob_balance_free(&b);
}
END_TEST

/* The fast worker becomes the slowest: the plan follows, continuously. */
START_TEST(test_follows_a_change_of_speed)
{
    ob_balance b;
    ob_balance_params p;
    sim s;
    double after[W] = { 6.0 / 32, 6.0 / 32, 4.0 / 32, 2.0 / 32 };

    params(&p, 1);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    sim_start(&s, &b, hl8);
    sim_run(&s, &b, hl8, 2000, 0);
    ck_assert_int_gt(ob_balance_batch(&b, 3), ob_balance_batch(&b, 0));
    sim_run(&s, &b, after, 1000, 0);
    sim_clear(&s);
    sim_run(&s, &b, after, 2000, 1);
    ck_assert_int_lt(ob_balance_batch(&b, 3), ob_balance_batch(&b, 0));
    ck_assert_msg(cycle_spread(&b, after) <= 1.15, "cycles spread %.3f", cycle_spread(&b, after));
    ck_assert_msg(stale_spread(&s) <= 1.5, "mean staleness spread %.3f", stale_spread(&s));
    ob_balance_free(&b);
}
END_TEST

/* A worker whose cycle at its least batch is longer than the others' at
 * any split of the rest (a large fixed part: a worker at a small CPU
 * quota): the plan holds it there, and the controller says so, with the
 * global batch at which every worker could cycle as long.  Under HL8 no
 * worker is bound. */
START_TEST(test_bound_at_the_least_batch)
{
    const double quota[W] = { 1.0, 1.0, 1.0, 0.05 };
    ob_balance b;
    ob_balance_params p;
    ob_balance_limit lim;
    sim s;
    double slow, need;

    params(&p, 1);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_balance_bound(&b, &lim), 0); /* no model yet */
    sim_start(&s, &b, hl8);
    sim_run(&s, &b, hl8, 2000, 0);
    ck_assert_int_eq(ob_balance_bound(&b, &lim), 0);
    ck_assert_int_eq(lim.worker, -1);
    sim_run(&s, &b, quota, 3000, 0);
    ck_assert_int_eq(ob_balance_batch(&b, 3), lo[3]);
    ck_assert_int_eq(ob_balance_bound(&b, &lim), 1);
    ck_assert_int_eq(lim.worker, 3);
    ck_assert_int_eq(lim.batch, lo[3]);
    slow = cycle(quota[3], lo[3]);
    /* Each fast worker's batch that lasts as long, and the slow one's. */
    need = 3.0 * ceil((slow - RTT - ALPHA) / BETA) + (double) lo[3];
    ck_assert_msg(fabs(lim.cycle_s / slow - 1.0) < 0.1, "cycle %g, true %g", lim.cycle_s, slow);
    ck_assert_msg(fabs(lim.level_s / cycle(1.0, (B - lo[3]) / 3) - 1.0) < 0.1, "level %g", lim.level_s);
    ck_assert_msg(fabs((double) lim.need / need - 1.0) < 0.15, "need %ld, true %g", lim.need, need);
    ck_assert_int_gt(lim.need, 2 * B);
    ob_balance_free(&b);
}
END_TEST

START_TEST(test_set_plan)
{
    ob_balance b;
    ob_balance_params p;
    long good[W] = { 16, 16, 128, 96 };
    long bad_sum[W] = { 16, 16, 128, 95 };
    long bad_bound[W] = { 0, 32, 128, 96 };

    params(&p, 0);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_balance_set_plan(&b, bad_sum), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_balance_batch(&b, 3), B / W);
    ck_assert_int_eq(ob_balance_set_plan(&b, bad_bound), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_balance_set_plan(&b, good), OMNIBATCH_SUCCESS);
    for (int w = 0; w < W; w++) {
        ck_assert_int_eq(ob_balance_batch(&b, w), good[w]);
    }
    ob_balance_free(&b);
}
END_TEST

START_TEST(test_bad_settings)
{
    ob_balance b;
    ob_balance_params p;
    long lo_big[W] = { 100, 100, 100, 100 };

    params(&p, 1);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo_big, hi, &p), OMNIBATCH_ERR_INFEASIBLE);
    p.period = 0;
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "period=0: expected >= 1 pushes");
    params(&p, 1);
    p.gain = 0.0;
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_ERR_ARG);
    params(&p, 1);
    ck_assert_int_eq(ob_balance_init(&b, 0, B, lo, hi, &p), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "workers=0: expected at least 1 worker");
}
END_TEST

static Suite *make_balance_suite(void)
{
    Suite *s = suite_create("balance");
    TCase *tc = tcase_create("rates");

    tcase_add_test(tc, test_equal_rates_equal_staleness);
    tcase_add_test(tc, test_equal_batches_spread_staleness);
    tcase_add_test(tc, test_follows_a_change_of_speed);
    tcase_add_test(tc, test_bound_at_the_least_batch);
    tcase_add_test(tc, test_set_plan);
    tcase_add_test(tc, test_bad_settings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_balance_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
