/*
 * Copyright (c) 2026 The omnibatch authors.
 */
#include "config.h"

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
