/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Speed schedules: which rank, which factor, at which step.
 */
#include "config.h"

#include <check.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "schedule.h"

static hetsgd_schedule *make(hetsgd_schedule_kind kind, int P, const double *base, long total, uint64_t seed)
{
    hetsgd_schedule *s = NULL;

    ck_assert_int_eq(hetsgd_schedule_create(kind, P, base, total, seed, &s), OMNIBATCH_SUCCESS);
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(test_none_keeps_normalised_base_speeds)
{
    const double base[4] = { 2.0, 2.0, 1.0, 0.5 };
    hetsgd_schedule *s = make(HETSGD_SCHEDULE_NONE, 4, base, 100, 1);
    double v[4];

    for (long k = 0; k < 100; k += 33) {
        hetsgd_schedule_speeds(s, k, v);
        ck_assert_double_eq(v[0], 1.0);
        ck_assert_double_eq(v[1], 1.0);
        ck_assert_double_eq(v[2], 0.5);
        ck_assert_double_eq(v[3], 0.25);
        ck_assert_int_eq(hetsgd_schedule_changes_at(s, k), 0 == k);
    }
    ck_assert_double_eq_tol(hetsgd_schedule_peak_demand(s, NULL, 0), 2.75, 1e-12);
    /* Ranks 2 and 3 alone (say, on a node of their own) demand 0.75 cores. */
    ck_assert_double_eq_tol(hetsgd_schedule_peak_demand(s, (const int[]) { 2, 3 }, 2), 0.75, 1e-12);
    hetsgd_schedule_destroy(s);
}
END_TEST

START_TEST(test_ramp_walks_omnilearn_levels)
{
    const double base[4] = { 1, 1, 1, 1 };
    hetsgd_schedule *s = make(HETSGD_SCHEDULE_RAMP, 4, base, 70, 1);
    double v[4];

    /* 70 steps, 7 phases of 10: HL1 HL2 HL4 HL8 HL4 HL2 HL1. */
    hetsgd_schedule_speeds(s, 0, v);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq(v[i], 12.0 / 32.0);
    }
    hetsgd_schedule_speeds(s, 15, v);              /* HL2 = 12,12,8,16 */
    ck_assert_double_eq(v[0], 12.0 / 32.0);
    ck_assert_double_eq(v[2], 8.0 / 32.0);
    ck_assert_double_eq(v[3], 16.0 / 32.0);
    hetsgd_schedule_speeds(s, 25, v);              /* HL4 = 9,9,6,24 */
    ck_assert_double_eq(v[1], 9.0 / 32.0);
    ck_assert_double_eq(v[2], 6.0 / 32.0);
    ck_assert_double_eq(v[3], 24.0 / 32.0);
    hetsgd_schedule_speeds(s, 35, v);              /* HL8 = 6,6,4,32 */
    ck_assert_double_eq(v[0], 6.0 / 32.0);
    ck_assert_double_eq(v[2], 4.0 / 32.0);
    ck_assert_double_eq(v[3], 1.0);
    ck_assert_double_eq(v[3] / v[2], 8.0);
    hetsgd_schedule_speeds(s, 45, v);              /* back down: HL4 */
    ck_assert_double_eq(v[3], 24.0 / 32.0);
    hetsgd_schedule_speeds(s, 69, v);              /* HL1 again */
    ck_assert_double_eq(v[3], 12.0 / 32.0);
    for (long k = 1; k < 70; k++) {
        ck_assert_int_eq(hetsgd_schedule_changes_at(s, k), 0 == k % 10);
    }
    /* Every level holds 48 cores: the capacity is that of 48 / 32 = 1.5 fast ranks. */
    ck_assert_double_eq_tol(hetsgd_schedule_peak_demand(s, NULL, 0), 1.5, 1e-12);
    /* The fast rank alone peaks at HL8, where it has 32 of 32 cores. */
    ck_assert_double_eq_tol(hetsgd_schedule_peak_demand(s, (const int[]) { 3 }, 1), 1.0, 1e-12);
    ck_assert_int_eq(hetsgd_ramp_level(3), 8);
    hetsgd_schedule_destroy(s);
}
END_TEST

