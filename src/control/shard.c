/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Sharding arithmetic (ob_shard.h): integers only, so that every rank on
 * every machine computes the same slices and the same permutation.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "ob_error.h"
#include "ob_rng.h"
#include "ob_shard.h"

long ob_shard_steps_per_epoch(long N, long B)
{
    if (N < 1) {
        ob_fail(OMNIBATCH_ERR_ARG, "N=%ld: expected a data set of at least 1 sample", N);
        return 0;
    }
    if (B < 1) {
        ob_fail(OMNIBATCH_ERR_ARG, "B=%ld: expected a global batch of at least 1 sample", B);
        return 0;
    }
    /* ceil(N / B) without forming N + B - 1, which may overflow. */
    return (N - 1) / B + 1;
}

/* Every argument of a step; on success *total is the step's size. */
static int ob_shard_check(long N, long B, long step, int P, const long *plan, long *total)
{
    long steps = ob_shard_steps_per_epoch(N, B);
    long sum = 0;

    if (0 == steps) {
        return OMNIBATCH_ERR_ARG;
    }
    if (step < 0 || step >= steps) {
        return ob_fail(OMNIBATCH_ERR_ARG, "step=%ld: expected a step in [0, %ld] (N=%ld, B=%ld)",
                       step, steps - 1, N, B);
    }
    if (P < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "P=%d: expected at least 1 rank", P);
    }
    if (NULL == plan) {
        return ob_fail(OMNIBATCH_ERR_ARG, "plan=NULL: expected P=%d counts", P);
    }
    for (int i = 0; i < P; i++) {
        if (plan[i] < 0) {
            return ob_fail(OMNIBATCH_ERR_ARG, "plan[%d]=%ld: expected a count >= 0", i, plan[i]);
        }
        if (plan[i] > B - sum) {
            return ob_fail(OMNIBATCH_ERR_ARG,
                           "plan[%d]=%ld takes the plan's sum past B=%ld: expected counts summing to B",
                           i, plan[i], B);
        }
        sum += plan[i];
    }
    if (sum != B) {
        return ob_fail(OMNIBATCH_ERR_ARG, "plan sums to %ld: expected counts summing to B=%ld",
                       sum, B);
    }
    *total = step < steps - 1 ? B : N - step * B;
    return OMNIBATCH_SUCCESS;
}

/* floor(a * b / c) and the remainder, exactly, for 0 <= a <= c, 0 <= b < c:
 * the product may not fit in a long, so beyond that it is formed bit by bit
 * (each partial remainder stays below c < 2^63, so sums fit in 64 bits). */
static void ob_muldiv(long a, long b, long c, long *quot, long *rem)
{
    uint64_t q = 0;
    uint64_t r = 0;
    uint64_t ua = (uint64_t) a;
    uint64_t uc = (uint64_t) c;

    if (0 == a || b <= LONG_MAX / a) {
        *quot = a * b / c;
        *rem = a * b % c;
        return;
    }
    for (int bit = 62; bit >= 0; bit--) {
        q <<= 1;
        r <<= 1;
        if (r >= uc) {
            r -= uc;
            q++;
        }
        if (0 != (((uint64_t) b >> bit) & 1u)) {
            r += ua;
            if (r >= uc) {
                r -= uc;
                q++;
            }
        }
    }
    *quot = (long) q;
    *rem = (long) r;
}

typedef struct ob_share {
    long rem;                    /* numerator of the fractional part, over B */
    int rank;
} ob_share;

/* Largest remainder first; among equal remainders the lower rank: the
 * order is total, so every rank sorts to the same result. */
static int ob_share_cmp(const void *pa, const void *pb)
{
    const ob_share *a = pa;
    const ob_share *b = pb;

    if (a->rem != b->rem) {
        return a->rem > b->rem ? -1 : 1;
    }
    return a->rank < b->rank ? -1 : (a->rank > b->rank ? 1 : 0);
}

/* The short step's r samples in proportion to the plan: floor(plan_i*r/B)
 * each, then one more to the ranks with the largest remainders.  A rank
 * with plan_i = 0 gets nothing, and no rank gets more than plan_i. */
