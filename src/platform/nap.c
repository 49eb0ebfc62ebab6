/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The naps of a rank that waits asleep (see ob_nap.h for the rules and
 * their reasons).
 */
#include "config.h"

#include <string.h>

#include "ob_nap.h"

void ob_nap_init(ob_nap *nap)
{
    memset(nap, 0, sizeof *nap);
}

void ob_nap_learn(ob_nap *nap, uint64_t plan, double last_arrival)
{
    if (!(last_arrival >= 0.0)) {
        return;
    }
    if (plan != nap->plan) {
        nap->n = 0;
        nap->next = 0;
        nap->plan = plan;
    }
    nap->arrival[nap->next] = last_arrival;
    nap->next = (nap->next + 1) % OB_NAP_HISTORY;
    nap->n += nap->n < OB_NAP_HISTORY;
}

double ob_nap_expected_wait(const ob_nap *nap, uint64_t plan, double mine)
{
    double least;

    if (0 == nap->n || plan != nap->plan) {
        return 0.0;
    }
    least = nap->arrival[0];
    for (int k = 1; k < nap->n; k++) {
        least = nap->arrival[k] < least ? nap->arrival[k] : least;
    }
    return least > mine ? least - mine : 0.0;
}

static double ob_nap_clamp(double nap, double most)
{
    nap = nap < most ? nap : most;
    return nap > OB_NAP_MIN ? nap : OB_NAP_MIN;
}

double ob_nap_waiting(double elapsed, double expected)
{
    const double wake = expected - OB_NAP_MARGIN;

    if (elapsed < wake) {
        return ob_nap_clamp(wake - elapsed, OB_NAP_MAX);
    }
    return ob_nap_clamp((elapsed - (wake > 0.0 ? wake : 0.0)) / OB_NAP_BACKOFF, OB_NAP_BEHIND_MAX);
}

void ob_nap_learn_transfer(ob_nap *nap, long bytes, double seconds)
{
    if (!(seconds >= 0.0)) {
        return;
    }
    nap->transfer[nap->transfer_next] = seconds;
    nap->transfer_bytes[nap->transfer_next] = bytes;
    nap->transfer_next = (nap->transfer_next + 1) % OB_NAP_HISTORY;
    nap->transfers += nap->transfers < OB_NAP_HISTORY;
}

double ob_nap_transfer_short(const ob_nap *nap, long bytes)
{
    double least = -1.0;

    for (int k = 0; k < nap->transfers; k++) {
        if (bytes == nap->transfer_bytes[k] && (least < 0.0 || nap->transfer[k] < least)) {
            least = nap->transfer[k];
        }
    }
    if (least < 0.0) {
        return OB_NAP_TRANSFER_SHORT;
    }
    least *= OB_NAP_TRANSFER_FACTOR;
    least = least < OB_NAP_TRANSFER_SHORT ? least : OB_NAP_TRANSFER_SHORT;
    return least > OB_NAP_TRANSFER_SHORT_MIN ? least : OB_NAP_TRANSFER_SHORT_MIN;
}

double ob_nap_transfer(double elapsed, double short_s)
{
    if (elapsed < short_s) {
        return OB_NAP_MIN;
    }
    return ob_nap_clamp((elapsed - short_s) / OB_NAP_BACKOFF, OB_NAP_BEHIND_MAX);
}