START_TEST(test_ramp_roles_for_other_rank_counts)
{
    const double base[6] = { 1, 1, 1, 1, 1, 1 };
    hetsgd_schedule *s;
    double v[6];

    /* Two ranks play slow and fast. */
    s = make(HETSGD_SCHEDULE_RAMP, 2, base, 7, 1);
    hetsgd_schedule_speeds(s, 3, v);
    ck_assert_double_eq(v[0], 4.0 / 32.0);
    ck_assert_double_eq(v[1], 1.0);
    hetsgd_schedule_destroy(s);
    /* Six ranks: middle, middle, slow, fast, then middle, middle. */
    s = make(HETSGD_SCHEDULE_RAMP, 6, base, 7, 1);
    hetsgd_schedule_speeds(s, 3, v);
    ck_assert_double_eq(v[2], 4.0 / 32.0);
    ck_assert_double_eq(v[3], 1.0);
    ck_assert_double_eq(v[4], 6.0 / 32.0);
    ck_assert_double_eq(v[5], 6.0 / 32.0);
    hetsgd_schedule_destroy(s);
}
END_TEST

START_TEST(test_transient_events_follow_the_rules)
{
    const double base[4] = { 1.0, 1.0, 0.5, 0.25 };
    hetsgd_schedule *s = make(HETSGD_SCHEDULE_TRANSIENT, 4, base, 2000, 9);
    const hetsgd_slowdown_event *e;
    int n;
    long end = 0;
    int ranks_hit[4] = { 0, 0, 0, 0 };

    e = hetsgd_schedule_events(s, &n);
    /* 2000 steps of events and gaps of 20 to 60: between 16 and 50 events. */
    ck_assert_int_ge(n, 2000 / 120);
    ck_assert_int_le(n, 2000 / 40);
    for (int k = 0; k < n; k++) {
        double v[4];

        ck_assert_int_ge(e[k].first - end, HETSGD_TRANSIENT_MIN_STEPS);
        ck_assert_int_le(e[k].first - end, HETSGD_TRANSIENT_MAX_STEPS);
        ck_assert_int_ge(e[k].steps, HETSGD_TRANSIENT_MIN_STEPS);
        ck_assert_int_le(e[k].steps, HETSGD_TRANSIENT_MAX_STEPS);
        ck_assert_double_ge(e[k].factor, HETSGD_TRANSIENT_MIN_FACTOR);
        ck_assert_double_le(e[k].factor, HETSGD_TRANSIENT_MAX_FACTOR);
        ck_assert_int_ge(e[k].rank, 0);
        ck_assert_int_lt(e[k].rank, 4);
        ranks_hit[e[k].rank] = 1;
        end = e[k].first + e[k].steps;

        /* Inside the event only its rank is slowed, by its factor. */
        hetsgd_schedule_speeds(s, e[k].first, v);
        for (int i = 0; i < 4; i++) {
            ck_assert_double_eq_tol(v[i], i == e[k].rank ? base[i] / e[k].factor : base[i], 1e-15);
        }
        ck_assert(hetsgd_schedule_changes_at(s, e[k].first));
        hetsgd_schedule_speeds(s, end - 1, v);
        ck_assert_double_eq_tol(v[e[k].rank], base[e[k].rank] / e[k].factor, 1e-15);
        /* Right after it, all are back to base. */
        if (end < 2000) {
            hetsgd_schedule_speeds(s, end, v);
            for (int i = 0; i < 4; i++) {
                ck_assert_double_eq(v[i], base[i]);
            }
            ck_assert(hetsgd_schedule_changes_at(s, end));
            ck_assert(!hetsgd_schedule_changes_at(s, end + 1));
        }
    }
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(ranks_hit[i], "rank %d never slowed in %d events", i, n);
    }
    hetsgd_schedule_destroy(s);
}
END_TEST

