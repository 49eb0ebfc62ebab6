/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What the simulator reports about a sequence of plans: when it got within
 * a factor of the oracle for good, and when it stopped changing.
 */
#ifndef OB_SIM_METRICS_H
#define OB_SIM_METRICS_H

/**
 * \brief The first index k in [from, n] such that x[k], ..., x[n-1] are all
 *        <= limit; n when x[n-1] is not (never settled); from when all are.
 */
long ob_sim_first_for_good(const double *x, long from, long n, double limit);

/**
 * \brief Decisions to converge.
 * \param[in] ratio   n + 1 values: [0] the first plan's step time / yardstick, [d] the
 *                    plan's after decision d.
 * \param[in] changed n + 1 flags: [d] 1 if decision d changed the plan ([0] unused).
 * \param[out] settle the least d from which every plan is within \p limit (-1: never).
 * \return the least d from which every plan is within \p limit and no decision
 *         after d changes it; -1 when the last plan is not within \p limit.
 */
long ob_sim_converged(const double *ratio, const int *changed, long n, double limit, long *settle);

/**
 * \brief E[max of P independent standard normal deviates] (0 for P = 1), by quadrature.
 */
double ob_sim_expected_max_normal(long P);

/**
 * \brief The noise floor of a plan after \p samples timings per rank: a plan that makes
 *        the times estimated from them equal runs, on the true times, the slowest of P
 *        independent relative errors of deviation sd / sqrt(n), n the samples' effective
 *        count under the estimator's forgetting factor \p forget ((sum w)^2 / sum w^2,
 *        w = forget^age); returned as 1 + E[that slowest error], the step over the best plan.
 *        A guide to what the timing noise allows, not a bound: ranks held at their bounds
 *        or several ranks of one speed can do better.
 */
double ob_sim_noise_floor(double expected_max, double sd, double forget, long samples);

#endif /* OB_SIM_METRICS_H */
