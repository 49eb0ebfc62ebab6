/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The chunked step's policy: a range's chunks sum to it exactly, shrink,
 * keep the granularity and the floor, also while thieves take its tail; the
 * level is the least time that holds a group's samples, every rank's quota
 * its share of them; a thief's share is never more than the excess nor its
 * quota, granularity and floor kept; every other rank is asked exactly once,
 * the node's first.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_chunk.h"
#include "ob_error.h"

/* The tests' own random numbers (not the library's), fixed seed. */
static uint64_t test_rng = 0x9e3779b97f4a7c15ULL;

static uint64_t test_next(void)
{
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 7;
    test_rng ^= test_rng << 17;
    return test_rng;
}

static long test_below(long n)
{
    return (long) (test_next() % (uint64_t) n);
}

/* A few policies: the default, coarse granularity, a high floor, no fraction. */
static const ob_chunk_policy policies[] = {
    { OB_CHUNK_DEFAULT_FLOOR, 1, OB_CHUNK_DEFAULT_DIVISOR },
    { 8, 8, 4 },
    { 16, 8, 2 },
    { 5, 1, 7 },
    { 1, 1, 1 },
    { 24, 8, 1000 },
};
#define NPOLICIES ((int) (sizeof policies / sizeof policies[0]))

/* ---- the policy's check --------------------------------------------------- */

START_TEST(test_policy_check_names_the_field)
{
    for (int k = 0; k < NPOLICIES; k++) {
        ck_assert_int_eq(ob_chunk_policy_check(&policies[k]), OMNIBATCH_SUCCESS);
    }
    ob_chunk_policy p = { 1, 0, 4 };
    ck_assert_int_eq(ob_chunk_policy_check(&p), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "chunk granularity=0: expected >= 1");
    p = (ob_chunk_policy) { 12, 8, 4 };
    ck_assert_int_eq(ob_chunk_policy_check(&p), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "chunk floor=12: expected a multiple of the granularity 8, at least one");
    p = (ob_chunk_policy) { 0, 1, 4 };
    ck_assert_int_eq(ob_chunk_policy_check(&p), OMNIBATCH_ERR_ARG);
    p = (ob_chunk_policy) { 1, 1, 0 };
    ck_assert_int_eq(ob_chunk_policy_check(&p), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "chunk divisor=0: expected >= 1");
    ck_assert_int_eq(ob_chunk_policy_check(NULL), OMNIBATCH_ERR_ARG);
}
END_TEST

/* ---- chunks from the front ------------------------------------------------ */

/* One chunk of \p c from \p left under \p p obeys every bound. */
static void assert_chunk_bounds(const ob_chunk_policy *p, long left, long c)
{
    const long want = left / p->divisor + (0 != left % p->divisor ? 1 : 0);
    ck_assert_int_ge(c, 1);
    ck_assert_int_le(c, left);
    /* at least the floor and the fraction, unless it is all that is left */
    if (c < left) {
        ck_assert_int_ge(c, p->floor);
        ck_assert_int_ge(c, want);
        ck_assert_int_eq(c % p->granularity, 0);
        /* and no more than the fraction rounded up to the granularity, or the floor */
        ck_assert_int_le(c, want + p->granularity - 1 > p->floor ? want + p->granularity - 1 : p->floor);
    }
}

/* A chunk by time obeys the floor, the granularity and the range. */
static void assert_chunk_bounds_floor(const ob_chunk_policy *p, long left, long c)
{
    ck_assert_int_ge(c, 1);
    ck_assert_int_le(c, left);
    if (c < left) {
        ck_assert_int_ge(c, p->floor);
        ck_assert_int_eq(c % p->granularity, 0);
    }
}

START_TEST(test_chunks_sum_to_the_range_and_shrink)
{
    for (int k = 0; k < NPOLICIES; k++) {
        const ob_chunk_policy *p = &policies[k];
        for (long range = 1; range <= 3000; range += 1 + range / 16) {
            long left = range;
            long sum = 0;
            long last = range + 1;
            long n = 0;
            while (left > 0) {
                const long c = ob_chunk_next(p, left);
                assert_chunk_bounds(p, left, c);
                ck_assert_int_le(c, last);          /* never grows */
                last = c;
                sum += c;
                left -= c;
                n++;
            }
            ck_assert_int_eq(sum, range);
            ck_assert_int_eq(left, 0);
            /* the granularity holds for all but the last, and for the last too when the range has it */
            if (0 == range % p->granularity) {
                ck_assert_int_eq(last % p->granularity, 0);
            }
            ck_assert_int_le(n, range);
        }
    }
    ck_assert_int_eq(ob_chunk_next(&policies[0], 0), 0);
    ck_assert_int_eq(ob_chunk_next(&policies[0], -5), 0);
}
END_TEST

START_TEST(test_guided_sizes_by_hand)
{
    /* 64 samples, a quarter of what is left, floor 1: 16 12 9 7 5 4 3 2 2 1 1 1 1 */
    const long want[] = { 16, 12, 9, 7, 5, 4, 3, 2, 2, 1, 1, 1, 1 };
    long left = 64;
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const long c = ob_chunk_next(&policies[0], left);
        ck_assert_int_eq(c, want[k]);
        left -= c;
    }
    ck_assert_int_eq(left, 0);
    /* granularity 8, floor 16, half: 64 -> 32, 32 -> 16, 16 -> 16 */
    ck_assert_int_eq(ob_chunk_next(&policies[2], 64), 32);
    ck_assert_int_eq(ob_chunk_next(&policies[2], 32), 16);
    ck_assert_int_eq(ob_chunk_next(&policies[2], 16), 16);
    ck_assert_int_eq(ob_chunk_next(&policies[2], 10), 10);   /* the last piece, below the floor */
    /* a fraction below the granularity is rounded up to it: 9 / 4 -> 3 -> 8 */
    ck_assert_int_eq(ob_chunk_next(&policies[1], 9), 8);
}
END_TEST