START_TEST(test_transient_events_depend_only_on_the_seed)
{
    const double base[3] = { 1, 1, 1 };
    hetsgd_schedule *a = make(HETSGD_SCHEDULE_TRANSIENT, 3, base, 500, 4);
    hetsgd_schedule *b = make(HETSGD_SCHEDULE_TRANSIENT, 3, base, 500, 4);
    hetsgd_schedule *c = make(HETSGD_SCHEDULE_TRANSIENT, 3, base, 500, 5);
    int na, nb, nc, differ = 0;
    const hetsgd_slowdown_event *ea = hetsgd_schedule_events(a, &na);
    const hetsgd_slowdown_event *eb = hetsgd_schedule_events(b, &nb);
    const hetsgd_slowdown_event *ec = hetsgd_schedule_events(c, &nc);

    ck_assert_int_eq(na, nb);
    for (int k = 0; k < na; k++) {
        ck_assert_int_eq(ea[k].first, eb[k].first);
        ck_assert_int_eq(ea[k].rank, eb[k].rank);
        ck_assert_double_eq(ea[k].factor, eb[k].factor);
    }
    for (int k = 0; k < na && k < nc; k++) {
        differ |= ea[k].first != ec[k].first || ea[k].factor != ec[k].factor;
    }
    ck_assert(differ || na != nc);
    hetsgd_schedule_destroy(a);
    hetsgd_schedule_destroy(b);
    hetsgd_schedule_destroy(c);
}
END_TEST

START_TEST(test_vanish_takes_the_fastest_rank_away_mid_run)
{
    const double base[4] = { 0.5, 1.0, 1.0, 0.25 };
    hetsgd_schedule *s = make(HETSGD_SCHEDULE_VANISH, 4, base, 90, 1);
    double v[4];

    /* Rank 1 (fastest, lowest index) is 20x slower in steps [30, 60). */
    hetsgd_schedule_speeds(s, 29, v);
    ck_assert_double_eq(v[1], 1.0);
    hetsgd_schedule_speeds(s, 30, v);
    ck_assert_double_eq(v[1], 1.0 / HETSGD_VANISH_FACTOR);
    ck_assert_double_eq(v[2], 1.0);
    ck_assert_double_eq(v[0], 0.5);
    hetsgd_schedule_speeds(s, 59, v);
    ck_assert_double_eq(v[1], 1.0 / HETSGD_VANISH_FACTOR);
    hetsgd_schedule_speeds(s, 60, v);
    ck_assert_double_eq(v[1], 1.0);
    for (long k = 1; k < 90; k++) {
        ck_assert_int_eq(hetsgd_schedule_changes_at(s, k), 30 == k || 60 == k);
    }
    hetsgd_schedule_destroy(s);
}
END_TEST

/* FlexRR's three patterns at once: a random rank 2-5x slower in every step,
 * now and then both ranks of a machine slowed for 5-20 steps, and a
 * power-law delay on every rank in every step. */
