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
    HETSGD_TRACE_STEP_CPU = 5,   /* CPU seconds of the thread over the whole step (0: not known) */
    /* A step worked in chunks (--policy chunks; 0 otherwise, and in a trace of before them). */
    HETSGD_TRACE_TAKEN = 6,      /* samples done of other ranks' ranges */
    HETSGD_TRACE_GIVEN = 7,      /* samples of this rank's range done by other ranks */
    HETSGD_TRACE_CHUNKS = 8,     /* chunks done */
    HETSGD_TRACE_CHUNK_CALL = 9, /* seconds in omnibatch_next_chunk() */
    HETSGD_TRACE_LATE = 10,      /* seconds the chunks' real compute outlasted their emulated lengths */
    HETSGD_TRACE_FIELDS = 11
};

/* What hetsgd_read_trace() accepts: far beyond any run, low enough that
 * no size computed from a file (rows x record bytes, steps x ranks) can
 * overflow.  A step at or past the row limit could never have all its rows. */
#define HETSGD_TRACE_MAX_ROWS (1L << 32)
#define HETSGD_TRACE_MAX_STEPS HETSGD_TRACE_MAX_ROWS
#define HETSGD_TRACE_MAX_RANKS (1 << 20)

/**
 * \brief Write the trace as CSV: a header
 *        "step,rank,policy,batch,compute_s,step_s,speed,cpu_s,step_cpu_s,taken,given,chunks,chunk_call_s,late_s"
 *        and one row per step and rank, steps in order.
 */
int hetsgd_write_trace(const char *path, const char *policy, long steps, int P, const double *record);

/**
 * \brief Read a trace written by hetsgd_write_trace() back into the record layout.
 * \param[out] record  malloc'ed, *steps x *P records (free() it); speed, batch and times set.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG naming the file (and the line) when it cannot be
 *         read, a row is malformed or out of the limits above, a step lacks a rank or has one
 *         twice; OMNIBATCH_ERR_NOMEM.
 */
int hetsgd_read_trace(const char *path, long *steps, int *P, double **record);

/** How fast a policy came back within a tolerance after each change. */
typedef struct hetsgd_recovery_stats {
    int changes;                 /* speed changes after step 0 */
    long initial;                /* steps from step 0 until within tolerance (-1: never) */
    long worst;                  /* most steps any later change took (-1 if none recovered) */
    double mean;                 /* mean steps over the later changes that recovered (0 if none) */
    int unrecovered;             /* later changes not recovered before the next change or the end */
} hetsgd_recovery_stats;

/**
 * \brief Steps to recover after each change.
 * \param[in] ratio   per step: how far the step was from the best one, as a ratio >= 1 (< 0: not
 *                    judged, e.g. an epoch's short last step, and skipped).
 * \param[in] change  per step: 1 where the speeds changed (step 0 counts as the start).
 * \param[in] tol     e.g. 1.05: within 5% of the best.
 * \param[in] hold    judged steps in a row that must be within \p tol (fewer if the next change
 *                    or the end comes first); 1 = the first step within counts.
 * A change at step c recovers at the first judged step k >= c from which \p hold judged steps,
 * all before the next change, have ratio <= tol; it took k - c steps.
 */
void hetsgd_recovery(const double *ratio, const unsigned char *change, long steps, double tol, long hold,
                     hetsgd_recovery_stats *out);

/**
 * \brief How unbalanced step k of the trace was, from its measurements alone.
 *
 * With b_i and t_i the batch and compute time (emulated sleep included) of rank i,
 * T* = sum b_i / sum (b_i / t_i) is the batch-weighted harmonic mean of the times: the step time
 * the same ranks reach with the work spread in proportion to their measured throughputs b_i / t_i.
 * The ratio max_i t_i / T* is >= 1, and 1 exactly when every rank finished at once, whatever the
 * cost model.  T* is the best step time when compute is proportional to the batch; with a fixed
 * cost a_i per step it is off by the weighted mean of (a_i / t_i) x (t_i - T*) / T*, either way: a
 * fraction of the imbalance, which vanishes at balance.
 * \param[out] balanced  T* (NULL: not wanted).
 * \return the ratio, or -1 when a time is not positive or no rank has a sample.
 */