START_TEST(test_chunks_shrink_while_thieves_take_the_tail)
{
    for (int rep = 0; rep < 2000; rep++) {
        const ob_chunk_policy *p = &policies[test_below(NPOLICIES)];
        const long range = p->granularity * (1 + test_below(400));
        long next = 0;
        long end = range;
        long owner = 0;
        long stolen = 0;
        long last = range + 1;
        while (next < end) {
            if (0 == test_below(3)) {
                /* a thief lowers the end by a multiple of the granularity it may take */
                const long s = p->granularity * (1 + test_below((end - next) / p->granularity));
                end -= s;
                stolen += s;
                continue;
            }
            const long c = ob_chunk_next(p, end - next);
            assert_chunk_bounds(p, end - next, c);
            ck_assert_int_le(c, last);
            ck_assert_int_eq(c % p->granularity, 0);   /* the range and every theft keep it */
            last = c;
            next += c;
            owner += c;
        }
        ck_assert_int_eq(owner + stolen, range);
    }
}
END_TEST

START_TEST(test_chunks_by_time_cut_a_late_rank_smaller)
{
    const ob_chunk_policy *p = &policies[0];
    /* on time (64 samples of 1 ms, 64 ms to go): as ob_chunk_next */
    ck_assert_int_eq(ob_chunk_next_until(p, 64, 1000000, 64000000), 16);
    ck_assert_int_eq(ob_chunk_next_until(p, 64, 1000000, 1000000000), 16);
    /* behind: 20 ms to go, so a quarter of 20 samples */
    ck_assert_int_eq(ob_chunk_next_until(p, 64, 1000000, 20000000), 5);
    /* past the end, or nothing to go: the floor */
    ck_assert_int_eq(ob_chunk_next_until(p, 64, 1000000, 0), 1);
    ck_assert_int_eq(ob_chunk_next_until(p, 64, 1000000, -5), 1);
    ck_assert_int_eq(ob_chunk_next_until(&policies[2], 64, 1000000, -5), 16);
    ck_assert_int_eq(ob_chunk_next_until(p, 0, 1000000, 5), 0);
    ck_assert_int_eq(ob_chunk_next_until(p, 3, 0, 100), 1);   /* a rate below 1 ns is 1 ns */
    /* never above the plain guided size; never grows as the range and the time shrink */
    for (int rep = 0; rep < 2000; rep++) {
        const ob_chunk_policy *q = &policies[test_below(NPOLICIES)];
        long left = 1 + test_below(500);
        int64_t until = (int64_t) test_below(300000000) - 10000000;
        const int64_t own = 1 + test_below(5000000);
        long last = left + 1;
        while (left > 0) {
            const long c = ob_chunk_next_until(q, left, own, until);
            ck_assert_int_le(c, ob_chunk_next(q, left));
            assert_chunk_bounds_floor(q, left, c);
            ck_assert_int_le(c, last);
            last = c;
            left -= c;
            until -= (int64_t) c * own;
        }
    }
}
END_TEST

/* ---- the level and a thief's share --------------------------------------- */

/* The least T with sum_j max(0, floor((T - a_j) / r_j)) >= R, by trying every sample's end. */
static int64_t brute_level(int n, const int64_t *a, const int64_t *r, long R)
{
    int64_t best = INT64_MAX;
    for (int j = 0; j < n; j++) {
        for (long k = 1; k <= R; k++) {
            const int64_t T = a[j] + k * r[j];
            long sum = 0;
            for (int q = 0; q < n; q++) {
                sum += T > a[q] ? (long) ((T - a[q]) / r[q]) : 0;
            }
            if (sum >= R && T < best) {
                best = T;
            }
        }
    }
    return best;
}

START_TEST(test_level_is_the_least_time_that_holds_the_samples)
{
    enum { N = 9 };
    int64_t a[N];
    int64_t r[N];
    long quota[N];
    for (int rep = 0; rep < 3000; rep++) {
        const int n = 1 + (int) test_below(N);
        const long R = 1 + test_below(60);
        for (int j = 0; j < n; j++) {
            a[j] = 0 == test_below(3) ? 0 : test_below(20000000);
            r[j] = 1 + test_below(0 == test_below(4) ? 20 : 5000000);
        }
        int64_t T = -1;
        ck_assert_int_eq(ob_chunk_level(n, a, r, R, &T, quota), OMNIBATCH_SUCCESS);
        ck_assert_int_eq(T, brute_level(n, a, r, R));
        long sum = 0;
        long ties = 0;
        for (int j = 0; j < n; j++) {
            ck_assert_int_ge(quota[j], 0);
            ck_assert_int_eq(quota[j], T > a[j] ? (long) ((T - a[j]) / r[j]) : 0);
            sum += quota[j];
            ties += quota[j] > 0 && 0 == (T - a[j]) % r[j];
        }
        /* the samples, and more only by samples that end exactly at T */
        ck_assert_int_ge(sum, R);
        ck_assert_int_le(sum, R + (ties > 0 ? ties - 1 : 0));
    }
}
END_TEST

