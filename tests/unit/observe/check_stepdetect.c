/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Step detection against synthetic timelines of a training code: every
 * step an optimiser update, a forward pass, then per bucket a backward chunk
 * and its gradient allreduce.  The generator knows each step's true compute
 * and blocked time, so the detector's steps are checked one by one.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_stepdetect.h"

#define MAX_STEPS 2000
#define COMM_WORLD 0x1000u
#define COMM_OTHER 0x2000u

/* ----------------------------------------------------------- the generator */

typedef struct sim {
    /* the code */
    int buckets;
    int64_t sizes[16];           /* elements per bucket */
    int elem;
    double opt, fwd, chunk, allreduce;   /* mean seconds */
    double noise;                /* uniform multiplicative noise: x * (1 +- noise) */
    double spikes;               /* probability that a duration is 20 times longer (a busy machine) */
    int nonblocking;             /* Iallreduce per bucket, then one wait per bucket */
    /* the run */
    uint64_t rng;
    double t;
    int step;                    /* step being generated */
    double truth_compute[MAX_STEPS];
    double truth_blocked[MAX_STEPS];
    /* what the detector reported */
    ob_step_record got[MAX_STEPS];
    int ngot;
    ob_stepdetect *det;
} sim;

static double sim_uniform(sim *s)
{
    /* xorshift64*: the same sequence on every machine. */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return (double) ((s->rng * UINT64_C(2685821657736338717)) >> 11) * 0x1.0p-53;
}

static double sim_noisy(sim *s, double mean)
{
    double x = mean * (1.0 + s->noise * (2.0 * sim_uniform(s) - 1.0));

    return s->spikes > 0.0 && sim_uniform(s) < s->spikes ? 20.0 * x : x;
}

static void sim_compute(sim *s, double mean)
{
    double dt = sim_noisy(s, mean);

    s->t += dt;
    if (s->step >= 0) {
        s->truth_compute[s->step] += dt;
    }
}

static void sim_call_on(sim *s, uint64_t comm, int64_t count, double mean)
{
    ob_call_sig sig = { comm, count, s->elem };
    double t0 = s->t, dt = sim_noisy(s, mean);

    s->t += dt;
    ob_stepdetect_call(s->det, &sig, t0, s->t, 100 + s->step);
    if (s->step >= 0) {
        if (COMM_WORLD == comm) {
            s->truth_blocked[s->step] += dt;
        } else {
            /* Another communicator's calls are not gradient traffic. */
            s->truth_compute[s->step] += dt;
        }
    }
}

static void sim_call(sim *s, int64_t count)
{
    sim_call_on(s, COMM_WORLD, count, s->nonblocking ? 1e-5 : s->allreduce);
}

static void sim_wait(sim *s)
{
    double t0 = s->t, dt = sim_noisy(s, s->allreduce);

    s->t += dt;
    ob_stepdetect_wait(s->det, COMM_WORLD, t0, s->t);
    s->truth_blocked[s->step] += dt;
}

/* One step; an extra call of `extra` elements after bucket 1 if extra > 0. */
static void sim_step(sim *s, int64_t extra)
{
    sim_compute(s, s->opt);
    sim_compute(s, s->fwd);
    for (int j = 0; j < s->buckets; j++) {
        sim_compute(s, s->chunk);
        sim_call(s, s->sizes[j]);
        if (1 == j && extra > 0) {
            sim_compute(s, s->chunk);
            sim_call(s, extra);
        }
    }
    for (int j = 0; s->nonblocking && j < s->buckets; j++) {
        sim_wait(s);
    }
    s->step++;
}

static void on_step(void *ctx, const ob_step_record *rec)
{
    sim *s = ctx;

    ck_assert_int_lt(s->ngot, MAX_STEPS);
    s->got[s->ngot++] = *rec;
}

static sim *sim_new(int buckets, const int64_t *sizes, double noise, long calls_per_step)
{
    sim *s = calloc(1, sizeof *s);

    ck_assert_ptr_nonnull(s);
    s->buckets = buckets;
    for (int j = 0; j < buckets; j++) {
        s->sizes[j] = sizes[j];
    }
    s->elem = 4;
    s->opt = 1e-3;
    s->fwd = 10e-3;
    s->chunk = 1e-3;
    s->allreduce = 2e-3;
    s->noise = noise;
    s->rng = UINT64_C(0x9E3779B97F4A7C15);
    s->t = 1.0;
    ck_assert_int_eq(ob_stepdetect_create(calls_per_step, on_step, s, &s->det), 0);
    return s;
}

