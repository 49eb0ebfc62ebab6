/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The clock: CLOCK_MONOTONIC, read through the vDSO (tens of nanoseconds),
 * never affected by the wall clock being set; and the process's CPU time.
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

/** \brief CPU time of the whole process (every thread) in nanoseconds: a system call, not
 *         the vDSO, so read only where a quota makes it matter (ob_cpuquota.h). */
static inline uint64_t ob_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

#endif /* OB_TIMING_H */