START_TEST(test_level_of_a_large_group)
{
    /* above the group size levelled on the stack */
    enum { N = 200 };
    static int64_t a[N];
    static int64_t r[N];
    static long quota[N];
    for (int rep = 0; rep < 5; rep++) {
        const long R = 1 + test_below(40);
        for (int j = 0; j < N; j++) {
            a[j] = test_below(20000000);
            r[j] = 1 + test_below(5000000);
        }
        int64_t T = -1;
        ck_assert_int_eq(ob_chunk_level(N, a, r, R, &T, quota), OMNIBATCH_SUCCESS);
        ck_assert_int_eq(T, brute_level(N, a, r, R));
        for (int j = 0; j < N; j++) {
            ck_assert_int_eq(quota[j], T > a[j] ? (long) ((T - a[j]) / r[j]) : 0);
        }
    }
}
END_TEST

START_TEST(test_level_by_hand)
{
    /* two ranks free now, 1 ms and 3 ms a sample, 8 samples: 6 and 2 by 6 ms */
    const int64_t a2[2] = { 0, 0 };
    const int64_t r2[2] = { 1000000, 3000000 };
    long q2[2];
    int64_t T;
    ck_assert_int_eq(ob_chunk_level(2, a2, r2, 8, &T, q2), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(T, 6000000);
    ck_assert_int_eq(q2[0], 6);
    ck_assert_int_eq(q2[1], 2);
    /* a rank busy past the level gets nothing: the slow one is free only at 10 ms */
    const int64_t a3[2] = { 0, 10000000 };
    ck_assert_int_eq(ob_chunk_level(2, a3, r2, 8, &T, q2), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(T, 8000000);
    ck_assert_int_eq(q2[1], 0);
    /* nothing to do: level 0, quotas 0 */
    ck_assert_int_eq(ob_chunk_level(2, a3, r2, 0, &T, q2), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(T, 0);
    ck_assert_int_eq(q2[0] + q2[1], 0);
    /* bad arguments, named */
    const int64_t bad_r[2] = { 1000000, 0 };
    ck_assert_int_eq(ob_chunk_level(2, a2, bad_r, 8, &T, q2), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "rank 1"));
    const int64_t bad_a[2] = { -1, 0 };
    ck_assert_int_eq(ob_chunk_level(2, bad_a, r2, 8, &T, q2), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_chunk_level(0, a2, r2, 8, &T, q2), OMNIBATCH_ERR_ARG);
    ck_assert_int_eq(ob_chunk_level(2, a2, r2, 1L << 24, &T, q2), OMNIBATCH_ERR_ARG);
}
END_TEST

START_TEST(test_share_by_hand)
{
    const ob_chunk_policy one = { 1, 1, 4 };
    const ob_chunk_policy eight = { 8, 8, 4 };
    /* the excess, capped by the thief's quota */
    ck_assert_int_eq(ob_chunk_share(&one, 20, 7, 10), 7);
    ck_assert_int_eq(ob_chunk_share(&one, 20, 7, 3), 3);
    /* granularity 8: rounded down, and the victim keeps a multiple of 8 */
    ck_assert_int_eq(ob_chunk_share(&eight, 64, 30, 100), 24);
    ck_assert_int_eq(ob_chunk_share(&eight, 64, 30, 12), 8);
    /* below the floor: nothing, unless it is the whole short tail */
    ck_assert_int_eq(ob_chunk_share(&eight, 64, 7, 100), 0);
    ck_assert_int_eq(ob_chunk_share(&eight, 5, 5, 100), 5);
    ck_assert_int_eq(ob_chunk_share(&eight, 5, 5, 4), 0);
    /* nothing to take, or no quota */
    ck_assert_int_eq(ob_chunk_share(&one, 0, 0, 5), 0);
    ck_assert_int_eq(ob_chunk_share(&one, 9, 0, 5), 0);
    ck_assert_int_eq(ob_chunk_share(&one, 9, 4, 0), 0);
    for (int rep = 0; rep < 20000; rep++) {
        const ob_chunk_policy *p = &policies[test_below(NPOLICIES)];
        const long tail = test_below(300);
        const long excess = tail > 0 ? test_below(tail + 1) : 0;
        const long quota = test_below(300);
        const long sh = ob_chunk_share(p, tail, excess, quota);
        ck_assert_int_ge(sh, 0);
        ck_assert_int_le(sh, excess);
        ck_assert_int_le(sh, quota);
        ck_assert(0 == sh || (sh >= p->floor && 0 == sh % p->granularity) || (sh == tail && tail < p->floor));
    }
}
END_TEST

/* ---- whom to ask ---------------------------------------------------------- */

START_TEST(test_victims_cover_every_other_rank_once_node_first)
{
    const int shapes[][2] = { { 1, 1 }, { 2, 1 }, { 7, 3 }, { 8, 8 }, { 8, 32 }, { 64, 8 }, { 100, 32 },
                              { 257, 32 }, { 33, 1 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const ob_chunk_layout l = { shapes[s][0], shapes[s][1], 42 };
        const int P = l.nranks;
        int *seen = calloc((size_t) P, sizeof *seen);
        ck_assert_int_eq(ob_chunk_layout_check(&l), OMNIBATCH_SUCCESS);
        for (int r = 0; r < P; r++) {
            const int node = r / l.per_node;
            const int peers = ob_chunk_node_peers(&l, r);
            memset(seen, 0, (size_t) P * sizeof *seen);
            for (long k = 0; k < P - 1; k++) {
                const int v = ob_chunk_victim(&l, r, k);
                ck_assert_int_ge(v, 0);
                ck_assert_int_lt(v, P);
                ck_assert_int_ne(v, r);
                ck_assert_int_eq(seen[v], 0);
                seen[v] = 1;
                /* the node's ranks first, from the next one up; then only other nodes */
                ck_assert_int_eq(v / l.per_node == node, k < peers);
                if (k < peers) {
                    ck_assert_int_eq(v, node * l.per_node + (r - node * l.per_node + 1 + (int) k) % (peers + 1));
                }
            }
            ck_assert_int_eq(ob_chunk_victim(&l, r, P - 1), -1);
            ck_assert_int_eq(ob_chunk_victim(&l, r, -1), -1);
        }
        ck_assert_int_eq(ob_chunk_victim(&l, P, 0), -1);
        free(seen);
    }
}
END_TEST

START_TEST(test_helper_groups_differ_and_are_reproducible)
{
    const ob_chunk_layout l = { 4096, 32, 7 };
    const ob_chunk_layout other_seed = { 4096, 32, 8 };
    const int peers = ob_chunk_node_peers(&l, 0);
    int same_first = 0;
    int same_seed = 0;
    ck_assert_int_eq(peers, 31);
    for (int r = 0; r < 64; r++) {
        /* the same arguments, the same order */
        ck_assert_int_eq(ob_chunk_victim(&l, r, peers), ob_chunk_victim(&l, r, peers));
        same_first += ob_chunk_victim(&l, r, peers) == ob_chunk_victim(&l, (r + 1) % 64, peers);
        same_seed += ob_chunk_victim(&l, r, peers) == ob_chunk_victim(&other_seed, r, peers);
        /* the first four helpers are in four other nodes */
        int nodes[4];
        for (int h = 0; h < 4; h++) {
            nodes[h] = ob_chunk_victim(&l, r, peers + h) / 32;
            ck_assert_int_ne(nodes[h], r / 32);
        }
        ck_assert(nodes[0] != nodes[1] || nodes[1] != nodes[2] || nodes[2] != nodes[3]);
    }
    /* neighbours and seeds give other helper groups (a coincidence now and then) */
    ck_assert_int_lt(same_first, 4);
    ck_assert_int_lt(same_seed, 4);
}
END_TEST

START_TEST(test_layout_check_names_the_field)
{
    ob_chunk_layout l = { 0, 8, 1 };
    ck_assert_int_eq(ob_chunk_layout_check(&l), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "chunk layout: nranks=0: expected >= 1");
    l = (ob_chunk_layout) { 8, 0, 1 };
    ck_assert_int_eq(ob_chunk_layout_check(&l), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "chunk layout: per_node=0: expected >= 1");
    ck_assert_int_eq(ob_chunk_layout_check(NULL), OMNIBATCH_ERR_ARG);
    l = (ob_chunk_layout) { 10, 4, 1 };
    ck_assert_int_eq(ob_chunk_node_peers(&l, 0), 3);
    ck_assert_int_eq(ob_chunk_node_peers(&l, 9), 1);    /* the last node holds 8 and 9 */
    ck_assert_int_eq(ob_chunk_node_peers(&l, 10), 0);
}
END_TEST

/* ---- the cost of a chunk ----------------------------------------------------- */

/* Chunks of every size from 1 to 16 that took exactly a + b n: the fit
 * finds a and b, and the floor is the least size whose fixed part is at
 * most the share of its time, in granules, at most the limit. */
START_TEST(test_cost_fit_finds_the_fixed_part)
{
    ob_chunk_cost c = { 0 };
    double a, b;

    for (long n = 1; n <= 16; n++) {
        ob_chunk_cost_add(&c, n, 0.002 + 0.0001 * (double) n);
    }
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 1);
    ck_assert_double_eq_tol(a, 0.002, 1e-12);
    ck_assert_double_eq_tol(b, 0.0001, 1e-14);
    /* a <= 1/2 (a + b n): n >= a / b = 20. */
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.5, 1, 1000), 20);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.5, 8, 1000), 24);
    /* a <= 1/5 of it: n >= 4 a / b = 80; at most the limit. */
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.2, 1, 1000), 80);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.2, 1, 64), 64);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.2, 8, 3), 8);
}
END_TEST