static void sim_free(sim *s)
{
    ob_stepdetect_destroy(s->det);
    free(s);
}

/* Reported step r is true step `truth`: same calls, compute and blocked. */
static void assert_step(const sim *s, int r, int truth, long calls)
{
    ck_assert_int_eq(s->got[r].calls, calls);
    ck_assert_double_eq_tol(s->got[r].compute, s->truth_compute[truth], 1e-9);
    ck_assert_double_eq_tol(s->got[r].blocked, s->truth_blocked[truth], 1e-9);
    ck_assert_int_eq(s->got[r].batch, 100 + truth);
}

/* Run `steps` clean steps; every step but the first (no start known) must
 * come back exactly, with the period and the rule expected. */
static void run_clean(int buckets, const int64_t *sizes, double noise, long given, int steps,
                      ob_step_rule rule)
{
    sim *s = sim_new(buckets, sizes, noise, given);
    long period;
    ob_step_rule got_rule;

    for (int k = 0; k < steps; k++) {
        sim_step(s, 0);
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, &got_rule), 1);
    ck_assert_int_eq(period, buckets);
    ck_assert_int_eq(got_rule, rule);
    ck_assert_int_eq(s->ngot, steps - 1);
    for (int r = 0; r < s->ngot; r++) {
        ck_assert_int_eq(s->got[r].index, r + 1);
        assert_step(s, r, r + 1, buckets);
    }
    sim_free(s);
}

/* ------------------------------------------------------------------ tests */

static const int64_t equal7[7] = { 50000, 50000, 50000, 50000, 50000, 50000, 50000 };
static const int64_t unequal7[7] = { 70000, 20000, 90000, 20000, 5000, 60000, 30000 };

START_TEST(test_one_bucket)
{
    run_clean(1, equal7, 0.3, 0, 200, OB_STEP_RULE_SIGNATURE);
}
END_TEST

START_TEST(test_three_unequal_buckets)
{
    run_clean(3, unequal7, 0.3, 0, 200, OB_STEP_RULE_SIGNATURE);
}
END_TEST

START_TEST(test_three_equal_buckets_by_gaps)
{
    run_clean(3, equal7, 0.3, 0, 200, OB_STEP_RULE_GAP);
}
END_TEST

START_TEST(test_seven_equal_buckets_by_gaps)
{
    run_clean(7, equal7, 0.3, 0, 200, OB_STEP_RULE_GAP);
}
END_TEST

START_TEST(test_seven_unequal_buckets)
{
    run_clean(7, unequal7, 0.3, 0, 200, OB_STEP_RULE_SIGNATURE);
}
END_TEST

START_TEST(test_repeated_size_inside_pattern)
{
    /* A B A: the first signature comes back inside the step. */
    static const int64_t aba[3] = { 40000, 10000, 40000 };

    run_clean(3, aba, 0.3, 0, 200, OB_STEP_RULE_GAP);
}
END_TEST

START_TEST(test_given_calls_per_step_when_nothing_tells_steps_apart)
{
    /* Equal buckets and equal gaps: only the given count can tell. */
    sim *s = sim_new(4, equal7, 0.0, 4);
    long period;
    ob_step_rule rule;

    s->fwd = 0.0;
    s->opt = 0.0;
    for (int k = 0; k < 50; k++) {
        sim_step(s, 0);
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, &rule), 1);
    ck_assert_int_eq(period, 4);
    ck_assert_int_eq(rule, OB_STEP_RULE_COUNT);
    ck_assert_int_eq(s->ngot, 49);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, r + 1, 4);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_without_any_clue_each_call_is_a_step)
{
    /* The same situation without the count: one call per step is all that
     * can be said, and the totals stay right. */
    sim *s = sim_new(4, equal7, 0.0, 0);
    long period;
    double compute = 0.0, truth = 0.0;

    s->fwd = 0.0;
    s->opt = 0.0;
    for (int k = 0; k < 100; k++) {
        sim_step(s, 0);
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, NULL), 1);
    ck_assert_int_eq(period, 1);
    ck_assert_int_eq(s->ngot, 399);
    for (int r = 0; r < s->ngot; r++) {
        compute += s->got[r].compute;
    }
    for (int k = 0; k < 100; k++) {
        truth += s->truth_compute[k];
    }
    /* Only the compute before the very first call is not seen. */
    ck_assert_double_eq_tol(compute, truth - s->chunk, 1e-9);
    sim_free(s);
}
END_TEST

