/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OmniLearn's batch rule (Tyagi and Sharma, "OmniLearn: A Framework for
 * Distributed Deep Learning over Heterogeneous Clusters", IEEE TPDS 2025)
 * in the training benchmark.  The rule itself is the one the controller
 * simulator compares against (bench/simulate/sim_omnilearn.h), so both
 * benchmarks measure the same OmniLearn.  Once per epoch, from each rank's
 * mean compute time t_i of that epoch:
 *
 *   1. ranks outside the dead-band |t_i - mean_t| > 20% of mean_t move to
 *      b_i * mean_t / t_i, truncated, clamped to [lo, hi];
 *   2. the global batch is restored by adding one equal share,
 *      ceil((B - sum_j b_j) / P), to every rank (a batch below 1 is lifted
 *      to 1).
 *
 * The ceiling rounds every rank up, so the published plan can sum to more
 * than B (by up to P - 1), and the share can carry a rank past its bounds.
 *
 * The omnibatch API holds the global batch fixed (sum == B, bounds kept),
 * so hetsgd_omnilearn_fit() maps the published plan onto it: every b_i is
 * first put back inside [lo, hi], then the excess is trimmed one sample at
 * a time from the largest batch (or a shortfall added one at a time to the
 * smallest), lowest rank first on ties.  The plan run is therefore the
 * published one minus at most a few samples from its largest entries.
 */
#ifndef HETSGD_OMNILEARN_H
#define HETSGD_OMNILEARN_H

/** The published dead-band: ranks within 20% of the mean time keep their batch. */
#define HETSGD_OMNILEARN_DEADBAND 0.2

/**
 * \brief The published rule: the next plan from the current one and the epoch's mean times.
 * \param[in] b         P current local batches (>= 1).
 * \param[in] t         P mean compute times per step of the epoch (> 0, finite).
 * \param[in] deadband  relative dead-band (published: HETSGD_OMNILEARN_DEADBAND).
 * \param[in] lo, hi    bounds of step 1, 1 <= lo <= hi.
 * \param[out] published P batches as the rule gives them (sum may exceed B; may break bounds).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG naming the bad input.
 */
int hetsgd_omnilearn_published(const long *b, const double *t, int P, long B, double deadband,
                               long lo, long hi, long *published);

/**
 * \brief Map a plan onto the fixed global batch: inside [lo, hi], summing to B exactly.
 * \param[out] plan P batches; OMNIBATCH_ERR_INFEASIBLE if P*lo > B or P*hi < B.
 */
int hetsgd_omnilearn_fit(const long *published, int P, long B, long lo, long hi, long *plan);

#endif /* HETSGD_OMNILEARN_H */
