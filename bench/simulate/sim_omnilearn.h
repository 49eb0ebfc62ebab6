/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * OmniLearn's batch rule (Tyagi and Sharma, IEEE TPDS 2025), as the
 * benchmarks compare against it: once per epoch every rank's batch moves by
 * b_i -= (b_i / t_i) (t_i - mean t), i.e. b_i *= mean t / t_i, unless its
 * time is within a dead-band (20%) of the mean; the result is truncated to
 * an integer and clamped to the bounds; then the global batch is restored
 * by adding the same share, ceil((B - sum b) / P), to every rank.  The
 * ceiling means the sum can exceed B (by up to P - 1) and the share can
 * carry a rank past its upper bound; both are kept, as published.  Only a
 * batch below 1 is lifted to 1, since a rank cannot do negative work.
 */
#ifndef OB_SIM_OMNILEARN_H
#define OB_SIM_OMNILEARN_H

/** The published dead-band: a rank within 20% of the mean time keeps its batch. */
#define OB_SIM_OMNILEARN_DEADBAND 0.2

/**
 * \brief One adjustment, at the end of an epoch.
 * \param[in] t         P mean step (compute) times of the epoch, finite and > 0.
 * \param[in] deadband  relative dead-band, >= 0.
 * \param[in] lo, hi    bounds applied before the correction (1 <= lo <= hi).
 * \param[in,out] b     P batches (>= 1).
 * \param[out] sum      the sum of the new batches (may be NULL).
 * \param[out] moved    how many ranks were outside the dead-band (may be NULL).
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_ARG (then \p b is unchanged).
 */
int ob_sim_omnilearn_adjust(int P, long B, const double *t, double deadband, long lo, long hi,
                            long *b, long *sum, int *moved);

#endif /* OB_SIM_OMNILEARN_H */
