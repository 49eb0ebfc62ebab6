/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Emulated heterogeneity (see emulate.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <time.h>

#include "emulate.h"
#include "ob_timing.h"

double hetsgd_thread_cpu_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

void hetsgd_sleep_until(double deadline)
{
    struct timespec ts;

    if (deadline <= ob_now()) {
        return;
    }
    ts.tv_sec = (time_t) deadline;
    ts.tv_nsec = (long) ((deadline - (double) ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    /* Absolute deadline: a signal that interrupts the sleep does not stretch it. */
    while (EINTR == clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) {
    }
}

double hetsgd_charged_cpu(const double *cost, double batch, double cpu)
{
    return NULL != cost ? cost[0] + cost[1] * batch : cpu;
}

double hetsgd_chunk_cost(long small, double t_small, long large, double t_large)
{
    double b, c;

    if (large <= small || small < 0) {
        return 0.0;
    }
    b = (t_large - t_small) / (double) (large - small);
    c = t_small - b * (double) small;
    return c > 0.0 ? c : 0.0;
}

double hetsgd_emulated_seconds(double cpu, double speed, double slowdown, double alpha)
{
    return cpu * slowdown / speed + alpha;
}

double hetsgd_auto_slowdown(double node_demand, int node_cores)
{
    double s = HETSGD_SLOWDOWN_HEADROOM * (node_cores > 0 ? node_demand / node_cores : 1.0);

    return s > 1.0 ? s : 1.0;
}

double hetsgd_crowded_slowdown(double contention)
{
    double s = ceil(HETSGD_SLOWDOWN_HEADROOM * contention);

    return s > 1.0 ? s : 1.0;
}

void hetsgd_emulated_models(int P, const double *speeds, const double *alpha0, const double *beta0,
                            double slowdown, double alpha, long lo, long hi, ob_rank_model *m)
{
    for (int i = 0; i < P; i++) {
        double a = alpha0[i] > 0.0 ? alpha0[i] : 0.0;
        double b = beta0[i] > 1e-12 ? beta0[i] : 1e-12;

        m[i].alpha = slowdown * a / speeds[i] + alpha;
        m[i].beta = slowdown * b / speeds[i];
        m[i].lo = lo;
        m[i].hi = hi;
    }
}
