/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Work that moves inside a step: the policy, without MPI or atomics, that
 * the API's chunked step and bench/simulate share.  A rank works its range
 * of the step in chunks taken from the front, each a fraction of what is
 * left (guided self-scheduling), or of what it can do before the step's
 * expected end, so the chunks shrink toward the end of the range and the
 * part of a rank's range that is neither done nor in flight stays large
 * enough to be taken while there is time to take it.  Who should do what is
 * left is the water level of a group's unclaimed samples (its node's, read
 * from the words in shared memory; a node's and one remote thief's, when a
 * helper answers): every rank's quota of them.  A rank with nothing left
 * takes from the *tail* of the rank furthest beyond its quota, at most its
 * own quota; it asks its node's ranks first, then a few peers in other
 * nodes (FlexRR's helper groups, Harlap et al., SoCC 2016), in an order
 * fixed by rank, layout and seed.
 *
 * Sizes are integers and every answer is deterministic: the same arguments
 * give the same answer on every rank and machine.  Times are nanoseconds
 * (int64_t), sizes samples (long).
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

/**
 * \brief ob_chunk_next() guided by time: the fraction is taken of what the rank can do before
 *        the step's expected end rather than of all it has left.
 *
 * ceil(min(left, until_ns / own_ns) / divisor), rounded up to the granularity, at least the
 * floor, at most \p left.  A rank on time cuts its range as ob_chunk_next() does; a rank
 * behind (more left than it can do by the expected end) takes smaller chunks, so that more of
 * its range stays in its tail, where thieves can take it, and its chunk in flight does not
 * run long past the end; past the expected end (until_ns <= 0) every chunk is the floor.
 * Never larger than ob_chunk_next(p, left), and never grows while left and until_ns shrink.
 *
 * \param[in] own_ns    the rank's nanoseconds per sample (< 1: taken as 1).
 * \param[in] until_ns  nanoseconds until the step's expected end.
 */
long ob_chunk_next_until(const ob_chunk_policy *p, long left, int64_t own_ns, int64_t until_ns);

/**
 * \brief The water level of a group's unclaimed samples, and each rank's quota of them.
 *
 * Rank j of the \p n is free for more work avail_ns[j] from now and then does a sample every
 * ns_per_sample[j].  The level is the least time T (from now) by which the group can do
 * \p samples whole samples: the least T with
 *     sum_j quota_j(T) >= samples,  quota_j(T) = max(0, floor((T - avail_ns[j]) / ns_per_sample[j])),
 * found exactly in integers (a floating-point estimate only picks where to start).  quota[j] is
 * rank j's term at that T: the samples the best split of the group's work gives it.  They sum to
 * \p samples but when several ranks' next samples end at T exactly, then a little more.  This is
 * the per-step oracle's water-filling on what is left of the step: a rank whose quota is below
 * what it holds is behind (its excess is for thieves), a rank with a quota and nothing left is a
 * thief, a rank with quota 0 should start nothing more.
 *
 * \param[in]  n              ranks, >= 1.
 * \param[in]  avail_ns       n times in [0, 2^60).
 * \param[in]  ns_per_sample  n rates in [1, 2^36) (a sample of up to about a minute).
 * \param[in]  samples        the group's unclaimed samples, < 2^24 (<= 0: none; level 0, quotas 0).
 * \param[out] level_ns       T.
 * \param[out] quota          n quotas.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG naming the first argument out of range;
 *         OMNIBATCH_ERR_NOMEM (only above 128 ranks, which need scratch memory).
 */
int ob_chunk_level(int n, const int64_t *avail_ns, const int64_t *ns_per_sample, long samples, int64_t *level_ns,
                   long *quota);

/**
 * \brief How many samples a thief takes from the tail of a victim's range.
 *
 * min(excess, quota): the victim's tail beyond its own quota, and at most the thief's quota
 * (ob_chunk_level()), rounded down to the granularity; nothing when that is below the floor,
 * unless it is the victim's whole tail, shorter than the floor.  So a thief never takes more than
 * the victim has left nor more than the level gives it, and the victim's remainder keeps the
 * granularity when its tail had it.
 *
 * \param[in] p       a checked policy.
 * \param[in] tail    the victim's samples neither done nor in flight.
 * \param[in] excess  of them, those beyond its quota (<= tail).
 * \param[in] quota   the thief's quota.
 * \return the share, in [0, min(excess, quota)]; 0 when any argument is <= 0.
 */
long ob_chunk_share(const ob_chunk_policy *p, long tail, long excess, long quota);

/* The most sizes of chunk whose least time a step keeps for the fit. */
#define OB_CHUNK_COST_SIZES 32

/**
 * A chunk's time as a fixed part and a part per sample, t = a + b n, fitted by least squares to
 * one step's chunks of a rank (one speed).  The fixed part is what a chunk costs beside its
 * samples (a call into the library, a forward and backward's setup, a gradient accumulated
 * whole): many small chunks spend a step on it.  Each chunk's time is read as the least of its
 * size's in the step: a delay (a late wake-up, a neighbour's burst) only ever lengthens a
 * chunk, and one chunk of 8 delayed 4 ms among fifteen of 16 (1.5 ms + 1 ms a sample, beside
 * two busy loops on 2 cores) read as a fixed part of 7.9 samples' worth, not 1.5, and the
 * floor rose fivefold.  A step's first chunk differs from the chunks after it (it carries what
 * the step's start leaves, caches cold after the reduction, or none of a chunk's fixed part where
 * the step pays that part once): its time stands for its size only until a later chunk of that
 * size comes.  As the least of its size, a first chunk 1.5 ms quicker than its fourteen
 * followers of 69 samples, beside one of 60, read as a fixed part of 15 samples' worth, not 1.9,
 * and the floor rose from 32 to 123 (hetsgd transient at B = 4096, where the emulation charges a
 * step's first chunk no chunk's fixed part).  The sums \p w, \p n and \p t are of every chunk;
 * the fit is of the first OB_CHUNK_COST_SIZES sizes' chunks.
 */
typedef struct ob_chunk_cost {
    double w, n, t;              /**< chunks, their samples and seconds */
    int sizes;                   /**< sizes in size[] */
    long size[OB_CHUNK_COST_SIZES];
    long count[OB_CHUNK_COST_SIZES];   /**< chunks of each size */
    double least[OB_CHUNK_COST_SIZES]; /**< the least seconds of a chunk of each size */
    char first[OB_CHUNK_COST_SIZES];   /**< whether that least is the step's first chunk's alone */
} ob_chunk_cost;

/* A chunk's fixed part is at most this fraction of its time when its size is from the cost: the
 * most a step with nothing to move pays for its chunks.  At a quarter, three hosts' steps took
 * 1.30x the oracle's with nothing moving (1.07x at a tenth) and hetsgd's under jitter 1.124x
 * (1.112x); hetsgd's chunks, 1.7 samples' worth each, are then at least 16 samples, a sixteenth
 * of its plans (bench/results/chunks.md). */
#define OB_CHUNK_COST_SHARE 0.1
/* ... of the median of the latest OB_CHUNK_WORTH_STEPS steps' own worths; before as many steps,
 * this fraction of their mean.  A worth misread raises the floor by (1 - share) / share times
 * what was misread, 9x at a tenth: one step's chunk of 1 sample 2 ms late among chunks of 16 (1
 * ms a sample) reads as 3 samples' worth more, and in the mean a rank slowed 20x then worked
 * chunks of 52 at its new speed where those of 14 are due (under MPICH, 4 ranks beside three busy
 * loops on 2 cores). */
#define OB_CHUNK_COST_SHARE_UNSURE 0.25
#define OB_CHUNK_WORTH_STEPS 3
/* ... the latest of those whose chunks determine the fit at least this well (the weight of
 * ob_chunk_worth, 1 / (1 / w + mean^2 / Sxx): the intercept's standard error at most 1 / sqrt of
 * it times a chunk's noise); the rest count in the mean alone.  Steps of chunks of two sizes
 * 13% apart weigh 0.02-0.03 (their intercept's error 6-7 times a chunk's noise; 13 chunks of 78
 * and 2 of 68 read 3.4 samples' worth where the steps around them read 1.7; 14 of 69 and one
 * of 60, 0.016), a whole range's probe in two fifths and three fifths (ob_chunk_whole_floor())
 * 0.077, steps of sixteenths of the plan and two halves of the floor 0.3-0.5. */
#define OB_CHUNK_WORTH_WEIGHT 0.05

/** \brief Count a chunk of \p n samples (> 0) that took \p seconds (>= 0); others are ignored. */
void ob_chunk_cost_add(ob_chunk_cost *c, long n, double seconds);

/** \brief ob_chunk_cost_add() for the step's first chunk: its time is its size's least only until
 *  a later chunk of that size is counted. */
void ob_chunk_cost_add_first(ob_chunk_cost *c, long n, double seconds);

/**
 * \brief The fit: *a (seconds, >= 0) and *b (seconds a sample, > 0).
 * \return 1 when the chunks determine it (sizes that differ, time growing with size); else 0,
 *         *a and *b set to 0.
 */
int ob_chunk_cost_fit(const ob_chunk_cost *c, double *a, double *b);

/**
 * The fixed part across steps, in samples' worth: each step's own fit's a / b, weighted by how
 * well its chunks determine it (1 / (1 / w + mean^2 / Sxx): the inverse of the intercept's
 * variance in units of b) and decayed.  A speed changes between steps, not the worth: the
 * chunks of two steps fitted together, their sizes differing more between the steps than
 * within each, read a 10% change of speed as a fixed part of many samples' worth.
 */
typedef struct ob_chunk_worth {
    double sum;                  /**< the weighted worths, decayed */
    double w;                    /**< their weights, decayed (0: none yet) */
    double latest[OB_CHUNK_WORTH_STEPS]; /**< the latest steps' own worths of weight at least
                                              OB_CHUNK_WORTH_WEIGHT, the newest first */
    int steps;                   /**< of them known */
} ob_chunk_worth;

/**
 * \brief Fold a step's chunks \p step into \p m (its weights first kept by \p keep in [0, 1])
 *        where they determine a fit (ob_chunk_cost_fit()), and give the cost at the step's
 *        speed: *b = T / (C r + N) of the step's C chunks of N samples in T seconds, r the
 *        worth, and *a = r b.
 * \return 1 when a worth is known and the step has chunks; else 0, *a and *b set to 0.
 */
int ob_chunk_worth_step(ob_chunk_worth *m, const ob_chunk_cost *step, double keep, double *a, double *b);

/**
 * \brief The worth to size the floor by (ob_chunk_cost_floor()), and in \p share the share of a
 *        chunk's time its fixed part may be: the median of the latest OB_CHUNK_WORTH_STEPS steps
 *        that determined a worth with at least OB_CHUNK_WORTH_WEIGHT, at OB_CHUNK_COST_SHARE;
 *        before as many such steps, the weighted mean of every step's at
 *        OB_CHUNK_COST_SHARE_UNSURE; 0 before any.
 */
double ob_chunk_worth_floor(const ob_chunk_worth *m, double *share);

/* Steps in a row whose whole range the cost's floor made one chunk before the worth is read
 * again (ob_chunk_whole_floor()). */
#define OB_CHUNK_WHOLE_STEPS 8
/* ... then the floor at this fraction of the range: chunks of two fifths and three fifths, two
 * sizes for a fit (equal sizes, as quarters of a range of 4 k, determine none). */
#define OB_CHUNK_WHOLE_PROBE 0.4
/* ... where the range is at least this many least floors long. */
#define OB_CHUNK_WHOLE_LEAST 4

/**
 * \brief The floor \p floor_cost (ob_chunk_cost_floor() of the worth \p m) for a rank's range of
 *        \p range samples, unless it has taken the whole range OB_CHUNK_WHOLE_STEPS steps in a row
 *        (counted in \p *whole), the range at least OB_CHUNK_WHOLE_LEAST floors \p least long.
 *        A step worked in one chunk has one size, which determines no fit
 *        (ob_chunk_worth_step()): a worth misread once (a change of speed inside a step) then
 *        held the floor at the whole range for good, and no thief could take any of it.  Then
 *        the worth is forgotten for the one whose floor (at OB_CHUNK_COST_SHARE) is
 *        OB_CHUNK_WHOLE_PROBE of the range, in granules, and that floor is returned: the next
 *        steps' chunks fit the worth anew.  \p granularity: as ob_chunk_cost_floor()'s.
 */
long ob_chunk_whole_floor(ob_chunk_worth *m, int *whole, long floor_cost, long range, long least, long granularity);

/**
 * \brief The least chunk whose fixed part is at most \p share (in (0, 1)) of its time, for a
 *        fit (ob_chunk_cost_fit()) of \p a seconds a chunk and \p b seconds a sample:
 *        n >= a (1 - share) / (share b), rounded up to the granularity, at most \p limit
 *        (itself at least one granule); the granularity where a or b is not above 0 (no fit).
 */
long ob_chunk_cost_floor(double a, double b, double share, long granularity, long limit);

/**
 * \brief Whether a chunk of \p n samples that took \p seconds ran at less than 1 / \p factor of
 *        the pace of the \p before samples in \p chunks chunks that took \p before_s before it,
 *        the fixed part \p a of each chunk taken into account: seconds > factor (a + n b) with
 *        b = (before_s - chunks a) / before.  With a = 0, the rates compared.  Where the chunks'
 *        fit is known (\p a and \p fit_b seconds a sample, both above 0) and the chunks before
 *        took s = before_s / (chunks a + before fit_b) > 1 times what it says, a is s a: the
 *        rank ran slower since before them, its fixed part too.
 */
int ob_chunk_slower(long n, double seconds, long before, long chunks, double before_s, double a, double fit_b,
                    double factor);

/**
 * \brief Whether a chunk of \p n samples that took \p seconds ran at more than \p factor times
 *        the pace of the chunks before it, judged as ob_chunk_slower() judges (factor seconds <
 *        a + n b): the rank sped up inside the step.
 */
int ob_chunk_faster(long n, double seconds, long before, long chunks, double before_s, double a, double fit_b,
                    double factor);



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