START_TEST(test_warmup_calls_are_not_a_step)
{
    /* Five calls of their own sizes first (parameters broadcast by
     * allreduce), then 3 unequal buckets per step. */
    sim *s = sim_new(3, unequal7, 0.3, 0);
    long period;

    s->step = -1;
    for (int j = 0; j < 5; j++) {
        sim_compute(s, 5e-3);
        sim_call(s, 1000 + 17 * j);
    }
    s->step = 0;
    for (int k = 0; k < 150; k++) {
        sim_step(s, 0);
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, NULL), 1);
    ck_assert_int_eq(period, 3);
    /* The warm-up calls end where step 0 starts: every step is known. */
    ck_assert_int_eq(s->ngot, 150);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, r, 3);
    }
    sim_free(s);
}
END_TEST

static void run_extra_call(const int64_t *sizes, int64_t extra, ob_step_rule rule)
{
    sim *s = sim_new(3, sizes, 0.2, 0);
    ob_step_rule got_rule;

    for (int k = 0; k < 120; k++) {
        sim_step(s, 60 == k ? extra : 0);
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, NULL, &got_rule), 1);
    ck_assert_int_eq(got_rule, rule);
    ck_assert_int_eq(s->ngot, 119);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, r + 1, 60 == r + 1 ? 4 : 3);
    }
    sim_free(s);
}

START_TEST(test_step_with_an_extra_call_of_its_own_size)
{
    run_extra_call(unequal7, 333, OB_STEP_RULE_SIGNATURE);
}
END_TEST

START_TEST(test_step_with_an_extra_call_like_the_others)
{
    run_extra_call(equal7, equal7[0], OB_STEP_RULE_GAP);
}
END_TEST

START_TEST(test_nonblocking_waits_count_as_blocked)
{
    sim *s = sim_new(3, unequal7, 0.3, 0);

    s->nonblocking = 1;
    for (int k = 0; k < 100; k++) {
        sim_step(s, 0);
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(s->ngot, 99);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, r + 1, 3);
        /* Blocked is mostly the waits: three of ~2 ms each. */
        ck_assert_double_gt(s->got[r].blocked, 3e-3);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_other_communicator_is_ignored)
{
    sim *s = sim_new(3, unequal7, 0.3, 0);

    for (int k = 0; k < 100; k++) {
        sim_step(s, 0);
        /* A metrics allreduce on another communicator after each step. */
        sim_call_on(s, COMM_OTHER, 4096, 1e-4);
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_ignored(s->det), 100);
    ck_assert_int_eq(s->ngot, 99);
    for (int r = 0; r < s->ngot; r++) {
        /* The metrics call after step r is compute of step r + 1. */
        assert_step(s, r, r + 1, 3);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_pause_drops_the_steps_it_touches)
{
    sim *s = sim_new(3, unequal7, 0.2, 0);
    int expect[200], nexpect = 0;

    for (int k = 0; k < 100; k++) {
        if (50 == k) {
            /* Pcontrol(0) inside step 50 after its first call, on again
             * before step 52: calls in between are not fed. */
            sim_compute(s, s->opt);
            sim_compute(s, s->fwd);
            sim_compute(s, s->chunk);
            sim_call(s, s->sizes[0]);
            ob_stepdetect_pause(s->det);
            s->t += 0.5;
            s->step = 52;
            continue;
        }
        if (51 == k) {
            continue;
        }
        sim_step(s, 0);
    }
    ob_stepdetect_finish(s->det);
    for (int k = 1; k < 100; k++) {
        /* 50 is cut, 52 starts without a known beginning. */
        if (50 != k && 51 != k && 52 != k) {
            expect[nexpect++] = k;
        }
    }
    ck_assert_int_eq(s->ngot, nexpect);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, expect[r], 3);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_pause_between_steps_keeps_the_finished_one)
{
    sim *s = sim_new(3, unequal7, 0.2, 0);
    int expect[200], nexpect = 0;

    for (int k = 0; k < 100; k++) {
        if (60 == k) {
            /* Pcontrol(0) right after step 59, on again before step 70. */
            ob_stepdetect_pause(s->det);
            s->t += 0.5;
            s->step = 70;
            k = 69;
            continue;
        }
        sim_step(s, 0);
    }
    ob_stepdetect_finish(s->det);
    for (int k = 1; k < 100; k++) {
        /* 59 was whole when recording stopped; 70 starts unseen. */
        if ((k < 60 || k > 70)) {
            expect[nexpect++] = k;
        }
    }
    ck_assert_int_eq(s->ngot, nexpect);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, expect[r], 3);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_short_run_is_settled_at_finish)
{
    sim *s = sim_new(3, unequal7, 0.3, 0);
    long period;

    for (int k = 0; k < 8; k++) {
        sim_step(s, 0);
    }
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, NULL), 0);
    ck_assert_int_eq(period, 0);
    ck_assert_int_eq(s->ngot, 0);
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, NULL), 1);
    ck_assert_int_eq(period, 3);
    ck_assert_int_eq(s->ngot, 7);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, r + 1, 3);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_incomplete_last_step_is_not_reported)
{
    sim *s = sim_new(3, unequal7, 0.3, 0);

    for (int k = 0; k < 40; k++) {
        sim_step(s, 0);
    }
    sim_compute(s, s->opt);
    sim_call(s, s->sizes[0]);
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(s->ngot, 39);
    sim_free(s);
}
END_TEST

