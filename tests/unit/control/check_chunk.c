/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The chunked step's policy: a range's chunks sum to it exactly, shrink,
 * keep the granularity and the floor, also while thieves take its tail; a
 * thief's share is the best one allowed, never more than is left, never
 * one that finishes later; every other rank is asked exactly once, the
 * node's first.
 */
#include "config.h"

#include <check.h>
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

/* ---- a thief's share ------------------------------------------------------ */

static int64_t both_done(const ob_chunk_view *v, long s)
{
    const int64_t victim = v->victim_busy_ns + (int64_t) (v->left - s) * v->victim_ns;
    const int64_t thief = v->thief_delay_ns + (int64_t) s * v->thief_ns;
    return victim > thief ? victim : thief;
}

/* Every share allowed, tried one by one: the best, smaller on a tie; 0 unless it beats none. */
static long brute_share(const ob_chunk_policy *p, const ob_chunk_view *v)
{
    long best = 0;
    for (long s = 1; s <= v->left; s++) {
        const int allowed = s == v->left || (s >= p->floor && 0 == s % p->granularity);
        if (allowed && both_done(v, s) < both_done(v, best)) {
            best = s;
        }
    }
    return best;
}

START_TEST(test_share_is_the_best_allowed)
{
    for (int rep = 0; rep < 20000; rep++) {
        const ob_chunk_policy *p = &policies[test_below(NPOLICIES)];
        ob_chunk_view v;
        v.left = test_below(300);
        v.victim_busy_ns = 0 == test_below(4) ? 0 : test_below(50000000);
        v.victim_ns = 1 + test_below(5000000);
        v.thief_delay_ns = test_below(4) ? test_below(100000) : test_below(100000000);
        v.thief_ns = 1 + test_below(5000000);
        long take = -1;
        ck_assert_int_eq(ob_chunk_steal(p, &v, &take), OMNIBATCH_SUCCESS);
        ck_assert_int_ge(take, 0);
        ck_assert_int_le(take, v.left);
        ck_assert_int_eq(take, brute_share(p, &v));
        if (take > 0) {
            /* it helps: both are done before the victim alone would be */
            ck_assert(both_done(&v, take) < both_done(&v, 0));
            ck_assert(take == v.left || (take >= p->floor && 0 == take % p->granularity));
        }
    }
}
END_TEST

START_TEST(test_share_by_hand)
{
    const ob_chunk_policy one = { 1, 1, 4 };
    const ob_chunk_policy eight = { 8, 8, 4 };
    long take = -1;
    /* equal speeds, the victim idle with 100 left, no delay: half each */
    ob_chunk_view v = { 100, 0, 1000, 0, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 50);
    /* a thief 3x faster takes three quarters */
    v = (ob_chunk_view) { 100, 0, 3000, 0, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 75);
    /* a thief so late that it would finish after the victim takes nothing */
    v = (ob_chunk_view) { 10, 0, 1000, 20000, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 0);
    /* the last sample of a slow victim goes to a fast thief */
    v = (ob_chunk_view) { 1, 500, 4000, 1000, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 1);
    /* a share that only ties with the victim alone is not taken */
    v = (ob_chunk_view) { 10, 0, 1000, 9000, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 0);
    /* granularity 8: 50 is not allowed; 48 and 56 both end at 56 us, and the smaller wins;
     * the remainder keeps the granularity */
    v = (ob_chunk_view) { 104, 0, 1000, 0, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&eight, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 48);
    ck_assert_int_eq((104 - take) % 8, 0);
    /* a tail shorter than the floor is taken whole or not at all */
    v = (ob_chunk_view) { 5, 0, 100000, 0, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&eight, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 5);
    /* nothing left: nothing taken */
    v = (ob_chunk_view) { 0, 100, 1000, 0, 1 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_SUCCESS);
    ck_assert_int_eq(take, 0);
}
END_TEST

START_TEST(test_share_refuses_bad_views)
{
    const ob_chunk_policy one = { 1, 1, 4 };
    long take = 7;
    ob_chunk_view v = { -1, 0, 1000, 0, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "left=-1"));
    v = (ob_chunk_view) { 10, 0, 0, 0, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "victim_ns=0"));
    v = (ob_chunk_view) { 10, 0, 1000, -5, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_ERR_ARG);
    v = (ob_chunk_view) { 1L << 40, 0, INT64_C(1) << 30, 0, 1000 };
    ck_assert_int_eq(ob_chunk_steal(&one, &v, &take), OMNIBATCH_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(ob_last_error(), "63 bits"));
    ck_assert_int_eq(take, 7);   /* untouched on a refusal */
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

static Suite *make_chunk_suite(void)
{
    Suite *s = suite_create("chunk");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_policy_check_names_the_field);
    tcase_add_test(tc, test_chunks_sum_to_the_range_and_shrink);
    tcase_add_test(tc, test_guided_sizes_by_hand);
    tcase_add_test(tc, test_chunks_shrink_while_thieves_take_the_tail);
    tcase_add_test(tc, test_share_is_the_best_allowed);
    tcase_add_test(tc, test_share_by_hand);
    tcase_add_test(tc, test_share_refuses_bad_views);
    tcase_add_test(tc, test_victims_cover_every_other_rank_once_node_first);
    tcase_add_test(tc, test_helper_groups_differ_and_are_reproducible);
    tcase_add_test(tc, test_layout_check_names_the_field);
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
