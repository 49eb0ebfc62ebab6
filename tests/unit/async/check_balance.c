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
 * down mid-run is followed.  A worker under a CPU quota, which the kernel
 * stops once a period's budget is spent, is learnt on its CPU over the
 * quota, and pushes as often as the others.  Plans imposed are checked.
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
    p->max_total = 0;
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

/* The sum of the plan's batches. */
static long plan_sum(const ob_balance *b)
{
    long sum = 0;

    for (int w = 0; w < W; w++) {
        sum += ob_balance_batch(b, w);
    }
    return sum;
}

/* The same bound worker with max_total allowing a larger sum: the batches
 * sum to what lets every worker cycle as long as it does at its least
 * batch, and the workers push at one rate (staleness spread 3.5 and more
 * at the global batch); capped, the sum is the cap and the bound is still
 * said.  Where no worker is bound (HL8) the sum stays B. */
START_TEST(test_grows_where_bound)
{
    const double quota[W] = { 1.0, 1.0, 1.0, 0.1 };
    const double slow = cycle(quota[3], lo[3]);
    const double need = 3.0 * ceil((slow - RTT - ALPHA) / BETA) + (double) lo[3];
    ob_balance b;
    ob_balance_params p;
    ob_balance_limit lim;
    sim s;
    double kept;

    params(&p, 1);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    sim_start(&s, &b, quota);
    sim_run(&s, &b, quota, 3000, 0);
    sim_run(&s, &b, quota, 3000, 1);
    kept = stale_spread(&s);
    ck_assert_int_eq(plan_sum(&b), B);
    ck_assert_msg(kept > 2.0, "mean staleness spread %.3f at the global batch", kept);
    ob_balance_free(&b);

    p.max_total = 4 * B;
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(b.total, B);
    sim_start(&s, &b, quota);
    sim_run(&s, &b, quota, 3000, 0);
    sim_run(&s, &b, quota, 3000, 1);
    ck_assert_int_eq(ob_balance_batch(&b, 3), lo[3]);
    ck_assert_int_eq(plan_sum(&b), b.total);
    ck_assert_msg(fabs((double) b.total / need - 1.0) < 0.15, "sum %ld, needed %g", b.total, need);
    ck_assert_msg(cycle_spread(&b, quota) <= 1.15, "cycles spread %.3f", cycle_spread(&b, quota));
    ck_assert_msg(stale_spread(&s) <= 1.5, "mean staleness spread %.3f (%.3f at the global batch)",
                  stale_spread(&s), kept);
    ck_assert_int_eq(ob_balance_bound(&b, &lim), 0);
    ob_balance_free(&b);

    p.max_total = B + B / 4;
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    sim_start(&s, &b, quota);
    sim_run(&s, &b, quota, 3000, 0);
    ck_assert_int_eq(plan_sum(&b), B + B / 4);
    ck_assert_int_eq(ob_balance_bound(&b, &lim), 1);
    ck_assert_int_eq(lim.worker, 3);
    ob_balance_free(&b);

    p.max_total = 4 * B;
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    sim_start(&s, &b, hl8);
    sim_run(&s, &b, hl8, 2000, 0);
    ck_assert_int_eq(plan_sum(&b), B);
    ck_assert_msg(cycle_spread(&b, hl8) <= 1.1, "cycles spread %.3f", cycle_spread(&b, hl8));
    /* Back to B once the worker is no longer bound. */
    sim_run(&s, &b, quota, 3000, 0);
    ck_assert_int_gt(plan_sum(&b), 2 * B);
    sim_run(&s, &b, hl8, 3000, 0);
    ck_assert_int_eq(plan_sum(&b), B);
    ob_balance_free(&b);
}
END_TEST

/* A worker under a CPU quota of q cores over periods of QUOTA_PERIOD: it
 * runs at full speed while the period's budget lasts, and the kernel stops
 * it until the next period when it is spent. */
#define QUOTA_PERIOD 0.1