/* An oversubscribed machine: one duration in eight is twenty times too
 * long.  Steps must not merge into a multiple of the true period. */
static void run_spiky(int buckets, const int64_t *sizes, ob_step_rule rule)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        sim *s = sim_new(buckets, sizes, 0.3, 0);
        long period;
        ob_step_rule got_rule;

        s->rng = UINT64_C(0x9E3779B97F4A7C15) * seed;
        s->spikes = 0.125;
        for (int k = 0; k < 30; k++) {
            sim_step(s, 0);
        }
        ob_stepdetect_finish(s->det);
        ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, &got_rule), 1);
        ck_assert_msg(period == buckets, "seed %d: period %ld, expected %d", (int) seed, period, buckets);
        ck_assert_int_eq(got_rule, rule);
        ck_assert_int_eq(s->ngot, 29);
        for (int r = 0; r < s->ngot; r++) {
            assert_step(s, r, r + 1, buckets);
        }
        sim_free(s);
    }
}

START_TEST(test_spiky_timings_three_unequal_buckets)
{
    run_spiky(3, unequal7, OB_STEP_RULE_SIGNATURE);
}
END_TEST

START_TEST(test_spiky_timings_one_bucket)
{
    run_spiky(1, unequal7, OB_STEP_RULE_SIGNATURE);
}
END_TEST

START_TEST(test_given_count_beyond_what_can_be_found)
{
    /* One allreduce per parameter tensor, more per step than the history
     * holds in three cycles: the given count still cuts the steps. */
    sim *s = sim_new(1, equal7, 0.0, 1500);
    long period;

    for (int k = 0; k < 6; k++) {
        sim_compute(s, s->fwd);
        for (int j = 0; j < 1500; j++) {
            sim_compute(s, 1e-5);
            sim_call_on(s, COMM_WORLD, 2000, 1e-5);
        }
        s->step++;
    }
    ob_stepdetect_finish(s->det);
    ck_assert_int_eq(ob_stepdetect_pattern(s->det, &period, NULL), 1);
    ck_assert_int_eq(period, 1500);
    ck_assert_int_eq(s->ngot, 5);
    for (int r = 0; r < s->ngot; r++) {
        assert_step(s, r, r + 1, 1500);
    }
    sim_free(s);
}
END_TEST

/* Weighting asks before each call whether it is one of the pattern's: never
 * before the pattern is fixed, then for whole steps only, and never for a
 * call on another communicator, out of its place, or past the step's count. */