START_TEST(test_jitter_follows_flexrr_patterns)
{
    const double base[4] = { 1.0, 1.0, 1.0, 1.0 };
    const long steps = 4000;
    hetsgd_schedule *s = make(HETSGD_SCHEDULE_JITTER, 4, base, steps, 5);
    hetsgd_schedule *same = make(HETSGD_SCHEDULE_JITTER, 4, base, steps, 5);
    hetsgd_schedule *other = make(HETSGD_SCHEDULE_JITTER, 4, base, steps, 6);
    long run = 0, longest = 0, disrupted = 0, slowed_twice = 0, tail = 0, differ = 0;
    double v[4], w[4], u[4];

    for (long k = 0; k < steps; k++) {
        double least = 1.0;
        int both = 1;

        hetsgd_schedule_speeds(s, k, v);
        hetsgd_schedule_speeds(same, k, w);
        hetsgd_schedule_speeds(other, k, u);
        for (int i = 0; i < 4; i++) {
            /* Every factor is at least 1; together at most 5 x 5 x 10. */
            ck_assert_double_le(v[i], 1.0);
            ck_assert_double_ge(v[i], 1.0 / (HETSGD_JITTER_MAX_FACTOR * HETSGD_JITTER_MAX_FACTOR *
                                             HETSGD_JITTER_PARETO_CAP) - 1e-15);
            ck_assert_double_eq(v[i], w[i]);
            differ += v[i] != u[i];
            least = v[i] < least ? v[i] : least;
            tail += v[i] <= 0.1;
            both &= i >= 2 || v[i] <= 1.0 / HETSGD_JITTER_MIN_FACTOR;
        }
        /* The slow worker: some rank at half its speed or less in every step. */
        ck_assert_double_le(least, 1.0 / HETSGD_JITTER_MIN_FACTOR);
        slowed_twice += v[0] <= 0.5 && v[1] <= 0.5;
        /* The disrupted machine (ranks 0 and 1): runs of steps with both at half speed or less. */
        run = both ? run + 1 : 0;
        longest = run > longest ? run : longest;
        disrupted += both;
        ck_assert_int_eq(hetsgd_schedule_changes_at(s, k), 1);
    }
    ck_assert_int_ge(longest, HETSGD_JITTER_MIN_DISRUPTION);
    /* Machine 0 is disrupted in about 1 step in 6 (12.5 of 37.5 steps on average, either
     * machine), and the slow worker and the power law put ranks 0 and 1 both at half speed in
     * about 1 in 20 more. */
    ck_assert_int_ge(disrupted, steps / 10);
    ck_assert_int_le(disrupted, steps / 3);
    /* A tenth of the speed or less takes two patterns at once (or a power-law factor of 10, one
     * in 10^5): it happens, in a few per cent of the rank-steps. */
    ck_assert_int_gt(tail, 0);
    ck_assert_int_lt(tail, 4 * steps / 10);
    /* Another seed, another pattern. */
    ck_assert_int_gt(differ, 4 * steps / 2);
    hetsgd_schedule_destroy(s);
    hetsgd_schedule_destroy(same);
    hetsgd_schedule_destroy(other);
}
END_TEST

START_TEST(test_bad_input_is_refused)
{
    const double base[2] = { 1.0, 0.0 };
    hetsgd_schedule *s = NULL;

    ck_assert_int_eq(hetsgd_schedule_create(HETSGD_SCHEDULE_NONE, 2, base, 10, 1, &s), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "speed of rank 1 is 0: expected > 0");
    ck_assert_ptr_null(s);
    ck_assert_int_eq(hetsgd_schedule_create(HETSGD_SCHEDULE_NONE, 1, base, 0, 1, &s), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(hetsgd_schedule_name(HETSGD_SCHEDULE_TRANSIENT), "transient");
    /* The jitter's factors are drawn at create: a run too long for them says so. */
    ck_assert_int_eq(hetsgd_schedule_create(HETSGD_SCHEDULE_JITTER, 2, (const double[]) { 1.0, 1.0 },
                                            HETSGD_JITTER_MAX_FACTORS, 1, &s), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "--schedule jitter: 134217728 steps of 2 ranks: expected at most 134217728 "
                     "steps x ranks");
    ck_assert_ptr_null(s);
}
END_TEST

static Suite *make_hetsgd_schedule_suite(void)
{
    Suite *s = suite_create("hetsgd_schedule");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_none_keeps_normalised_base_speeds);
    tcase_add_test(tc, test_ramp_walks_omnilearn_levels);
    tcase_add_test(tc, test_ramp_roles_for_other_rank_counts);
    tcase_add_test(tc, test_transient_events_follow_the_rules);
    tcase_add_test(tc, test_transient_events_depend_only_on_the_seed);
    tcase_add_test(tc, test_vanish_takes_the_fastest_rank_away_mid_run);
    tcase_add_test(tc, test_jitter_follows_flexrr_patterns);
    tcase_add_test(tc, test_bad_input_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_hetsgd_schedule_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