double hetsgd_balance_ratio(const double *record, long steps, int P, long k, double *balanced);

/**
 * \brief Median of each judged x[k] and its nearest judged neighbour on either side within the
 *        same phase (no change between them): a one-step spike of timing noise is dropped, a
 *        lasting level kept, and nothing crosses a change.  Unjudged steps (x < 0) stay -1.
 */
void hetsgd_smooth_median3(const double *x, const unsigned char *change, long steps, double *out);

/**
 * \brief The final accuracy smoothed over the last evaluations: with \p eval_every > 0, the mean
 *        of the evaluations made in the last \p evals x \p eval_every steps; otherwise of the last
 *        \p evals evaluations.
 * \param[in]  done  per evaluation: the steps done when it ran, increasing.
 * \param[in]  acc   per evaluation: the test accuracy.
 * \param[out] used  evaluations averaged.
 * \param[out] from  the steps done at the first of them.
 * \return the mean, or -1 with no evaluation.
 */
double hetsgd_final_accuracy(const long *done, const double *acc, long n, long steps, long eval_every,
                             long evals, long *used, long *from);

/**
 * \brief Two runs of one schedule side by side: per step, run a's measured balance
 *        (hetsgd_balance_ratio()) over run b's at the same step, each smoothed by
 *        hetsgd_smooth_median3() within the phases of a's speeds.
 * \param[out] ratio   \p steps entries (< 0: not judged); change: \p steps entries, 1 where a's
 *                     speeds changed (step 0 counts as the start).
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_NOMEM.
 */
int hetsgd_side_by_side(const double *a, const double *b, long steps, int P, double *ratio,
                        unsigned char *change);

/**
 * \brief Two runs of one schedule side by side on their step times: per step, run a's step time
 *        (the mean over the ranks of their step_s) over run b's at the same step, as measured in
 *        \p raw and smoothed by hetsgd_smooth_median3() within the phases of a's speeds in
 *        \p ratio.  Work that moves inside a step balances every step it runs (its measured
 *        balance is 1 by construction), so the step time is what judges it against the oracle.
 * \param[out] raw, ratio, change  \p steps entries each (< 0: not judged); change as
 *        hetsgd_side_by_side()'s.
 */
void hetsgd_side_by_side_steps(const double *a, const double *b, long steps, int P, double *raw, double *ratio,
                               unsigned char *change);

/**
 * \brief Steps the emulation did not control: those whose longest compute (the one the step
 *        waited for) outlasted the longest emulated length, c * slowdown / speed + alpha, by
 *        more than 10% and 1 ms.  A crowded machine, not the policy, set their length.
 * \param cost NULL: c is each step's CPU time; else c = cost[0] + cost[1] * batch (--cost).
 */
long hetsgd_overrun_steps(const double *record, long steps, int P, double slowdown, double alpha,
                          const double *cost);

/**
 * \brief Steps in chunks the emulation did not control: those in which some rank's chunks'
 *        real compute outlasted their emulated lengths (HETSGD_TRACE_LATE) by more than 10% of
 *        its compute and 1 ms.
 */
long hetsgd_late_steps(const double *record, long steps, int P);

/** What the chunks of a run did, over the steps from \p first on (hetsgd_chunk_summary()). */
typedef struct hetsgd_chunk_figures {
    double chunks_per_step;      /* chunks per rank and step */
    double moved_share;          /* samples done by another rank than the plan's, over the step's */
    long steps_moved;            /* steps in which any sample moved */
    double call_share;           /* seconds in the chunk calls over the step's seconds, mean of the ranks */
} hetsgd_chunk_figures;

/** \brief The chunk figures of steps first..steps-1 (all 0 for a run without chunks). */
void hetsgd_chunk_summary(const double *record, long steps, int P, long first, hetsgd_chunk_figures *out);

/** \brief Mean of x[first..last) skipping negative entries (0 if none). */
double hetsgd_mean_judged(const double *x, long first, long last);

#endif /* HETSGD_REPORT_H */
