/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The clock: CLOCK_MONOTONIC, read through the vDSO (tens of nanoseconds),
 * never affected by the wall clock being set.
 */
#ifndef OB_TIMING_H
#define OB_TIMING_H

#include <stdint.h>
#include <time.h>

/** \brief Monotonic time in nanoseconds. */
static inline uint64_t ob_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

/** \brief Monotonic time in seconds. */
static inline double ob_now(void)
{
    return (double) ob_now_ns() * 1e-9;
}

#endif /* OB_TIMING_H */
