/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The planner: from every rank's model t_i(b) = alpha_i + beta_i * b and
 * bounds lo_i <= b_i <= hi_i, the split of the global batch B that
 * minimises the step time max_i t_i(b_i) (water-filling, exact), the
 * proportional step toward it, the dead-band on the predicted gain, and the
 * integer plan by largest remainder.  Invariants, for every input that is
 * accepted: sum_i b_i == B exactly, lo_i <= b_i <= hi_i, and with
 * granularity g every b_i is a multiple of g except that one rank may also
 * carry B mod g.  Infeasible or invalid input is an error
 * (OMNIBATCH_ERR_INFEASIBLE / OMNIBATCH_ERR_ARG with a detail line), never a
 * silently wrong plan.  MPI-free, deterministic: the same inputs give the
 * same plan bit for bit on every rank.
 */
#ifndef OB_PLANNER_H
#define OB_PLANNER_H

/** One rank's model and bounds. */
typedef struct ob_rank_model {
    double alpha;                /* fixed seconds per step, >= 0, finite */
    double beta;                 /* seconds per sample, > 0, finite */
    long lo;                     /* least batch, >= 1 (or >= 0 when the caller allows idle ranks) */
    long hi;                     /* largest batch, >= lo */
} ob_rank_model;

/** Parameters of a decision. */
typedef struct ob_planner_params {
    double gain;                 /* Kp in (0, 1]: fraction of the way to the target per decision */
    double deadband;             /* change only if the predicted step time falls by more than this fraction */
    long granularity;            /* >= 1 */
} ob_planner_params;

/** What a decision found (for reports, traces and tests). */
typedef struct ob_decision {
    double t_current;            /* predicted step time of the current plan */
    double t_optimum;            /* the water-filling optimum T (the oracle for these models) */
    double t_next;               /* predicted step time of the plan returned */
    int changed;                 /* 1 if the plan returned differs from the current one */
} ob_decision;

/**
 * \brief Continuous optimum: the least T with sum_i clamp((T - alpha_i) / beta_i, lo_i, hi_i) = B.
 * \param[out] b  P reals, the optimal split (may be NULL).
 * \param[out] T  the optimal step time (may be NULL).
 */
int ob_plan_optimum(const ob_rank_model *m, int P, long B, double *b, double *T);

/**
 * \brief Integer plan closest to \p target by largest remainder, honouring bounds and granularity.
 * \param[in] target P reals summing to B (within rounding) inside the bounds.
 * \param[out] plan  P integers, sum exactly B.
 */
int ob_plan_round(const ob_rank_model *m, int P, long B, long granularity,
                  const double *target, long *plan);

/** \brief Predicted step time max_i alpha_i + beta_i * plan_i. */
double ob_plan_step_time(const ob_rank_model *m, int P, const long *plan);

/** \brief The equal split of B within bounds and granularity (the static plan). */
int ob_plan_equal(const ob_rank_model *m, int P, long B, long granularity, long *plan);

/** \brief The split of B proportional to \p weights (> 0), within bounds and granularity. */
int ob_plan_proportional(const ob_rank_model *m, int P, long B, long granularity,
                         const double *weights, long *plan);

/**
 * \brief One control decision: target = optimum; candidate = current + gain * (target - current),
 *        rounded; adopted only if it lowers the predicted step time by more than the dead-band.
 * \param[in] current P integers, a valid plan for these bounds.
 * \param[out] next   P integers: the new plan, or a copy of current.
 * \param[out] d      what was found (may be NULL).
 */
int ob_plan_decide(const ob_planner_params *p, const ob_rank_model *m, int P, long B,
                   const long *current, long *next, ob_decision *d);

#endif /* OB_PLANNER_H */