typedef struct throttle {
    double q;
    double left;                 /* CPU left in the period */
    double end;                  /* when the period ends */
} throttle;

/* The time at which a worker that starts at \p t with \p cpu of CPU to spend is through. */
static double throttle_run(throttle *th, double t, double cpu)
{
    while (cpu > 0.0) {
        double run;

        while (t >= th->end) {
            th->end += QUOTA_PERIOD;
            th->left = th->q * QUOTA_PERIOD;
        }
        run = fmin(cpu, fmin(th->left, th->end - t));
        t += run;
        cpu -= run;
        th->left -= run;
        if (cpu > 0.0 && th->left <= 0.0) {
            t = th->end;     /* stopped until the period ends */
        }
    }
    return t;
}

/* Workers 0-2 on a whole core, worker 3 under a quota of 0.4 cores, pushing
 * for \p pushes: the pushes of each over the last half, each cycle learnt
 * through ob_quota_cycle_learn() when \p on_cpu, else as its wall. */
static void quota_run(int on_cpu, long pushes, long *counted)
{
    const double quota[W] = { 0.0, 0.0, 0.0, 0.4 };
    ob_balance b;
    ob_balance_params p;
    ob_quota_cycle qc[W];
    throttle th = { quota[3], 0.0, 0.0 };
    double start[W], finish[W], cpu[W];
    long batch[W];

    params(&p, 1);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    memset(qc, 0, sizeof qc);
    memset(counted, 0, W * sizeof *counted);
    for (int w = 0; w < W; w++) {
        start[w] = 0.0;
        batch[w] = ob_balance_batch(&b, w);
        cpu[w] = (ALPHA + BETA * (double) batch[w]) * noise();
        finish[w] = (w == 3 ? throttle_run(&th, 0.0, cpu[w]) : cpu[w]) + RTT;
    }
    for (long k = 0; k < pushes; k++) {
        int w = 0;
        double now, wall;

        for (int j = 1; j < W; j++) {
            w = finish[j] < finish[w] ? j : w;
        }
        now = finish[w];
        wall = now - start[w];
        ob_balance_observe(&b, w, batch[w],
                           on_cpu ? ob_quota_cycle_learn(&qc[w], quota[w], wall, cpu[w]) : wall);
        counted[w] += k >= pushes / 2;
        batch[w] = ob_balance_batch(&b, w);
        cpu[w] = (ALPHA + BETA * (double) batch[w]) * noise();
        start[w] = now;
        finish[w] = (w == 3 ? throttle_run(&th, now, cpu[w]) : now + cpu[w]) + RTT;
    }
    ob_balance_free(&b);
}

/* Largest over least of \p n counts. */
static double count_spread(const long *n)
{
    long lo_n = n[0], hi_n = n[0];

    for (int w = 1; w < W; w++) {
        lo_n = n[w] < lo_n ? n[w] : lo_n;
        hi_n = n[w] > hi_n ? n[w] : hi_n;
    }
    return (double) hi_n / (double) (lo_n > 0 ? lo_n : 1);
}

/* A worker under a CPU quota cycles at full speed until its period's budget
 * is spent, then waits for the next period: learnt on its walls, the
 * estimator takes the long cycle for an outlier and the worker for a whole
 * core, and it pushes far less often than the others.  Learnt on its CPU
 * over its quota, the push rates are equal. */
START_TEST(test_quota_worker_learnt_on_its_cpu)
{
    long walls[W], cpus[W];

    quota_run(0, 8000, walls);
    quota_run(1, 8000, cpus);
    ck_assert_msg(count_spread(walls) > 1.5, "on its walls: pushes %ld %ld %ld %ld", walls[0], walls[1],
                  walls[2], walls[3]);
    ck_assert_msg(count_spread(cpus) < 1.1, "on its CPU: pushes %ld %ld %ld %ld", cpus[0], cpus[1],
                  cpus[2], cpus[3]);
}
END_TEST

