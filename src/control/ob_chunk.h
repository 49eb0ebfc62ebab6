/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Work that moves inside a step: the policy, without MPI or atomics, that
 * the API's chunked step and bench/simulate share.  A rank works its range
 * of the step in chunks taken from the front, each a fraction of what is
 * left (guided self-scheduling), so the chunks shrink toward the end of the
 * range and the part of a rank's range that is neither done nor in flight
 * stays large enough to be taken while there is time to take it.  Once its
 * own range is empty a rank takes a share from the *tail* of a slower
 * rank's range, as much as makes both finish together; it asks its node's
 * ranks first, then a few peers in other nodes (FlexRR's helper groups,
 * Harlap et al., SoCC 2016), in an order fixed by rank, layout and seed.
 *
 * Everything here is integer arithmetic and deterministic: the same
 * arguments give the same answer on every rank and machine.  Times are
 * nanoseconds (int64_t), sizes samples (long).
 */
#ifndef OB_CHUNK_H
#define OB_CHUNK_H

#include <stdint.h>

/* A chunk is about this fraction (1 / divisor) of the samples left. */
#define OB_CHUNK_DEFAULT_DIVISOR 4
/* The smallest chunk, in samples (rounded to the granularity by the caller). */
#define OB_CHUNK_DEFAULT_FLOOR 1

/** How a range is cut into chunks and how much a thief takes. */
typedef struct ob_chunk_policy {
    long floor;                  /**< smallest chunk or share, samples: >= granularity, a multiple of it */
    long granularity;            /**< every chunk and share a multiple of this (>= 1), save a range's last piece */
    long divisor;                /**< a chunk is ceil(left / divisor) rounded up to the granularity (>= 1) */
} ob_chunk_policy;

/**
 * \brief Check a policy.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG with one line naming the field, its value
 *         and what is allowed (ob_last_error()).
 */
int ob_chunk_policy_check(const ob_chunk_policy *p);

/**
 * \brief The size of the next chunk from the front of a range with \p left samples left.
 *
 * ceil(left / divisor), rounded up to a multiple of the granularity, at least the floor, at
 * most \p left.  So the chunks of a range taken one after another sum to it exactly, never
 * grow (the size never falls when \p left grows), are multiples of the granularity but for
 * the range's last when \p left is not one, and none is below the floor but that last.
 *
 * \param[in] p     a checked policy.
 * \param[in] left  samples left in the range (<= 0: none).
 * \return the chunk's size in [min(floor, left), left]; 0 when \p left <= 0.
 */
long ob_chunk_next(const ob_chunk_policy *p, long left);

/** A thief's view of a victim's range, and of itself. */
typedef struct ob_chunk_view {
    long left;                   /**< victim's samples neither done nor in flight (the tail's length) */
    int64_t victim_busy_ns;      /**< until the victim's chunk in flight ends (0: none in flight) */
    int64_t victim_ns;           /**< victim's nanoseconds per sample (> 0) */
    int64_t thief_delay_ns;      /**< until the thief can start on what it takes (the steal's latency) */
    int64_t thief_ns;            /**< thief's nanoseconds per sample (> 0) */
} ob_chunk_view;

/**
 * \brief How many samples a thief takes from the tail of a victim's range.
 *
 * The share s that makes both finish earliest together: the least of
 * max(victim_busy + (left - s) * victim_ns, thief_delay + s * thief_ns) over the shares allowed,
 * which are the multiples of the granularity in [floor, left], and left itself (the whole
 * tail, also when it is shorter than the floor).  A share is taken only when it makes that
 * maximum smaller than the victim's finish without the steal; equal maxima go to the smaller
 * share.  So the thief never takes more than the victim has left, never a share that would
 * finish after the victim would have, and the victim's remainder stays a multiple of the
 * granularity when its tail was one.
 *
 * \param[in]  p     a checked policy.
 * \param[in]  v     left >= 0; victim_busy_ns, thief_delay_ns >= 0; victim_ns, thief_ns > 0.
 * \param[out] take  the share, in [0, v->left]; 0: no share helps.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG naming the field out of range, or when a time
 *         does not fit in 63 bits of nanoseconds.
 */
int ob_chunk_steal(const ob_chunk_policy *p, const ob_chunk_view *v, long *take);

/** Where ranks are: numbered node by node, \p per_node to a node (the last may hold fewer). */
typedef struct ob_chunk_layout {
    int nranks;                  /**< >= 1 */
    int per_node;                /**< >= 1; node n holds ranks [n * per_node, min((n + 1) * per_node, nranks)) */
    uint64_t seed;               /**< the helper order's seed, the same on every rank */
} ob_chunk_layout;

/**
 * \brief Check a layout.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG with one line naming the field.
 */
int ob_chunk_layout_check(const ob_chunk_layout *l);

/** \brief The number of other ranks in \p rank's node (its in-node candidates). */
int ob_chunk_node_peers(const ob_chunk_layout *l, int rank);

/**
 * \brief The \p k-th rank that \p rank asks for work.
 *
 * k in [0, ob_chunk_node_peers()): its node's other ranks, from the next one up, wrapping
 * round (a thief reads all their words; this order breaks ties).  k from there to
 * nranks - 2: every rank of the other nodes, in a pseudo-random order fixed by (seed, rank)
 * (an affine permutation), so that the first few are a helper group spread over other
 * nodes and different ranks have different groups.  Each other rank comes exactly once
 * over k in [0, nranks - 1).
 *
 * \param[in] l     a checked layout.
 * \param[in] rank  in [0, nranks).
 * \param[in] k     in [0, nranks - 1).
 * \return the candidate's rank; -1 when \p rank or \p k is out of range.
 */
int ob_chunk_victim(const ob_chunk_layout *l, int rank, long k);

#endif /* OB_CHUNK_H */