START_TEST(test_expects_only_the_patterns_calls_in_whole_steps)
{
    static const int64_t sizes[3] = { 20000, 5000, 12000 };
    ob_stepdetect *det;
    sim s;
    int first = -1;
    double t = 0.0;

    memset(&s, 0, sizeof s);
    ck_assert_int_eq(ob_stepdetect_create(0, on_step, &s, &det), 0);
    for (int k = 0; k < 60; k++) {
        int yes = 0;

        t += 0.010;                           /* optimiser and forward pass */
        for (int b = 0; b < 3; b++) {
            ob_call_sig sig = { COMM_WORLD, sizes[b], 4 };
            ob_call_sig other = { COMM_OTHER, sizes[b], 4 };
            ob_call_sig misplaced = { COMM_WORLD, sizes[(b + 1) % 3], 4 };

            t += 0.001;                       /* backward chunk */
            ck_assert(!ob_stepdetect_expects(det, &other, t));
            /* (The first bucket's signature always begins a step.) */
            ck_assert(2 == b || !ob_stepdetect_expects(det, &misplaced, t));
            yes += ob_stepdetect_expects(det, &sig, t);
            ob_stepdetect_call(det, &sig, t, t + 0.0005, 32);
            t += 0.0005;
        }
        /* Whole steps: all three calls, or none. */
        ck_assert_msg(0 == yes || 3 == yes, "step %d: %d of its 3 calls expected", k, yes);
        if (3 == yes && first < 0) {
            first = k;
        }
        ck_assert_msg(first < 0 || 3 == yes, "step %d: not expected after step %d was", k, first);
        {
            /* A fourth call of a bucket's size at the step's end is not the pattern's. */
            ob_call_sig extra = { COMM_WORLD, sizes[1], 4 };

            ck_assert(!ob_stepdetect_expects(det, &extra, t + 0.0001));
        }
    }
    ck_assert_msg(first > 0 && first <= 30, "the pattern's calls were expected from step %d", first);
    ob_stepdetect_destroy(det);
}
END_TEST

START_TEST(test_create_rejects_bad_arguments)
{
    ob_stepdetect *d = NULL;

    ck_assert_int_ne(ob_stepdetect_create(0, NULL, NULL, &d), 0);
    ck_assert_int_ne(ob_stepdetect_create(-1, on_step, NULL, &d), 0);
    ck_assert_ptr_null(d);
}
END_TEST

static Suite *make_stepdetect_suite(void)
{
    Suite *s = suite_create("stepdetect");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_one_bucket);
    tcase_add_test(tc, test_expects_only_the_patterns_calls_in_whole_steps);
    tcase_add_test(tc, test_three_unequal_buckets);
    tcase_add_test(tc, test_three_equal_buckets_by_gaps);
    tcase_add_test(tc, test_seven_equal_buckets_by_gaps);
    tcase_add_test(tc, test_seven_unequal_buckets);
    tcase_add_test(tc, test_repeated_size_inside_pattern);
    tcase_add_test(tc, test_given_calls_per_step_when_nothing_tells_steps_apart);
    tcase_add_test(tc, test_without_any_clue_each_call_is_a_step);
    tcase_add_test(tc, test_warmup_calls_are_not_a_step);
    tcase_add_test(tc, test_step_with_an_extra_call_of_its_own_size);
    tcase_add_test(tc, test_step_with_an_extra_call_like_the_others);
    tcase_add_test(tc, test_nonblocking_waits_count_as_blocked);
    tcase_add_test(tc, test_other_communicator_is_ignored);
    tcase_add_test(tc, test_pause_drops_the_steps_it_touches);
    tcase_add_test(tc, test_pause_between_steps_keeps_the_finished_one);
    tcase_add_test(tc, test_short_run_is_settled_at_finish);
    tcase_add_test(tc, test_incomplete_last_step_is_not_reported);
    tcase_add_test(tc, test_spiky_timings_three_unequal_buckets);
    tcase_add_test(tc, test_spiky_timings_one_bucket);
    tcase_add_test(tc, test_given_count_beyond_what_can_be_found);
    tcase_add_test(tc, test_create_rejects_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_stepdetect_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
