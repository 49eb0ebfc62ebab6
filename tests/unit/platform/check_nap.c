/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The naps of a rank that waits asleep (ob_nap.h): a wait whose end is
 * guessed takes a few wakes, not one every 50 us; a wake comes soon after
 * the last rank arrives, guessed or not; the guess is the least recent
 * arrival under the plan in force; the transfer's naps stay short for
 * twice the quickest recent transfer of its size, then back off.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "ob_check_run.h"
#include "ob_nap.h"

/* A rank that starts waiting at 0 for a last rank that arrives at
 * \p arrival, napping as ob_nap_waiting() says: its wakes, and how late
 * after the arrival the last of them came. */
static long wait_for(double arrival, double expected, double *late)
{
    double t = 0.0;
    long wakes = 0;

    while (t < arrival) {
        double nap = ob_nap_waiting(t, expected);

        ck_assert_msg(nap >= OB_NAP_MIN && nap <= OB_NAP_MAX, "nap %g s at %g s", nap, t);
        t += nap;
        wakes++;
    }
    *late = t - arrival;
    return wakes;
}

START_TEST(test_a_guessed_wait_takes_a_few_wakes)
{
    const double expected = 0.06;

    /* From just before the guess to well after it (the guess is the least
     * of recent arrivals: the last rank mostly comes after it). */
    for (double a = expected - 0.9 * OB_NAP_MARGIN; a < expected + 0.01; a += 1e-4) {
        double late;
        long wakes = wait_for(a, expected, &late);
        /* One nap to the margin, then backing off: naps grow to
         * OB_NAP_BEHIND_MAX, and at that length cover what is left. */
        double behind = a - (expected - OB_NAP_MARGIN);
        long most = 2 + (long) ceil(log(OB_NAP_BEHIND_MAX / OB_NAP_MIN) / log(1.0 + 1.0 / OB_NAP_BACKOFF)) +
                    (long) ceil(behind / OB_NAP_BEHIND_MAX);

        ck_assert_msg(wakes <= most, "arrival %.4f s after a guess of %.4f s: %ld wakes (at most %ld; "
                      "naps of %g s would take %.0f)", a, expected, wakes, most, OB_NAP_MIN, a / OB_NAP_MIN);
        ck_assert_msg(late <= fmax(OB_NAP_MIN, fmin(OB_NAP_BEHIND_MAX, behind / OB_NAP_BACKOFF)) + 1e-12,
                      "arrival %.4f s: woke %.6f s late", a, late);
    }
}
END_TEST

START_TEST(test_without_a_guess_the_naps_back_off)
{
    const double arrivals[] = { 1e-4, 1e-3, 0.01, 0.1, 1.0 };

    for (size_t k = 0; k < sizeof arrivals / sizeof arrivals[0]; k++) {
        double late;
        long wakes = wait_for(arrivals[k], 0.0, &late);

        ck_assert_msg(late <= fmax(OB_NAP_MIN, fmin(OB_NAP_BEHIND_MAX, arrivals[k] / OB_NAP_BACKOFF)) + 1e-12,
                      "arrival %g s: woke %g s late", arrivals[k], late);
        /* At least OB_NAP_BEHIND_MAX per wake once the wait is long. */
        ck_assert_msg(wakes <= 40 + (long) (arrivals[k] / OB_NAP_BEHIND_MAX),
                      "arrival %g s: %ld wakes", arrivals[k], wakes);
    }
}
END_TEST

START_TEST(test_a_late_guess_is_slept_through_only_to_the_guess)
{
    double late;

    /* The guess says 60 ms, the last rank came at 10 ms: the rank wakes
     * at the margin before the guess, no later. */
    ck_assert_int_eq(wait_for(0.01, 0.06, &late), 1);
    ck_assert_double_eq_tol(late, 0.06 - OB_NAP_MARGIN - 0.01, 1e-12);
    /* A guess beyond OB_NAP_MAX is approached in naps of that length. */
    ck_assert_double_eq(ob_nap_waiting(0.0, 100.0), OB_NAP_MAX);
}
END_TEST

