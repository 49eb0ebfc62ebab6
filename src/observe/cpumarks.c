/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The kernel's counters at each recognised call's end (ob_cpumarks.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_cpumarks.h"

int ob_cpu_marks_init(ob_cpu_marks *m)
{
    memset(m, 0, sizeof *m);
    m->time = malloc(OB_CPU_MARKS * sizeof *m->time);
    m->at = malloc(OB_CPU_MARKS * sizeof *m->at);
    if (NULL == m->time || NULL == m->at) {
        ob_cpu_marks_free(m);
        return 0;
    }
    return 1;
}

void ob_cpu_marks_add(ob_cpu_marks *m, double t, const ob_cpu_sample *s)
{
    long k;

    if (NULL == m->time) {
        return;
    }
    k = m->added % OB_CPU_MARKS;
    m->time[k] = t;
    m->at[k] = *s;
    m->added++;
}

/* The mark that ended at \p end, from the cursor on (steps come in order,
 * so each search starts where the last one stopped); -1 when it is gone
 * (overwritten) or was never added. */
static long ob_cpu_marks_find(ob_cpu_marks *m, double end)
{
    long oldest = m->added > OB_CPU_MARKS ? m->added - OB_CPU_MARKS : 0;

    if (m->cursor < oldest) {
        m->cursor = oldest;
    }
    for (long k = m->cursor; k < m->added; k++) {
        double t = m->time[k % OB_CPU_MARKS];

        if (t == end) {
            m->cursor = k + 1;
            return k;
        }
        if (t > end) {
            break;
        }
    }
    return -1;
}

int ob_cpu_marks_step(ob_cpu_marks *m, double end, double quota, ob_cpu_use *use)
{
    long k;
    int known;

    if (NULL == m->time) {
        return 0;
    }
    k = ob_cpu_marks_find(m, end);
    if (k < 0) {
        m->have_prev = 0;
        return 0;
    }
    known = m->have_prev;
    if (known) {
        ob_cpu_use_between(&m->prev, &m->at[k % OB_CPU_MARKS], quota, use);
    }
    m->prev = m->at[k % OB_CPU_MARKS];
    m->have_prev = 1;
    return known;
}

void ob_cpu_marks_free(ob_cpu_marks *m)
{
    free(m->time);
    free(m->at);
    m->time = NULL;
    m->at = NULL;
}