static int ob_split_short(long B, long r, int P, const long *plan, long *counts)
{
    ob_share *shares = malloc((size_t) P * sizeof *shares);
    long given = 0;

    if (NULL == shares) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "P=%d: no memory to split the epoch's last step", P);
    }
    for (int i = 0; i < P; i++) {
        ob_muldiv(plan[i], r, B, &counts[i], &shares[i].rem);
        shares[i].rank = i;
        given += counts[i];
    }
    qsort(shares, (size_t) P, sizeof *shares, ob_share_cmp);
    /* The fractional parts sum to r - given < P, each below 1: exactly that
     * many ranks with a positive remainder get one more. */
    for (long k = 0; k < r - given; k++) {
        counts[shares[k].rank]++;
    }
    free(shares);
    return OMNIBATCH_SUCCESS;
}

int ob_shard_counts(long N, long B, long step, int P, const long *plan, long *counts)
{
    long total;
    int rc = ob_shard_check(N, B, step, P, plan, &total);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (NULL == counts) {
        return ob_fail(OMNIBATCH_ERR_ARG, "counts=NULL: expected room for P=%d counts", P);
    }
    if (total == B) {
        for (int i = 0; i < P; i++) {
            counts[i] = plan[i];
        }
        return OMNIBATCH_SUCCESS;
    }
    return ob_split_short(B, total, P, plan, counts);
}

int ob_shard_locate(long N, long B, long step, int P, const long *plan, int rank,
                    long *start, long *count)
{
    long total;
    long before = 0;
    long *counts;
    int rc = ob_shard_check(N, B, step, P, plan, &total);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (rank < 0 || rank >= P) {
        return ob_fail(OMNIBATCH_ERR_ARG, "rank=%d: expected a rank in [0, %d]", rank, P - 1);
    }
    if (NULL == start || NULL == count) {
        return ob_fail(OMNIBATCH_ERR_ARG, "start or count is NULL: expected where to store the slice");
    }
    if (total == B) {
        for (int i = 0; i < rank; i++) {
            before += plan[i];
        }
        *start = step * B + before;
        *count = plan[rank];
        return OMNIBATCH_SUCCESS;
    }
    counts = malloc((size_t) P * sizeof *counts);
    if (NULL == counts) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "P=%d: no memory to split the epoch's last step", P);
    }
    rc = ob_split_short(B, total, P, plan, counts);
    if (OMNIBATCH_SUCCESS == rc) {
        for (int i = 0; i < rank; i++) {
            before += counts[i];
        }
        *start = step * B + before;
        *count = counts[rank];
    }
    free(counts);
    return rc;
}

/* ---- the epoch's permutation ------------------------------------------------ */

/* Uniform in [0, n) by rejection: the values below 2^64 mod n would make
 * the small residues more likely. */
static uint64_t ob_uniform_below(uint64_t s[4], uint64_t n)
{
    uint64_t threshold = (0 - n) % n;
    uint64_t x;

    do {
        x = ob_rng_xoshiro_next(s);
    } while (x < threshold);
    return x % n;
}

int ob_shard_permutation(uint64_t seed, long epoch, long N, long *perm)
{
    uint64_t s[4];
    uint64_t x = (uint64_t) epoch;

    if (N < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "N=%ld: expected a data set of at least 1 sample", N);
    }
    if (epoch < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "epoch=%ld: expected an epoch >= 0", epoch);
    }
    if (NULL == perm) {
        return ob_fail(OMNIBATCH_ERR_ARG, "perm=NULL: expected room for N=%ld positions", N);
    }
    /* The epoch is mixed before the seed is added, so (seed, epoch + 1) and
     * (seed + 1, epoch) do not share a stream. */
    ob_rng_xoshiro_seed(s, seed + ob_rng_splitmix64(&x));
    for (long i = 0; i < N; i++) {
        perm[i] = i;
    }
    /* Fisher-Yates, from the end: position i takes any of 0..i. */
    for (long i = N - 1; i > 0; i--) {
        long j = (long) ob_uniform_below(s, (uint64_t) i + 1);
        long tmp = perm[i];

        perm[i] = perm[j];
        perm[j] = tmp;
    }
    return OMNIBATCH_SUCCESS;
}
