/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Where each rank's samples come from.  Each epoch has one permutation of
 * the N samples, the same on every rank (shared seed).  Global step k of an
 * epoch covers positions [k*B, min((k+1)*B, N)); rank i takes the slice that
 * starts after ranks 0..i-1.  On a full step rank i's count is plan_i; the
 * last, short step of an epoch (r = N - k*B < B samples) is split in
 * proportion to the same plan by largest remainder, so the counts sum to r.
 * Whatever sequence of plans is applied, every sample is used exactly once
 * per epoch.  MPI-free.
 */
#ifndef OB_SHARD_H
#define OB_SHARD_H

#include <stdint.h>

/**
 * \brief Steps in an epoch of N samples with global batch B: ceil(N / B).
 * \return the count, or 0 when N < 1 or B < 1 (with the detail in ob_last_error()).
 */
long ob_shard_steps_per_epoch(long N, long B);

/**
 * \brief Every rank's count for step \p step (0-based within the epoch).
 *
 * On the short last step each rank gets floor(plan_i * r / B), and the ranks
 * with the largest remainders one more (equal remainders: lower rank first),
 * so 0 <= counts_i <= plan_i and a rank with plan_i = 0 gets nothing.
 *
 * \param[in]  N      samples per epoch, >= 1.
 * \param[in]  B      global batch, >= 1.
 * \param[in]  step   in [0, ob_shard_steps_per_epoch(N, B)).
 * \param[in]  P      ranks, >= 1.
 * \param[in]  plan   P integers >= 0 summing to B.
 * \param[out] counts P integers summing to the step's size (B, or the short remainder).
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG naming the bad argument, or OMNIBATCH_ERR_NOMEM.
 */
int ob_shard_counts(long N, long B, long step, int P, const long *plan, long *counts);

/**
 * \brief Rank \p rank's slice of step \p step: positions [start, start + count) of the epoch's
 *        permutation.
 *
 * Arguments as ob_shard_counts(); \p rank in [0, P).  start is step * B plus the counts of
 * ranks 0..rank-1, so the slices of one step are adjacent and in rank order.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG naming the bad argument, or OMNIBATCH_ERR_NOMEM.
 */
int ob_shard_locate(long N, long B, long step, int P, const long *plan, int rank,
                    long *start, long *count);

/**
 * \brief The epoch's permutation of 0..N-1, the same for the same (seed, epoch) on every machine
 *        (own PRNG, not rand()).
 *
 * Fisher-Yates shuffle driven by xoshiro256** seeded through splitmix64 from
 * (seed, epoch); integer arithmetic only, so the result does not depend on
 * the compiler, libc or CPU.
 * \param[in]  epoch  >= 0.
 * \param[in]  N      >= 1.
 * \param[out] perm   N entries.
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_ARG.
 */
int ob_shard_permutation(uint64_t seed, long epoch, long N, long *perm);

#endif /* OB_SHARD_H */
