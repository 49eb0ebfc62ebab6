/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Order statistics of a sample of latencies: the benchmarks report medians
 * and tails, never means alone, because a loaded machine adds rare long
 * delays that a mean would smear over every call.
 */
#ifndef OB_BENCH_STATS_H
#define OB_BENCH_STATS_H

#include <stddef.h>

/** \brief Sort \p n doubles ascending in place (NaN not allowed). */
void ob_bench_sort(double *x, size_t n);

/**
 * \brief The \p q-quantile of \p n sorted values, interpolated linearly between
 *        order statistics (position q * (n - 1), as R's type 7 and numpy's default).
 * \param[in] sorted ascending values, n >= 1.
 * \param[in] q      in [0, 1]; 0.5 is the median.
 * \return the quantile; NaN when n == 0 or q is outside [0, 1].
 */
double ob_bench_quantile(const double *sorted, size_t n, double q);

/** \brief Arithmetic mean of \p n values (NaN when n == 0). */
double ob_bench_mean(const double *x, size_t n);

#endif /* OB_BENCH_STATS_H */
