/*
 * Copyright (c) 2026 The omnibatch authors.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>

#include "sim_metrics.h"

long ob_sim_first_for_good(const double *x, long from, long n, double limit)
{
    long k = n;
    while (k > from && x[k - 1] <= limit) {
        k--;
    }
    return k;
}

long ob_sim_converged(const double *ratio, const int *changed, long n, double limit, long *settle)
{
    const long s = ob_sim_first_for_good(ratio, 0, n + 1, limit);
    long last_change = 0;
    for (long d = 1; d <= n; d++) {
        if (changed[d]) {
            last_change = d;
        }
    }
    if (s > n) {
        if (NULL != settle) {
            *settle = -1;
        }
        return -1;
    }
    if (NULL != settle) {
        *settle = s;
    }
    return last_change > s ? last_change : s;
}

double ob_sim_expected_max_normal(long P)
{
    /* E = integral of x P phi(x) Phi(x)^(P-1) dx, on [-12, 12] by the midpoint rule. */
    const double h = 1.0 / 1024.0;
    double sum = 0.0;

    if (P <= 1) {
        return 0.0;
    }
    for (double x = -12.0 + 0.5 * h; x < 12.0; x += h) {
        const double phi = exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
        const double Phi = 0.5 * erfc(-x / sqrt(2.0));

        sum += x * (double) P * phi * pow(Phi, (double) (P - 1));
    }
    return sum * h;
}

double ob_sim_noise_floor(double expected_max, double sd, double forget, long samples)
{
    /* sum_{k<n} f^k and sum_{k<n} f^2k in closed form. */
    const double n = (double) samples;
    const double w = forget < 1.0 ? (1.0 - pow(forget, n)) / (1.0 - forget) : n;
    const double w2 = forget < 1.0 ? (1.0 - pow(forget, 2.0 * n)) / (1.0 - forget * forget) : n;

    if (samples < 1) {
        return INFINITY;
    }
    return 1.0 + expected_max * sd / sqrt(w * w / w2);
}
