/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One rank in one step as it truly runs (this step's fixed cost and time
 * per sample, a slowdown that may strike mid-step), and the yardsticks of
 * a step: the per-step oracle, the split chosen knowing this step's true
 * times (water-filling on them), and the time of a fixed split.
 */
#ifndef OB_SIM_WORK_H
#define OB_SIM_WORK_H

/* One rank in one step. */
typedef struct ob_sim_work {
    double alpha;                /* seconds of its fixed cost, paid before its first sample */
    double beta;                 /* seconds per sample */
    double slow_at;              /* from this time on all its work takes slow_factor times longer */
    double slow_factor;          /* (HUGE_VAL and 1: never) */
    double alpha_hint;           /* what the others expect of it before it has done a chunk */
    double beta_hint;
} ob_sim_work;

/** \brief When \p work seconds of rank \p w's work, started at \p t0, end (its slowdown counted). */
double ob_sim_work_end(const ob_sim_work *w, double t0, double work);

/**
 * \brief The per-step oracle: the least T at which the P ranks can do B samples, each its
 *        fixed cost then a number of samples in [0, B] (water-filling on this step's true
 *        times, slowdowns counted), into *T: real numbers of samples, or whole ones when
 *        \p whole (the best split of samples knowing the step's times).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG for P or B below 1.
 */
int ob_sim_work_optimum(const ob_sim_work *w, int P, long B, int whole, double *T);

/** \brief The step time of the split \p b: the last rank's end, each done in one piece. */
double ob_sim_work_time(const ob_sim_work *w, int P, const long *b);

#endif /* OB_SIM_WORK_H */