/* What determines no fit: nothing, one size, time that falls with size,
 * bad samples; no fixed part: the floor is one granule. */
START_TEST(test_cost_fit_undetermined)
{
    ob_chunk_cost c = { 0 };
    double a = 1.0, b = 1.0;

    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 0);
    ck_assert(0.0 == a && 0.0 == b);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.5, 4, 100), 4);
    for (int i = 0; i < 5; i++) {
        ob_chunk_cost_add(&c, 8, 0.001 * (double) (i + 1));
    }
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 0);
    memset(&c, 0, sizeof c);
    for (long n = 1; n <= 8; n++) {
        ob_chunk_cost_add(&c, n, 0.01 - 0.001 * (double) n);
    }
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 0);
    /* Ignored: no samples, a negative or NaN time. */
    memset(&c, 0, sizeof c);
    ob_chunk_cost_add(&c, 0, 1.0);
    ob_chunk_cost_add(&c, 4, -1.0);
    ob_chunk_cost_add(&c, 4, 0.0 / 0.0);
    ck_assert(0.0 == c.w);
    /* Time in proportion to size, a little below it at n = 0: no fixed
     * part, the slope through the origin. */
    for (long n = 1; n <= 8; n++) {
        ob_chunk_cost_add(&c, n, 0.001 * (double) n - (1 == n ? 0.0005 : 0.0));
    }
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 1);
    ck_assert(0.0 == a);
    ck_assert(b > 0.0);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.5, 2, 100), 2);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, 0.0, 2, 100), 2);
}
END_TEST

/* Slowed down: with no fixed part, the rates compared; with one, a small
 * chunk that paid it whole is not slower, one at a twentieth of its speed is. */
