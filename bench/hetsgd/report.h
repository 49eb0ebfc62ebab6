/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What a run leaves behind: the per-step, per-rank trace (CSV), and the
 * figures computed from it.  The trace is a plain array gathered on rank 0:
 * record[(rank * steps + step) * HETSGD_TRACE_FIELDS + field].
 */
#ifndef HETSGD_REPORT_H
#define HETSGD_REPORT_H

/** Fields of one trace record (one step of one rank). */
enum {
    HETSGD_TRACE_BATCH = 0,      /* local batch */
    HETSGD_TRACE_COMPUTE = 1,    /* seconds between the compute markers (forward, backward, emulation) */
    HETSGD_TRACE_STEP = 2,       /* seconds of the whole step, allreduce and update included */
    HETSGD_TRACE_SPEED = 3,      /* relative speed the schedule gave the rank */
    HETSGD_TRACE_CPU = 4,        /* CPU seconds of the real compute (wall seconds with --bind) */
    HETSGD_TRACE_FIELDS = 5
};

/**
 * \brief Write the trace as CSV: a header "step,rank,policy,batch,compute_s,step_s,speed,cpu_s"
 *        and one row per step and rank, steps in order.
 */
int hetsgd_write_trace(const char *path, const char *policy, long steps, int P, const double *record);

/** How fast a policy's plan came back within a tolerance of the optimum after each change. */
typedef struct hetsgd_recovery_stats {
    int changes;                 /* speed changes after step 0 */
    long initial;                /* steps from step 0 until within tolerance (-1: never) */
    long worst;                  /* most steps any later change took (-1 if none recovered) */
    double mean;                 /* mean steps over the later changes that recovered (0 if none) */
    int unrecovered;             /* later changes not recovered before the next change or the end */
} hetsgd_recovery_stats;

/**
 * \brief Steps to recover after each change.
 * \param[in] ratio   per step: predicted step time of the plan run / the optimum (< 0: not
 *                    judged, e.g. an epoch's short last step, and skipped).
 * \param[in] change  per step: 1 where the speeds changed (step 0 counts as the start).
 * \param[in] tol     e.g. 1.05: within 5% of the optimum.
 * A change at step c recovers at the first judged step k >= c with ratio[k] <= tol, before the
 * next change; it took k - c steps.
 */
void hetsgd_recovery(const double *ratio, const unsigned char *change, long steps, double tol,
                     hetsgd_recovery_stats *out);

/**
 * \brief Steps the emulation did not control: those whose longest compute (the one the step
 *        waited for) outlasted the longest emulated length, cpu * slowdown / speed + alpha, by
 *        more than 10% and 1 ms.  A crowded machine, not the policy, set their length.
 */
long hetsgd_overrun_steps(const double *record, long steps, int P, double slowdown, double alpha);

/** \brief Mean of x[first..last) skipping negative entries (0 if none). */
double hetsgd_mean_judged(const double *x, long first, long last);

#endif /* HETSGD_REPORT_H */
