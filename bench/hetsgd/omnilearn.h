/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OmniLearn's batch rule (Tyagi and Sharma, "OmniLearn: A Framework for
 * Distributed Deep Learning over Heterogeneous Clusters", IEEE TPDS 2025),
 * reproduced as published so it can run side by side with omnibatch.  Once
 * per epoch, from each rank's mean compute time t_i of that epoch:
 *
 *   1. proportional step: b_i' = b_i * mean_t / t_i, only for ranks outside
 *      the dead-band |t_i - mean_t| / mean_t > 20% (the others keep b_i);
 *   2. bounds: b_i' clamped to [lo, hi];
 *   3. the global batch restored by an equal additive share,
 *      b_i = ceil(b_i' + (B - sum_j b_j') / P).
 *
 * Step 3 is applied after step 2 and rounds every rank up, so the published
 * plan can sum to more than B (by up to P - 1) and can leave the bounds.
 * hetsgd_omnilearn_published() returns exactly that plan.
 *
 * The omnibatch API holds the global batch fixed (sum == B, bounds kept),
 * so hetsgd_omnilearn_fit() maps the published plan onto it: every b_i is
 * first put back inside [lo, hi], then the excess is trimmed one sample at
 * a time from the largest batch (or a shortfall added one at a time to the
 * smallest), lowest rank first on ties.  The plan run is therefore the
 * published one minus at most a few samples from its largest entry.
 */
#ifndef HETSGD_OMNILEARN_H
#define HETSGD_OMNILEARN_H

/** The published dead-band: ranks within 20% of the mean time keep their batch. */
#define HETSGD_OMNILEARN_DEADBAND 0.2

/**
 * \brief The published rule: the next plan from the current one and the epoch's mean times.
 * \param[in] b         P current local batches (>= 0).
 * \param[in] t         P mean compute times per step of the epoch (> 0; a rank with t <= 0
 *                      keeps its batch in step 1).
 * \param[in] deadband  relative dead-band (published: HETSGD_OMNILEARN_DEADBAND).
 * \param[in] lo, hi    bounds of step 2, 0 <= lo <= hi.
 * \param[out] published P batches as the rule gives them (sum may exceed B; may break bounds;
 *                       never negative).
 */
int hetsgd_omnilearn_published(const long *b, const double *t, int P, long B, double deadband,
                               long lo, long hi, long *published);

/**
 * \brief Map a plan onto the fixed global batch: inside [lo, hi], summing to B exactly.
 * \param[out] plan P batches; OMNIBATCH_ERR_INFEASIBLE if P*lo > B or P*hi < B.
 */
int hetsgd_omnilearn_fit(const long *published, int P, long B, long lo, long hi, long *plan);

#endif /* HETSGD_OMNILEARN_H */