START_TEST(test_slower_counts_the_fixed_part)
{
    /* 12 samples in 3 chunks took 12 ms: 1 ms a sample. */
    ck_assert_int_eq(ob_chunk_slower(1, 0.0019, 12, 3, 0.012, 0.0, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(1, 0.0021, 12, 3, 0.012, 0.0, 0.0, 2.0), 1);
    /* Of those 12 ms, 3 x 2 ms fixed: 0.5 ms a sample; a chunk of 1 sample
     * then takes 2.5 ms, and is slower than its pace past 5 ms. */
    ck_assert_int_eq(ob_chunk_slower(1, 0.0026, 12, 3, 0.012, 0.002, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(1, 0.0049, 12, 3, 0.012, 0.002, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(1, 0.0051, 12, 3, 0.012, 0.002, 0.0, 2.0), 1);
    ck_assert_int_eq(ob_chunk_slower(4, 0.020 * 4.0 * 0.5 + 0.040, 12, 3, 0.012, 0.002, 0.0, 2.0), 1);
    /* Nothing to judge by. */
    ck_assert_int_eq(ob_chunk_slower(1, 1.0, 0, 0, 0.0, 0.0, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(0, 1.0, 12, 3, 0.012, 0.0, 0.0, 2.0), 0);
    /* Fixed parts larger than all the time before: judged by them alone. */
    ck_assert_int_eq(ob_chunk_slower(1, 0.0059, 12, 3, 0.012, 0.003, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(1, 0.0061, 12, 3, 0.012, 0.005, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(1, 0.0101, 12, 3, 0.012, 0.005, 0.0, 2.0), 1);
}
END_TEST

/* The same pace judged the other way (ob_chunk_faster()): 12 samples in 3
 * chunks took 12 ms, 3 x 2 ms of it fixed (0.5 ms a sample): a chunk of 4
 * expects 4 ms, and ran faster than that pace below 2 ms; a chunk of 1
 * expects 2.5 ms, below 1.25 ms.  A rank back to its speed from a quarter
 * of it (a and b both 4x less) is faster; a small chunk at the same pace
 * is not. */
START_TEST(test_faster_counts_the_fixed_part)
{
    ck_assert_int_eq(ob_chunk_faster(4, 0.0021, 12, 3, 0.012, 0.002, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_faster(4, 0.0019, 12, 3, 0.012, 0.002, 0.0, 2.0), 1);
    ck_assert_int_eq(ob_chunk_faster(1, 0.0026, 12, 3, 0.012, 0.002, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_faster(1, 0.0013, 12, 3, 0.012, 0.002, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_faster(1, 0.0012, 12, 3, 0.012, 0.002, 0.0, 2.0), 1);
    ck_assert_int_eq(ob_chunk_faster(4, (0.002 + 4.0 * 0.0005) / 4.0, 12, 3, 0.012, 0.002, 0.0, 2.0), 1);
    /* Nothing to judge by. */
    ck_assert_int_eq(ob_chunk_faster(1, 0.0001, 0, 0, 0.0, 0.0, 0.0, 2.0), 0);
    ck_assert_int_eq(ob_chunk_faster(1, 0.0, 12, 3, 0.012, 0.0, 0.0, 2.0), 0);
}
END_TEST

/* A rank slowed 20x before its step began: its fit (1.5 ms a chunk, 0.9 ms
 * a sample) is of the old speed, and a chunk of 16 took 0.29 s.  Its chunk
 * of 1 after it, 20 x (1.5 + 0.9) ms = 48 ms, is no slow-down, as a chunk of
 * 16 at that pace is none; its chunk of 1 at 40x the old pace is one.  The
 * same chunk of 1 after chunks at the fit's pace is one, as it was. */
START_TEST(test_slower_scales_the_fixed_part_of_a_slow_step)
{
    const double a = 0.0015, b = 0.0009;

    ck_assert_int_eq(ob_chunk_slower(1, 0.0485, 16, 1, 0.289, a, b, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(16, 0.289 + 0.030, 16, 1, 0.289, a, b, 2.0), 0);
    ck_assert_int_eq(ob_chunk_slower(1, 40.0 * (a + b) * 1.1, 16, 1, 0.289, a, b, 2.0), 1);
    /* Without the fit's pace, the fixed part is the old speed's. */
    ck_assert_int_eq(ob_chunk_slower(1, 0.0485, 16, 1, 0.289, a, 0.0, 2.0), 1);
    /* At the fit's pace before (16 samples in 15.9 ms), 48 ms is 20x. */
    ck_assert_int_eq(ob_chunk_slower(1, 0.0485, 16, 1, a + 16.0 * b, a, b, 2.0), 1);
    ck_assert_int_eq(ob_chunk_slower(1, 2.0 * (a + b) * 0.9, 16, 1, a + 16.0 * b, a, b, 2.0), 0);
}
END_TEST

/* Chunks that cost 3.9 ms beside 2.3 ms a sample (1.7 samples' worth, as
 * hetsgd's under jitter): a slow step's chunks of 8, 7 and 6, then a step
 * 1.8x as fast in chunks of 16.  Fitted together, the sizes differing
 * between the steps more than within them, the speed reads as a fixed part
 * of 55 samples' worth and a floor of the whole plan of 256 (164 where a
 * chunk's fixed part could be a quarter of it: under jitter a rank worked
 * its whole range in one or two chunks, once a 5.1x step).  Each step's
 * own fit keeps the worth (a floor of 16: 1.7 samples' worth at most a
 * tenth of a chunk), and the second step (one size, no fit of its own)
 * gives the cost at its speed. */
START_TEST(test_worth_is_each_step_s_own)
{
    const double fa = 0.0039, fb = 0.0023, fast = 1.8;
    ob_chunk_worth m = { 0 };
    ob_chunk_cost one = { 0 }, two = { 0 }, both = { 0 };
    double a, b;

    for (long n = 8; n >= 6; n--) {
        ob_chunk_cost_add(&one, n, fa + fb * (double) n);
    }
    for (int i = 0; i < 3; i++) {
        ob_chunk_cost_add(&two, 16, (fa + fb * 16.0) / fast);
    }
    ck_assert_int_eq(ob_chunk_worth_step(&m, &one, 0.75, &a, &b), 1);
    ck_assert_double_eq_tol(a, fa, 1e-12);
    ck_assert_double_eq_tol(b, fb, 1e-12);
    ck_assert_int_eq(ob_chunk_worth_step(&m, &two, 0.75, &a, &b), 1);
    ck_assert_double_eq_tol(a / b, fa / fb, 1e-9);
    ck_assert_double_eq_tol(b, fb / fast, 1e-12);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, OB_CHUNK_COST_SHARE, 1, 256), 16);
    /* The two steps in one fit. */
    for (long n = 8; n >= 6; n--) {
        ob_chunk_cost_add(&both, n, fa + fb * (double) n);
    }
    for (int i = 0; i < 3; i++) {
        ob_chunk_cost_add(&both, 16, (fa + fb * 16.0) / fast);
    }
    ck_assert_int_eq(ob_chunk_cost_fit(&both, &a, &b), 1);
    ck_assert_int_eq(ob_chunk_cost_floor(a, b, OB_CHUNK_COST_SHARE, 1, 256), 256);
}
END_TEST

/* A delay only lengthens a chunk: fifteen chunks of 16 and two of 8 at
 * 1.5 ms + 1 ms a sample, one of the 8s 4 ms late (a busy loop's turn on
 * a crowded core, as seen under MPICH).  Fitted as they came, the fixed
 * part read 7.3 samples' worth and a floor five times the true one; each
 * size's least time fits 1.5.  The slope and the step's cost still count
 * every chunk's time. */
START_TEST(test_a_late_chunk_is_no_fixed_cost)
{
    const double fa = 0.0015, fb = 0.001;
    ob_chunk_worth m = { 0 };
    ob_chunk_cost c = { 0 };
    double a, b;

    for (int i = 0; i < 15; i++) {
        ob_chunk_cost_add(&c, 16, fa + fb * 16.0);
    }
    ob_chunk_cost_add(&c, 8, fa + fb * 8.0);
    ob_chunk_cost_add(&c, 8, fa + fb * 8.0 + 0.004);
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 1);
    ck_assert_msg(a / b < 1.6, "a late chunk read as a fixed part of %.3g samples' worth, not 1.5", a / b);
    ck_assert_double_eq_tol(b, fb, 1e-12);
    ck_assert_int_eq(ob_chunk_worth_step(&m, &c, 0.75, &a, &b), 1);
    ck_assert_double_eq_tol(a / b, fa / fb, 1e-9);
    /* The step's 17 chunks of 256 samples took c.t: b = T / (17 r + 256). */
    ck_assert_double_eq_tol(b, c.t / (17.0 * 1.5 + 256.0), 1e-12);
    ck_assert_int_le(ob_chunk_cost_floor(a, b, 0.1, 1, 256), 14);
    /* More sizes than are kept: the fit is of the first ones; every
     * chunk's time still counts in the sums. */
    memset(&c, 0, sizeof c);
    for (long n = 1; n <= OB_CHUNK_COST_SIZES + 8; n++) {
        ob_chunk_cost_add(&c, n, n > OB_CHUNK_COST_SIZES ? 1.0 : fa + fb * (double) n);
    }
    ck_assert_int_eq(c.sizes, OB_CHUNK_COST_SIZES);
    ck_assert(OB_CHUNK_COST_SIZES + 8.0 == c.w);
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 1);
    ck_assert_double_eq_tol(a, fa, 1e-12);
}
END_TEST

/* The floor's worth: before three steps that determined one, their mean at
 * a quarter; then the median of the latest three at a tenth.  A step that
 * reads otherwise (a chunk of 1 sample 2 ms late among chunks of 16 at 1 ms
 * a sample: 1.5 samples' worth read as 4.2) moves the median nothing; in
 * the decayed mean at a tenth it set the floor to 24, 21, 18 and 17 of a
 * plan of 256 in the next four steps, not 14 (a rank slowed 20x works
 * that as its first chunk). */
START_TEST(test_the_floor_s_worth_is_a_median)
{
    const double fa = 0.0015, fb = 0.001;
    ob_chunk_worth m = { 0 };
    double a, b, share = 0.0;

    ck_assert(0.0 == ob_chunk_worth_floor(&m, &share));
    ck_assert(OB_CHUNK_COST_SHARE_UNSURE == share);
    for (int step = 0; step < 7; step++) {
        ob_chunk_cost c = { 0 };
        double r, mean;
        long floor, by_mean;

        for (int i = 0; i < 15; i++) {
            ob_chunk_cost_add(&c, 16, fa + fb * 16.0);
        }
        ob_chunk_cost_add(&c, 15, fa + fb * 15.0);
        ob_chunk_cost_add(&c, 1, fa + fb + (2 == step ? 0.002 : 0.0));
        ck_assert_int_eq(ob_chunk_worth_step(&m, &c, 0.75, &a, &b), 1);
        r = ob_chunk_worth_floor(&m, &share);
        mean = m.sum / m.w;
        floor = ob_chunk_cost_floor(r * b, b, share, 1, 256);
        by_mean = ob_chunk_cost_floor(mean * b, b, OB_CHUNK_COST_SHARE, 1, 256);
        if (step < 2) {
            ck_assert(OB_CHUNK_COST_SHARE_UNSURE == share);
            ck_assert_double_eq_tol(r, fa / fb, 1e-9);
            ck_assert_int_eq(floor, 5);
        } else {
            ck_assert(OB_CHUNK_COST_SHARE == share);
            ck_assert_double_eq_tol(r, fa / fb, 1e-9);
            ck_assert_int_eq(floor, 14);
            if (step < 6) {
                ck_assert_msg(by_mean >= 17, "step %d: the mean's floor %ld", step, by_mean);
            }
        }
    }
}
END_TEST

/* A step's first chunk, charged none of a chunk's fixed part (hetsgd's
 * emulation: the step pays it once), is 1.5 ms quicker than its fourteen
 * followers of 69 samples; taken as the least of its size beside one chunk
 * of 60 it made a fixed part of 15 samples' worth, not 1.5.  Its time stands
 * for its size only until a later chunk of that size comes; alone of its
 * size it still counts. */
START_TEST(test_a_first_chunk_stands_alone)
{
    const double fa = 0.0015, fb = 0.001;
    ob_chunk_cost c = { 0 }, alone = { 0 };
    double a, b;

    ob_chunk_cost_add_first(&c, 69, fb * 69.0);
    for (int i = 0; i < 14; i++) {
        ob_chunk_cost_add(&c, 69, fa + fb * 69.0);
    }
    ob_chunk_cost_add(&c, 60, fa + fb * 60.0);
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 1);
    ck_assert_msg(fabs(a / b - fa / fb) < 1e-6, "a fixed part of %.3g samples' worth, not %.3g", a / b, fa / fb);
    ck_assert(16.0 == c.w);
    /* A slower first chunk (caches cold) is outrun by its followers as before. */
    memset(&c, 0, sizeof c);
    ob_chunk_cost_add_first(&c, 64, 0.01 + fa + fb * 64.0);
    ob_chunk_cost_add(&c, 64, fa + fb * 64.0);
    ob_chunk_cost_add(&c, 32, fa + fb * 32.0);
    ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 1);
    ck_assert_double_eq_tol(a, fa, 1e-12);
    /* Alone of its size, its time is the size's. */
    ob_chunk_cost_add_first(&alone, 64, fa + fb * 64.0);
    ob_chunk_cost_add(&alone, 32, fa + fb * 32.0);
    ck_assert_int_eq(ob_chunk_cost_fit(&alone, &a, &b), 1);
    ck_assert_double_eq_tol(a, fa, 1e-12);
}
END_TEST

/* Two steps of chunks of two sizes close together (fourteen of 69 and one
 * of 60, that one 1.2 ms late: a late wake-up), read 12 samples' worth where
 * the three steps before them, sixteenths of the plan and two halves of the
 * floor, read 1.5; the median of the latest three then took the misreading
 * and the floor rose 8x.  Such steps (weight under OB_CHUNK_WORTH_WEIGHT)
 * count in the weighted mean alone, and the floor's worth stays 1.5. */
START_TEST(test_a_poorly_determined_step_is_no_median)
{
    const double fa = 0.0015, fb = 0.001;
    ob_chunk_worth m = { 0 };
    double a, b, share;

    for (int step = 0; step < OB_CHUNK_WORTH_STEPS; step++) {
        ob_chunk_cost c = { 0 };

        for (int i = 0; i < 15; i++) {
            ob_chunk_cost_add(&c, 64, fa + fb * 64.0);
        }
        ob_chunk_cost_add(&c, 32, fa + fb * 32.0);
        ob_chunk_cost_add(&c, 32, fa + fb * 32.0);
        ck_assert_int_eq(ob_chunk_worth_step(&m, &c, 0.75, &a, &b), 1);
    }
    ck_assert_double_eq_tol(ob_chunk_worth_floor(&m, &share), fa / fb, 1e-9);
    for (int step = 0; step < 2; step++) {
        ob_chunk_cost c = { 0 };

        for (int i = 0; i < 14; i++) {
            ob_chunk_cost_add(&c, 69, fa + fb * 69.0);
        }
        ob_chunk_cost_add(&c, 60, fa + fb * 60.0 + 0.0012);
        ck_assert_int_eq(ob_chunk_cost_fit(&c, &a, &b), 1);
        ck_assert_msg(a / b > 10.0, "the close sizes read %.3g samples' worth", a / b);
        ck_assert_int_eq(ob_chunk_worth_step(&m, &c, 0.75, &a, &b), 1);
    }
    ck_assert_double_eq_tol(ob_chunk_worth_floor(&m, &share), fa / fb, 1e-9);
    ck_assert(OB_CHUNK_COST_SHARE == share);
}
END_TEST

/* A worth misread as 100 samples' worth (1.5 true) floors a range of 640
 * at all of it: one chunk a step, one size, no fit, and without a limit
 * the floor stays there for good (hetsgd's ramp at B = 4096: 87 steps).
 * After OB_CHUNK_WHOLE_STEPS such steps the floor is two fifths of the
 * range; its two sizes fit the true worth, and two steps later the floor
 * is the true one.  A range under four least floors keeps its one chunk. */
static long whole_step(ob_chunk_worth *m, int *whole, long range, long least, long first)
{
    const double fa = 0.0015, fb = 0.001;
    ob_chunk_cost c = { 0 };
    double a, b, share;

    for (long left = range, n = first; left > 0; left -= n, n = left) {
        ob_chunk_cost_add(&c, n, fa + fb * (double) n);
    }
    ck_assert_int_eq(ob_chunk_worth_step(m, &c, 0.75, &a, &b), 1);
    const double r = ob_chunk_worth_floor(m, &share);
    return ob_chunk_whole_floor(m, whole, ob_chunk_cost_floor(r * b, b, share, 1, range), range, least, 1);
}

START_TEST(test_a_whole_range_floor_is_read_again)
{
    ob_chunk_worth m = { 0 }, small;
    int whole = 0, small_whole = 0;
    long floor = 0;

    for (int i = 0; i < OB_CHUNK_WORTH_STEPS; i++) {
        ob_chunk_cost c = { 0 };
        double a, b;

        ob_chunk_cost_add(&c, 10, 0.001 * (100.0 + 10.0));
        ob_chunk_cost_add(&c, 20, 0.001 * (100.0 + 20.0));
        ck_assert_int_eq(ob_chunk_worth_step(&m, &c, 0.75, &a, &b), 1);
    }
    small = m;
    for (int step = 1; step <= OB_CHUNK_WHOLE_STEPS; step++) {
        floor = whole_step(&m, &whole, 640, 8, 640);
        ck_assert_msg(640 == floor, "step %d: floor %ld", step, floor);
        ck_assert_int_eq(whole, step);
    }
    floor = whole_step(&m, &whole, 640, 8, 640);
    ck_assert_int_eq(floor, 256);
    ck_assert_int_eq(whole, 0);
    /* Chunks of 256 and 384: a fit of the true worth, outvoted once. */
    ck_assert_int_eq(whole_step(&m, &whole, 640, 8, floor), 256);
    floor = whole_step(&m, &whole, 640, 8, 256);
    ck_assert_int_eq(floor, 14);
    ck_assert_int_eq(whole, 0);
    for (int step = 0; step < 3 * OB_CHUNK_WHOLE_STEPS; step++) {
        ck_assert_int_eq(whole_step(&small, &small_whole, 31, 8, 31), 31);
        ck_assert_int_eq(small_whole, 0);
    }
}
END_TEST

/* Steps weigh by how well their chunks determine the fixed part: many
 * sizes far apart more than two close ones; a step that determines none
 * (one size, nothing) adds nothing and, without a worth, gives none. */
START_TEST(test_worth_weighs_the_steps)
{
    ob_chunk_worth m = { 0 };
    ob_chunk_cost wide = { 0 }, close = { 0 }, none = { 0 };
    double a = 1.0, b = 1.0;

    for (int i = 0; i < 3; i++) {
        ob_chunk_cost_add(&none, 8, 0.010);
    }
    ck_assert_int_eq(ob_chunk_worth_step(&m, &none, 0.75, &a, &b), 0);
    ck_assert(0.0 == a && 0.0 == b && 0.0 == m.w);
    /* Worth 2 over sizes 1-16; worth 10 from sizes 15 and 16 alone. */
    for (long n = 1; n <= 16; n++) {
        ob_chunk_cost_add(&wide, n, 0.001 * (2.0 + (double) n));
    }
    ob_chunk_cost_add(&close, 15, 0.001 * 25.0);
    ob_chunk_cost_add(&close, 16, 0.001 * 26.0);
    ck_assert_int_eq(ob_chunk_worth_step(&m, &wide, 1.0, &a, &b), 1);
    ck_assert_double_eq_tol(a / b, 2.0, 1e-9);
    ck_assert_int_eq(ob_chunk_worth_step(&m, &close, 1.0, &a, &b), 1);
    ck_assert(a / b > 2.0 && a / b < 2.5);
    /* An empty step keeps the worth but gives no cost. */
    ck_assert_int_eq(ob_chunk_worth_step(&m, &none, 0.75, &a, &b), 1);
    memset(&none, 0, sizeof none);
    ck_assert_int_eq(ob_chunk_worth_step(&m, &none, 0.75, &a, &b), 0);
    ck_assert(m.w > 0.0);
}
END_TEST

static Suite *make_chunk_suite(void)
{
    Suite *s = suite_create("chunk");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_policy_check_names_the_field);
    tcase_add_test(tc, test_chunks_sum_to_the_range_and_shrink);
    tcase_add_test(tc, test_guided_sizes_by_hand);
    tcase_add_test(tc, test_chunks_shrink_while_thieves_take_the_tail);
    tcase_add_test(tc, test_chunks_by_time_cut_a_late_rank_smaller);
    tcase_add_test(tc, test_level_is_the_least_time_that_holds_the_samples);
    tcase_add_test(tc, test_level_of_a_large_group);
    tcase_add_test(tc, test_level_by_hand);
    tcase_add_test(tc, test_share_by_hand);
    tcase_add_test(tc, test_victims_cover_every_other_rank_once_node_first);
    tcase_add_test(tc, test_helper_groups_differ_and_are_reproducible);
    tcase_add_test(tc, test_layout_check_names_the_field);
    tcase_add_test(tc, test_cost_fit_finds_the_fixed_part);
    tcase_add_test(tc, test_cost_fit_undetermined);
    tcase_add_test(tc, test_slower_counts_the_fixed_part);
    tcase_add_test(tc, test_faster_counts_the_fixed_part);
    tcase_add_test(tc, test_slower_scales_the_fixed_part_of_a_slow_step);
    tcase_add_test(tc, test_worth_is_each_step_s_own);
    tcase_add_test(tc, test_worth_weighs_the_steps);
    tcase_add_test(tc, test_a_late_chunk_is_no_fixed_cost);
    tcase_add_test(tc, test_the_floor_s_worth_is_a_median);
    tcase_add_test(tc, test_a_whole_range_floor_is_read_again);
    tcase_add_test(tc, test_a_first_chunk_stands_alone);
    tcase_add_test(tc, test_a_poorly_determined_step_is_no_median);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_chunk_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}
