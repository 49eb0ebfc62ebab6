/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The chunked step's policy (ob_chunk.h): chunk sizes, a thief's share,
 * the order in which a rank asks its peers.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "ob_chunk.h"
#include "ob_error.h"
#include "ob_rng.h"

int ob_chunk_policy_check(const ob_chunk_policy *p)
{
    if (NULL == p) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk policy: NULL");
    }
    if (p->granularity < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk granularity=%ld: expected >= 1", p->granularity);
    }
    if (p->floor < p->granularity || 0 != p->floor % p->granularity) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk floor=%ld: expected a multiple of the granularity %ld, at least "
                       "one", p->floor, p->granularity);
    }
    if (p->divisor < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk divisor=%ld: expected >= 1", p->divisor);
    }
    return OMNIBATCH_SUCCESS;
}

long ob_chunk_next(const ob_chunk_policy *p, long left)
{
    if (left <= 0) {
        return 0;
    }
    const long g = p->granularity;
    long c = left / p->divisor + (0 != left % p->divisor ? 1 : 0);

    c = (c / g + (0 != c % g ? 1 : 0)) * g;
    c = c < p->floor ? p->floor : c;
    return c < left ? c : left;
}

/* ---- a thief's share ------------------------------------------------------ */

/* Whether every time a share of the tail can give fits in 63 bits. */
static int ob_chunk_view_fits(const ob_chunk_view *v)
{
    int64_t victim_all;
    int64_t thief_all;
    int64_t rates;

    return !__builtin_mul_overflow((int64_t) v->left, v->victim_ns, &victim_all)
           && !__builtin_add_overflow(victim_all, v->victim_busy_ns, &victim_all)
           && !__builtin_mul_overflow((int64_t) v->left, v->thief_ns, &thief_all)
           && !__builtin_add_overflow(thief_all, v->thief_delay_ns, &thief_all)
           && !__builtin_add_overflow(v->victim_ns, v->thief_ns, &rates);
}

static int ob_chunk_view_check(const ob_chunk_view *v)
{
    if (NULL == v) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk steal: view NULL");
    }
    if (v->left < 0 || v->victim_busy_ns < 0 || v->thief_delay_ns < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk steal: left=%ld victim_busy_ns=%lld thief_delay_ns=%lld: "
                       "expected all >= 0", v->left, (long long) v->victim_busy_ns, (long long) v->thief_delay_ns);
    }
    if (v->victim_ns < 1 || v->thief_ns < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk steal: victim_ns=%lld thief_ns=%lld: expected both >= 1",
                       (long long) v->victim_ns, (long long) v->thief_ns);
    }
    if (!ob_chunk_view_fits(v)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk steal: left=%ld at victim_ns=%lld or thief_ns=%lld: expected "
                       "the tail's time to fit in 63 bits of nanoseconds", v->left, (long long) v->victim_ns,
                       (long long) v->thief_ns);
    }
    return OMNIBATCH_SUCCESS;
}

/* When both are done if the thief takes s (checked: no overflow). */
static int64_t ob_chunk_both_done(const ob_chunk_view *v, long s)
{
    const int64_t victim = v->victim_busy_ns + (int64_t) (v->left - s) * v->victim_ns;
    const int64_t thief = v->thief_delay_ns + (int64_t) s * v->thief_ns;
    return victim > thief ? victim : thief;
}

/* The better of shares a and b (the earlier finish, the smaller share on a tie). */
static long ob_chunk_better(const ob_chunk_view *v, long a, long b)
{
    const int64_t ta = ob_chunk_both_done(v, a);
    const int64_t tb = ob_chunk_both_done(v, b);
    if (ta != tb) {
        return ta < tb ? a : b;
    }
    return a < b ? a : b;
}

int ob_chunk_steal(const ob_chunk_policy *p, const ob_chunk_view *v, long *take)
{
    const int rc = ob_chunk_view_check(v);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    *take = 0;
    if (0 == v->left) {
        return OMNIBATCH_SUCCESS;
    }
    const long g = p->granularity;
    const long top = v->left / g * g;     /* the largest multiple of the granularity allowed */
    /* The share that equalises the finishes, continuous: the finish time
     * max(...) is convex in s, least near it, so its two neighbours among
     * the allowed shares and the whole tail are the only candidates. */
    const int64_t gap = v->victim_busy_ns + (int64_t) v->left * v->victim_ns - v->thief_delay_ns;
    const long even = gap > 0 ? (long) (gap / (v->victim_ns + v->thief_ns)) : 0;
    long best = v->left;

    if (top >= p->floor) {
        long down = even / g * g;
        down = down < p->floor ? p->floor : (down > top ? top : down);
        const long up = down + g <= top ? down + g : down;
        best = ob_chunk_better(v, ob_chunk_better(v, down, up), best);
    }
    if (ob_chunk_both_done(v, best) < ob_chunk_both_done(v, 0)) {
        *take = best;
    }
    return OMNIBATCH_SUCCESS;
}

/* ---- whom to ask ---------------------------------------------------------- */

int ob_chunk_layout_check(const ob_chunk_layout *l)
{
    if (NULL == l) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk layout: NULL");
    }
    if (l->nranks < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk layout: nranks=%d: expected >= 1", l->nranks);
    }
    if (l->per_node < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk layout: per_node=%d: expected >= 1", l->per_node);
    }
    return OMNIBATCH_SUCCESS;
}

/* The first rank of \p rank's node and how many ranks it holds. */
static void ob_chunk_node_of(const ob_chunk_layout *l, int rank, int *first, int *count)
{
    *first = rank / l->per_node * l->per_node;
    *count = l->nranks - *first < l->per_node ? l->nranks - *first : l->per_node;
}

int ob_chunk_node_peers(const ob_chunk_layout *l, int rank)
{
    int first;
    int count;

    if (rank < 0 || rank >= l->nranks) {
        return 0;
    }
    ob_chunk_node_of(l, rank, &first, &count);
    return count - 1;
}

static uint64_t ob_chunk_gcd(uint64_t a, uint64_t b)
{
    while (0 != b) {
        const uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Position j of a permutation of [0, m) fixed by (seed, rank): j -> a j + c
 * mod m, with a coprime to m so every position comes once. */
static uint64_t ob_chunk_affine(uint64_t seed, int rank, uint64_t m, uint64_t j)
{
    uint64_t x = seed ^ ((uint64_t) rank * UINT64_C(0x9e3779b97f4a7c15));
    uint64_t a = 1;
    const uint64_t c = ob_rng_splitmix64(&x) % m;

    if (m > 2) {
        a = 1 + ob_rng_splitmix64(&x) % (m - 1);
        while (1 != ob_chunk_gcd(a, m)) {
            a = a % (m - 1) + 1;
        }
    }
    /* a, j < m <= 2^31: the product fits. */
    return (a * j + c) % m;
}

int ob_chunk_victim(const ob_chunk_layout *l, int rank, long k)
{
    int first;
    int count;

    if (rank < 0 || rank >= l->nranks || k < 0 || k >= (long) l->nranks - 1) {
        return -1;
    }
    ob_chunk_node_of(l, rank, &first, &count);
    if (k < count - 1) {
        return first + (int) ((rank - first + 1 + k) % count);
    }
    /* The other nodes' ranks as [0, m): those below the node, then those above. */
    const uint64_t m = (uint64_t) l->nranks - (uint64_t) count;
    const uint64_t idx = ob_chunk_affine(l->seed, rank, m, (uint64_t) (k - (count - 1)));
    return idx < (uint64_t) first ? (int) idx : (int) idx + count;
}