START_TEST(test_the_guess_is_the_least_recent_arrival_under_the_plan)
{
    ob_nap nap;

    ob_nap_init(&nap);
    ck_assert_double_eq(ob_nap_expected_wait(&nap, 7, 0.01), 0.0);
    ob_nap_learn(&nap, 7, 0.08);
    ob_nap_learn(&nap, 7, 0.06);
    ob_nap_learn(&nap, 7, 0.07);
    ck_assert_double_eq_tol(ob_nap_expected_wait(&nap, 7, 0.01), 0.05, 1e-12);
    /* The last rank itself, or one later than the guess, expects no wait. */
    ck_assert_double_eq(ob_nap_expected_wait(&nap, 7, 0.06), 0.0);
    ck_assert_double_eq(ob_nap_expected_wait(&nap, 7, 0.09), 0.0);
    /* The oldest goes first: four later ones replace the 0.06. */
    for (int k = 0; k < OB_NAP_HISTORY; k++) {
        ob_nap_learn(&nap, 7, 0.09);
    }
    ck_assert_double_eq_tol(ob_nap_expected_wait(&nap, 7, 0.01), 0.08, 1e-12);
    /* Nonsense is not learnt. */
    ob_nap_learn(&nap, 7, -1.0);
    ob_nap_learn(&nap, 7, NAN);
    ck_assert_double_eq_tol(ob_nap_expected_wait(&nap, 7, 0.01), 0.08, 1e-12);
    /* Another plan moves every arrival: nothing is known of it, and
     * learning under it forgets the old one's. */
    ck_assert_double_eq(ob_nap_expected_wait(&nap, 8, 0.01), 0.0);
    ob_nap_learn(&nap, 8, 0.03);
    ck_assert_double_eq_tol(ob_nap_expected_wait(&nap, 8, 0.01), 0.02, 1e-12);
    ck_assert_double_eq(ob_nap_expected_wait(&nap, 7, 0.01), 0.0);
}
END_TEST

START_TEST(test_the_transfer_naps_stay_short)
{
    const double short_s = 5e-3;

    for (double t = 0.0; t < short_s; t += 1e-4) {
        ck_assert_double_eq(ob_nap_transfer(t, short_s), OB_NAP_MIN);
    }
    /* Then they back off as the waiting ones do, from the end of the short ones. */
    ck_assert_double_eq_tol(ob_nap_transfer(short_s + 4e-4, short_s), 1e-4, 1e-12);
    ck_assert(ob_nap_transfer(short_s + 0.1, short_s) > OB_NAP_MIN);
    ck_assert_double_eq(ob_nap_transfer(10.0, short_s), OB_NAP_BEHIND_MAX);
}
END_TEST

START_TEST(test_the_short_naps_last_twice_the_quickest_transfer)
{
    const long big = 400000, small = 4000;
    ob_nap nap;

    ob_nap_init(&nap);
    /* Nothing known: the longest. */
    ck_assert_double_eq(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_SHORT);
    ob_nap_learn_transfer(&nap, big, 4e-3);
    ob_nap_learn_transfer(&nap, big, 2.5e-3);
    ob_nap_learn_transfer(&nap, big, 60e-3);      /* a rank the kernel stopped: not the quickest */
    ck_assert_double_eq_tol(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_FACTOR * 2.5e-3, 1e-12);
    ob_nap_learn_transfer(&nap, big, -1.0);
    ob_nap_learn_transfer(&nap, big, NAN);
    ck_assert_double_eq_tol(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_FACTOR * 2.5e-3, 1e-12);
    /* Each size by its own: a quick small bucket does not shorten a big one's. */
    ck_assert_double_eq(ob_nap_transfer_short(&nap, small), OB_NAP_TRANSFER_SHORT);
    ob_nap_learn_transfer(&nap, small, 0.2e-3);
    ck_assert_double_eq(ob_nap_transfer_short(&nap, small), OB_NAP_TRANSFER_SHORT_MIN);
    ck_assert_double_eq_tol(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_FACTOR * 2.5e-3, 1e-12);
    /* The quick one leaves the history after OB_NAP_HISTORY more. */
    for (int k = 0; k < OB_NAP_HISTORY; k++) {
        ob_nap_learn_transfer(&nap, big, 3.5e-3);
    }
    ck_assert_double_eq_tol(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_FACTOR * 3.5e-3, 1e-12);
    ck_assert_double_eq(ob_nap_transfer_short(&nap, small), OB_NAP_TRANSFER_SHORT);
    /* Bounded both ways. */
    for (int k = 0; k < OB_NAP_HISTORY; k++) {
        ob_nap_learn_transfer(&nap, big, 1.0);
    }
    ck_assert_double_eq(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_SHORT);
    for (int k = 0; k < OB_NAP_HISTORY; k++) {
        ob_nap_learn_transfer(&nap, big, 1e-5);
    }
    ck_assert_double_eq(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_SHORT_MIN);
    /* A new plan forgets the arrivals, not the transfers. */
    ob_nap_learn(&nap, 7, 0.05);
    ob_nap_learn(&nap, 8, 0.05);
    ck_assert_double_eq(ob_nap_transfer_short(&nap, big), OB_NAP_TRANSFER_SHORT_MIN);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("nap");
    TCase *tc = tcase_create("naps");

    tcase_add_test(tc, test_a_guessed_wait_takes_a_few_wakes);
    tcase_add_test(tc, test_without_a_guess_the_naps_back_off);
    tcase_add_test(tc, test_a_late_guess_is_slept_through_only_to_the_guess);
    tcase_add_test(tc, test_the_guess_is_the_least_recent_arrival_under_the_plan);
    tcase_add_test(tc, test_the_transfer_naps_stay_short);
    tcase_add_test(tc, test_the_short_naps_last_twice_the_quickest_transfer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}
