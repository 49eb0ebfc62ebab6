/*
 * Copyright (c) 2026 The omnibatch authors.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "stats.h"

static int ob_bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *) a;
    const double y = *(const double *) b;
    return (x > y) - (x < y);
}

void ob_bench_sort(double *x, size_t n)
{
    if (1 < n) {
        qsort(x, n, sizeof *x, ob_bench_cmp_double);
    }
}

double ob_bench_quantile(const double *sorted, size_t n, double q)
{
    if (0 == n || !(0.0 <= q && 1.0 >= q)) {
        return NAN;
    }
    const double pos = q * (double) (n - 1);
    const size_t lo = (size_t) floor(pos);
    if (lo + 1 >= n) {
        return sorted[n - 1];
    }
    const double frac = pos - (double) lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double ob_bench_mean(const double *x, size_t n)
{
    if (0 == n) {
        return NAN;
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
    }
    return sum / (double) n;
}
