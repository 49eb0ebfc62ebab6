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

#endif /* OB_SIM_METRICS_H */
