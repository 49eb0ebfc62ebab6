/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What the kernel had given a rank (ob_cpuuse.h) when each of its
 * recognised gradient calls ended, kept until the step those calls close
 * reaches the trace: the step detector holds a code's calls while it
 * learns their pattern (ob_stepdetect.h, up to OB_STEPDETECT_HISTORY of
 * them) and hands the steps over long after they ended, so a sample taken
 * then would say nothing of the step.  A trace row's CPU is the difference
 * between the marks at its step's end and at the previous step's end.
 * Kept for OMNIBATCH_TRACE only.  MPI-free; the caller serialises.
 */
#ifndef OB_CPUMARKS_H
#define OB_CPUMARKS_H

#include "ob_cpuuse.h"

/** Marks kept: every call the step detector may hold, and some. */
#define OB_CPU_MARKS 4608

typedef struct ob_cpu_marks {
    double *time;                /* [OB_CPU_MARKS], the calls' end times, in the order added */
    ob_cpu_sample *at;           /* [OB_CPU_MARKS] */
    long added;                  /* marks ever added; mark k is at k % OB_CPU_MARKS */
    long cursor;                 /* the first mark a later step may end at */
    int have_prev;               /* prev holds the mark of the last step's end */
    ob_cpu_sample prev;
} ob_cpu_marks;

/** \brief Empty marks; 0 when there is no memory for them (every step is then unknown). */
int ob_cpu_marks_init(ob_cpu_marks *m);

/** \brief A recognised call ended at \p t (times in order) with the kernel's counters \p s. */
void ob_cpu_marks_add(ob_cpu_marks *m, double t, const ob_cpu_sample *s);

/**
 * \brief A step ended at \p end (the end time of its last call, as added; steps in order):
 *        what the rank got since the previous step's end into \p use (\p quota its cgroup's).
 * \return 1 when both marks were kept, 0 when not (the first step, a mark overwritten).
 */
int ob_cpu_marks_step(ob_cpu_marks *m, double end, double quota, ob_cpu_use *use);

/** \brief Free the marks. */
void ob_cpu_marks_free(ob_cpu_marks *m);

#endif /* OB_CPUMARKS_H */
