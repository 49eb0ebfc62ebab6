/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The simulator's wall clock: what its own work costs on this machine
 * (a decision's compute, a run's seconds), never a simulated time.
 */
#ifndef OB_SIM_CLOCK_H
#define OB_SIM_CLOCK_H

#include <time.h>

/** \brief Seconds on the monotonic clock. */
static inline double ob_sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

#endif /* OB_SIM_CLOCK_H */
