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
 * (OMNIBATCH_ERR_INFEASIBLE / OMNIBATCH_ERR_ARG with a detail line in
 * ob_last_error()), never a silently wrong plan.  MPI-free, deterministic:
 * the same inputs give the same plan bit for bit on every rank (plain IEEE
 * double arithmetic, ties broken by rank index).
 *
 * Granularity.  With r = B mod g, the bounds of a rank are rounded inward to
 * multiples of g (or, for the one rank that carries r, to values congruent
 * to r mod g); the rank that carries r is the one with the largest target
 * among those whose bounds allow it (the lowest index on ties).  Bounds that
 * leave no such plan are OMNIBATCH_ERR_INFEASIBLE.
 *
 * Quality of the integer plan.  Each b_i lies within one granule g of a
 * continuous optimum for the rounded bounds, so with gain 1 its step time is
 * below that optimum plus g * max_i beta_i.  A decision hands the granules
 * left after the floors to the ranks whose step time grows least by them
 * (ob_plan_round() and the prior plans, which know no speeds, to the
 * largest fractions), so the step time is at most the optimum plus the
 * least such growth that places them all: with many ranks, about g times
 * the smaller betas rather than the largest.
 *
 * Cost: the breakpoints are sorted by an O(P) radix sort and swept once, so a
 * call is O(P) (timings at 65,536 ranks: docs/figures.md); O(P) memory is
 * allocated per call (OMNIBATCH_ERR_NOMEM if that fails).
 */
#ifndef OB_PLANNER_H
#define OB_PLANNER_H

/* Models outside these limits are absurd (a timer in the wrong unit, a
 * corrupted record) and are rejected, never planned on. */
#define OB_PLAN_MAX_ALPHA 1e6        /* seconds of fixed cost per step */
#define OB_PLAN_MIN_BETA 1e-12       /* seconds per sample */
#define OB_PLAN_MAX_BETA 1e6         /* seconds per sample */
/* Largest global batch: every batch and sum stays exact in a double. */
#define OB_PLAN_MAX_BATCH 0x4000000000000L /* 2^50 */

/** One rank's model and bounds. */
typedef struct ob_rank_model {
    double alpha;                /* fixed seconds per step, in [0, OB_PLAN_MAX_ALPHA] */
    double beta;                 /* seconds per sample, in [OB_PLAN_MIN_BETA, OB_PLAN_MAX_BETA] */
    long lo;                     /* least batch, >= 1 (or >= 0 when the caller allows idle ranks) */
    long hi;                     /* largest batch, >= lo (values above B mean no limit) */
} ob_rank_model;

/** Parameters of a decision. */
typedef struct ob_planner_params {
    double gain;                 /* Kp in (0, 1]: fraction of the way to the target per decision */
    double deadband;             /* change only if the predicted step time falls by more than this fraction (OB_DEADBAND_LO..HI) */
    long granularity;            /* >= 1 */
} ob_planner_params;

/** What a decision found (for reports, traces and tests). */
typedef struct ob_decision {
    double t_current;            /* predicted step time of the current plan */
    double t_optimum;            /* the water-filling optimum T (the oracle for these models) */
    double t_next;               /* predicted step time of the plan returned */
    double t_candidate;          /* predicted step time of the rounded proportional step, adopted or not */
    int changed;                 /* 1 if the plan returned differs from the current one */
} ob_decision;

/**
 * \brief Continuous optimum: b_i = clamp((T - alpha_i) / beta_i, lo_i, hi_i) with the least
 *        water level T at which they sum to B (bounds as given, no granularity).
 * \param[out] b  P reals, the optimal split (may be NULL).
 * \param[out] T  the optimal step time max_i t_i(b_i) (may be NULL): the water level, or more
 *                when a rank's lower bound alone takes longer than that.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG for a bad P, B or model;
 *         OMNIBATCH_ERR_INFEASIBLE when the bounds cannot hold B; OMNIBATCH_ERR_NOMEM.
 */
int ob_plan_optimum(const ob_rank_model *m, int P, long B, double *b, double *T);

/**
 * \brief Integer plan closest to \p target by largest remainder, honouring bounds and granularity.
 *        alpha and beta of \p m are not used.
 * \param[in] target P reals summing to B (within 1e-6 relative) inside the bounds (same
 *                   tolerance); where the granularity cuts a bound, the targets are shifted
 *                   by a common amount (water-filling) so that they fit the rounded bounds.
 * \param[out] plan  P integers, sum exactly B.
 */
int ob_plan_round(const ob_rank_model *m, int P, long B, long granularity,
                  const double *target, long *plan);

/** \brief Predicted step time max_i alpha_i + beta_i * plan_i. */
double ob_plan_step_time(const ob_rank_model *m, int P, const long *plan);

/** \brief The equal split of B within bounds and granularity (the static plan). alpha, beta unused. */
int ob_plan_equal(const ob_rank_model *m, int P, long B, long granularity, long *plan);

/**
 * \brief The split of B proportional to \p weights (finite, > 0), within bounds and granularity:
 *        b_i = clamp(c * w_i, lo_i, hi_i) rounded.  alpha, beta unused.
 */
int ob_plan_proportional(const ob_rank_model *m, int P, long B, long granularity,
                         const double *weights, long *plan);

/** \brief Check gain, dead-band and granularity (OMNIBATCH_ERR_ARG with a detail line). */
int ob_plan_check_params(const ob_planner_params *p);

/**
 * \brief Check every model: alpha in [0, OB_PLAN_MAX_ALPHA], beta in [OB_PLAN_MIN_BETA,
 *        OB_PLAN_MAX_BETA] (bounds are not looked at).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG naming the first rank at fault.
 */
int ob_plan_check_models(const ob_rank_model *m, int P);

/**
 * \brief Check P, B, every bound and the granularity: whether any plan exists.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG or OMNIBATCH_ERR_INFEASIBLE with a detail line.
 */
int ob_plan_check_bounds(const ob_rank_model *m, int P, long B, long granularity);

/**
 * \brief Check that \p plan is a plan of B for these bounds (sum, every bound; granularity
 *        is not required).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG naming the first rank or the sum at fault.
 */
int ob_plan_check(const ob_rank_model *m, int P, long B, const long *plan);

/**
 * \brief One control decision: target = optimum; candidate = current + gain * (target - current),
 *        rounded; adopted only if it lowers the predicted step time by more than the dead-band:
 *        (t_current - t_next) / t_current > deadband.
 * \param[in] current P integers, a valid plan for these bounds (ob_plan_check()).
 * \param[out] next   P integers: the new plan, or a copy of current (may be \p current itself).
 * \param[out] d      what was found (may be NULL).
 */
int ob_plan_decide(const ob_planner_params *p, const ob_rank_model *m, int P, long B,
                   const long *current, long *next, ob_decision *d);

#endif /* OB_PLANNER_H */
