/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Which ranks the CPU starved (ob_starve.h).
 */
#include "config.h"

#include <stddef.h>

#include "ob_starve.h"

double ob_starved_share(double throttled, double held, double wait, double usual_wait, int *why)
{
    double lost = 0.0;
    int cause = 0;

    if (throttled >= OB_STARVED_THROTTLED) {
        lost = throttled < 1.0 ? throttled : 1.0;
        cause |= OB_STARVED_BY_QUOTA;
    }
    if (held >= 0.0 && usual_wait >= 0.0 && wait - usual_wait >= OB_STARVED_CONTENTION) {
        /* Held off, not by the quota, beyond the rate the usual rank was
         * held off at. */
        double waited = throttled > 0.0 && held > throttled ? held - throttled : held;
        double beyond = waited * (wait - usual_wait) / wait;

        cause |= OB_STARVED_BY_CONTENTION;
        lost = beyond > lost ? beyond : lost;
    }
    if (NULL != why) {
        *why = cause;
    }
    return lost;
}

double ob_starved_record_share(const ob_rank_record *rec)
{
    return ob_starved_share(rec->throttled_share, -1.0, -1.0, -1.0, NULL);
}

void ob_cpu_watch_start(ob_cpu_watch *w)
{
    ob_cpu_probe_open_self(&w->probe);
    ob_cpu_probe_read(&w->probe, &w->last);
}

void ob_cpu_watch_fill(ob_cpu_watch *w, ob_rank_record *rec)
{
    ob_cpu_sample now;
    ob_cpu_use u;

    ob_cpu_probe_read(&w->probe, &now);
    ob_cpu_use_between(&w->last, &now, w->probe.quota, &u);
    w->last = now;
    rec->throttled_share = ob_cpu_use_throttled_share(&u);
}

void ob_cpu_watch_stop(ob_cpu_watch *w)
{
    ob_cpu_probe_close(&w->probe);
}
