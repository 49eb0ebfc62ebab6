/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The chunked step's words (src/api/api_chunk_words.c) without MPI: four
 * ranks of one node, their slots written by hand as the step's end finds
 * them, and what a free rank takes (ob_words_take()).
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "ob_api_chunk.h"
#include "ob_check_run.h"
#include "ob_timing.h"

#define NODE 4
#define PLAN 1000L
#define GEN UINT64_C(1)
#define MS UINT64_C(1000000)

static ob_chunk_slot slots[NODE];
static int rank_of[NODE];
static long first[NODE];
static long plan[NODE];
static struct ob_chunks k;

static uint64_t tagged(long n)
{
    return (GEN << OB_CHUNK_GEN_SHIFT) | (uint64_t) n;
}

static uint64_t range_word(long next, long end)
{
    return (GEN << OB_CHUNK_GEN_SHIFT) | ((uint64_t) next << OB_CHUNK_POS_BITS) | (uint64_t) end;
}

/* Node rank j began the step a second ago, has claimed \p claimed samples,
 * the latest \p last of them \p ago_ns ago, and its word holds \p left. */
static void slot_is(int j, uint64_t now, long claimed, long last, uint64_t ago_ns, long left)
{
    const long end = first[j] + plan[j];

    slots[j].begin_ns = now - 1000 * MS;
    slots[j].done = tagged(claimed);
    slots[j].last = tagged(last);
    slots[j].last_ns = now - ago_ns;
    slots[j].range = range_word(end - left, end);
}

/* This rank is node rank 2, done with its range; the chunks' fixed part is
 * 2 samples' worth, so the least share a thief takes is 6 (3 worths). */
static void setup(void)
{
    memset(slots, 0, sizeof slots);
    memset(&k, 0, sizeof k);
    for (int j = 0; j < NODE; j++) {
        rank_of[j] = j;
        first[j] = j * PLAN;
        plan[j] = PLAN;
    }
    k.slot = slots;
    k.nnode = NODE;
    k.me = 2;
    k.rank = 2;
    k.rank_of = rank_of;
    k.first = first;
    k.plan = plan;
    k.floor = 16;
    k.floor_set = 16;
    k.floor_auto = 1;
    k.fixed_s = 0.002;
    k.fixed_b = 0.001;
    k.granularity = 1;
    k.gen = GEN;
    k.cap = PLAN / 16;
    k.holder = 2;
    k.done = PLAN;
}

static void teardown(void)
{
}

/* Node ranks 0 and 3 finished their last chunks (16 claimed 20 ms ago, at
 * 800 a second: nothing left in hand); node rank 1 has \p tail of its
 * range in its word and a chunk of \p in_hand claimed 10 ms ago. */
static void step_end(long tail, long in_hand)
{
    const uint64_t now = ob_now_ns();

    slot_is(0, now, PLAN, 16, 20 * MS, 0);
    slot_is(1, now, PLAN - tail, in_hand, 10 * MS, tail);
    slot_is(2, now, PLAN, 16, 20 * MS, 0);
    slot_is(3, now, PLAN, 16, 20 * MS, 0);
}

/* What this rank, free at 900 samples a second, takes (ob_words_take()). */
static int take(long *start, long *count, int *from)
{
    const ob_chunk_thief thief = { 900.0, PLAN, 0 };

    *start = -1;
    *count = 0;
    *from = -1;
    return ob_words_take(&k, &thief, k.me, start, count, from);
}

/* Rank 1's tail of 20 and its chunk of 32 in hand (about 23 still to do at
 * 900 a second) take it 48 ms, while the three others are free.  Of the
 * words alone the node's work read as 20 samples, a free rank's share of
 * it 5 (its rate over the four rates summed), below the least share: no
 * one took the tail, and the step ended with rank 1 alone (hetsgd ramp at
 * B = 4096, a rank 1.5% over its share ending 60-90 ms after the others,
 * a free rank beside it, 1.05x the oracle's step five steps in a row).  A
 * free rank takes the least share; the next one another. */
START_TEST(test_a_tail_behind_a_chunk_in_hand_is_taken_in_least_shares)
{
    long start, count;
    int from;

    step_end(20, 32);
    ck_assert_msg(take(&start, &count, &from),
                  "a free rank took nothing of a 20-sample tail whose owner still holds a chunk of 32");
    ck_assert_int_eq(from, 1);
    ck_assert_msg(6 == count, "took %ld of the tail of 20: expected the least share, 6", count);
    ck_assert_int_eq(start, 2 * PLAN - 6);
    ck_assert_uint_eq(slots[1].range, range_word(2 * PLAN - 20, 2 * PLAN - 6));
    /* Node rank 3, free as well, takes the next least share. */
    k.me = 3;
    k.rank = 3;
    k.holder = 3;
    ck_assert_msg(take(&start, &count, &from), "a second free rank took nothing of 14");
    ck_assert_int_eq(count, 6);
    ck_assert_uint_eq(slots[1].range, range_word(2 * PLAN - 20, 2 * PLAN - 12));
}
END_TEST

/* A tail of 10 with nothing left in hand (a chunk of 8 claimed 10 ms ago
 * is done at 900 a second): shared with a thief as fast, it would leave
 * each less than the least share (three chunks' fixed parts), and the
 * owner keeps it. */
START_TEST(test_a_tail_below_two_least_shares_stays)
{
    long start, count;
    int from;

    step_end(10, 8);
    ck_assert_msg(!take(&start, &count, &from),
                  "a free rank took %ld of a 10-sample tail from node rank %d, its owner holding nothing", count,
                  from);
    ck_assert_uint_eq(slots[1].range, range_word(2 * PLAN - 10, 2 * PLAN));
}
END_TEST

/* A tail of 200, nothing in hand: a free rank takes what it can do before
 * the node's ranges are expected done (200 over the four rates summed, at
 * its rate: about 50), not the least share alone. */
START_TEST(test_a_large_tail_is_shared_by_the_node_s_end)
{
    long start, count;
    int from;

    step_end(200, 8);
    ck_assert(take(&start, &count, &from));
    ck_assert_int_eq(from, 1);
    ck_assert_msg(count > 6 && count <= 60, "took %ld of a tail of 200: expected its share by the node's end, "
                  "about 50", count);
}
END_TEST

static Suite *make_words_suite(void)
{
    Suite *s = suite_create("words");
    TCase *tc = tcase_create("thieves");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_a_tail_behind_a_chunk_in_hand_is_taken_in_least_shares);
    tcase_add_test(tc, test_a_tail_below_two_least_shares_stays);
    tcase_add_test(tc, test_a_large_tail_is_shared_by_the_node_s_end);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_words_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