/* Learn \p n cycles of \p wall and \p cpu seconds; the last one's answer. */
static double learn_many(ob_quota_cycle *q, double quota, long n, double wall, double cpu)
{
    double t = 0.0;

    for (long k = 0; k < n; k++) {
        t = ob_quota_cycle_learn(q, quota, wall, cpu);
    }
    return t;
}

/* Without a quota, or with the CPU unknown, a cycle is learnt as its wall;
 * with one, as the wall its CPU took over the last second, stops and waits
 * included, and at least its CPU over the quota. */
START_TEST(test_quota_cycle)
{
    ob_quota_cycle q;
    double t = 0.0;

    memset(&q, 0, sizeof q);
    ck_assert_double_eq(ob_quota_cycle_learn(&q, 0.0, 0.003, 0.002), 0.003);
    ck_assert_double_eq(ob_quota_cycle_learn(&q, 0.5, 0.003, -1.0), 0.003);
    ck_assert_double_eq(q.wall, 0.0);
    /* Under 0.1 cores, before any stop: 2 ms of CPU need 20 ms. */
    ck_assert_double_eq_tol(ob_quota_cycle_learn(&q, 0.1, 0.0025, 0.002), 0.020, 1e-12);
    /* Stopped once a period: four cycles of 2 ms at full speed, the fifth 92 ms. */
    for (int period = 0; period < 50; period++) {
        (void) learn_many(&q, 0.1, 4, 0.002, 0.002);
        t = ob_quota_cycle_learn(&q, 0.1, 0.092, 0.002);
    }
    ck_assert_double_eq_tol(t, 0.020, 0.020 * 0.1);
    /* Waiting for the server besides: 30 ms a cycle for the same CPU. */
    t = learn_many(&q, 0.1, 200, 0.030, 0.002);
    ck_assert_double_eq_tol(t, 0.030, 0.030 * 0.01);
    /* Crowded under 0.5 cores: 10 ms a cycle, 4 ms by the CPU alone. */
    memset(&q, 0, sizeof q);
    t = learn_many(&q, 0.5, 300, 0.010, 0.002);
    ck_assert_double_eq_tol(t, 0.010, 1e-9);
    /* Uncrowded again: after five seconds the window holds 1% of the old, and the quota
     * bounds it. */
    t = learn_many(&q, 0.5, 2500, 0.002, 0.002);
    ck_assert_double_eq_tol(t, 0.004, 0.004 * 0.05);
    ck_assert_double_ge(t, 0.004);
}
END_TEST

START_TEST(test_set_plan)
{
    ob_balance b;
    ob_balance_params p;
    long good[W] = { 16, 16, 128, 96 };
    long bad_sum[W] = { 16, 16, 128, 95 };
    long bad_bound[W] = { 0, 32, 128, 96 };
    long big[W] = { 128, 128, 128, 127 };

    params(&p, 0);
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_balance_set_plan(&b, bad_sum), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_balance_batch(&b, 3), B / W);
    ck_assert_int_eq(ob_balance_set_plan(&b, bad_bound), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_balance_set_plan(&b, good), OMNIBATCH_SUCCESS);
    for (int w = 0; w < W; w++) {
        ck_assert_int_eq(ob_balance_batch(&b, w), good[w]);
    }
    /* A larger sum only where max_total allows it. */
    ck_assert_int_eq(ob_balance_set_plan(&b, big), OMNIBATCH_ERR_ARG);
    ob_balance_free(&b);
    p.max_total = 2 * B;
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(ob_balance_set_plan(&b, big), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(b.total, 2 * B - 1);
    ck_assert_int_eq(ob_balance_set_plan(&b, good), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(b.total, B);
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
    params(&p, 1);
    p.max_total = -1;
    ck_assert_int_eq(ob_balance_init(&b, W, B, lo, hi, &p), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "max_total=-1: expected 0 (the global batch) or up to 1125899906842624");
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
    tcase_add_test(tc, test_grows_where_bound);
    tcase_add_test(tc, test_quota_worker_learnt_on_its_cpu);
    tcase_add_test(tc, test_quota_cycle);
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
