/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Sharding: every sample exactly once per epoch whatever plans are applied,
 * the short last step split by largest remainder, and a permutation that
 * is the documented algorithm, bit for bit.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_error.h"
#include "ob_shard.h"

/* The tests' own random numbers (not the library's), fixed seed. */
static uint64_t test_rng = 0x2545f4914f6cdd1dULL;

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

/* A random plan of P counts >= 0 summing to B; often with zeros. */
static void random_plan(long B, int P, long *plan)
{
    for (int i = 0; i < P; i++) {
        plan[i] = 0;
    }
    if (0 == test_below(3)) {
        /* Concentrated: a few ranks carry everything. */
        for (long left = B; left > 0;) {
            long take = 1 + test_below(left);

            plan[test_below(1 + test_below(P))] += take;
            left -= take;
        }
    } else {
        for (long k = 0; k < B; k++) {
            plan[test_below(P)]++;
        }
    }
}

/* ---- steps ---------------------------------------------------------------- */

START_TEST(test_steps_per_epoch)
{
    ck_assert_int_eq(ob_shard_steps_per_epoch(10, 3), 4);
    ck_assert_int_eq(ob_shard_steps_per_epoch(9, 3), 3);
    ck_assert_int_eq(ob_shard_steps_per_epoch(1, 5), 1);
    ck_assert_int_eq(ob_shard_steps_per_epoch(5, 5), 1);
    ck_assert_int_eq(ob_shard_steps_per_epoch(6, 5), 2);
    ck_assert_int_eq(ob_shard_steps_per_epoch(LONG_MAX, 1), LONG_MAX);
    ck_assert_int_eq(ob_shard_steps_per_epoch(LONG_MAX, LONG_MAX), 1);
    ck_assert_int_eq(ob_shard_steps_per_epoch(LONG_MAX, 2), LONG_MAX / 2 + 1);
    ck_assert_int_eq(ob_shard_steps_per_epoch(0, 5), 0);
    ck_assert_str_eq(ob_last_error(), "N=0: expected a data set of at least 1 sample");
    ck_assert_int_eq(ob_shard_steps_per_epoch(5, -2), 0);
    ck_assert_str_eq(ob_last_error(), "B=-2: expected a global batch of at least 1 sample");
}
END_TEST

/* ---- coverage -------------------------------------------------------------------- */

/* One epoch of N samples, batch B, P ranks, a new random plan every step:
 * the slices of each step are adjacent in rank order, and over the epoch
 * every position is taken exactly once. */
static void check_epoch(long N, long B, int P)
{
    long steps = ob_shard_steps_per_epoch(N, B);
    unsigned char *used = calloc((size_t) N, 1);
    long *plan = malloc((size_t) P * sizeof *plan);
    long *counts = malloc((size_t) P * sizeof *counts);

    ck_assert(NULL != used && NULL != plan && NULL != counts);
    for (long k = 0; k < steps; k++) {
        long size = k < steps - 1 ? B : N - k * B;
        long next = k * B;
        long sum = 0;

        random_plan(B, P, plan);
        ck_assert_int_eq(ob_shard_counts(N, B, k, P, plan, counts), OMNIBATCH_SUCCESS);
        for (int i = 0; i < P; i++) {
            long start = -1;
            long count = -1;

            /* Plain tests in the loops: Check logs every passing assertion. */
            if (OMNIBATCH_SUCCESS != ob_shard_locate(N, B, k, P, plan, i, &start, &count)
                || count != counts[i] || start != next || count < 0 || count > plan[i]
                || (size == B && count != plan[i])) {
                ck_abort_msg("N=%ld B=%ld P=%d step %ld rank %d: start %ld count %ld, expected start "
                             "%ld, count %ld of plan %ld", N, B, P, k, i, start, count, next, counts[i],
                             plan[i]);
            }
            for (long p = start; p < start + count; p++) {
                if (p >= N || 0 != used[p]) {
                    ck_abort_msg("N=%ld B=%ld P=%d: position %ld taken twice or out of range", N, B, P, p);
                }
                used[p] = 1;
            }
            next += count;
            sum += count;
        }
        ck_assert_int_eq(sum, size);
    }
    for (long p = 0; p < N; p++) {
        if (1 != used[p]) {
            ck_abort_msg("N=%ld B=%ld P=%d: position %ld never taken", N, B, P, p);
        }
    }
    free(used);
    free(plan);
    free(counts);
}

START_TEST(test_every_sample_once_per_epoch_whatever_the_plans)
{
    for (int trial = 0; trial < 1500; trial++) {
        long B = 1 + test_below(300);
        int P = 1 + (int) test_below(48);
        long N;

        switch (trial % 4) {
        case 0:
            N = 1 + test_below(B);           /* N < B or = B: one short (or full) step */
            break;
        case 1:
            N = B * (1 + test_below(6));     /* a multiple of B: no short step */
            break;
        default:
            N = 1 + test_below(3000);        /* anything */
            break;
        }
        check_epoch(N, B, P);
    }
    /* P > B: some ranks have nothing to do on every step. */
    check_epoch(100, 3, 17);
    check_epoch(1, 1, 8);
    check_epoch(7, 7, 1);
}
END_TEST

/* ---- the short step ------------------------------------------------------------------- */

/* The documented rule, written out plainly: floor(plan_i * r / B) each, then
 * one more for the largest remainders, lower rank first among equals. */
static void reference_short_split(long B, long r, int P, const long *plan, long *out)
{
    long given = 0;
    long *rem = malloc((size_t) P * sizeof *rem);
    char *extra = calloc((size_t) P, 1);

    ck_assert(NULL != rem && NULL != extra);
    for (int i = 0; i < P; i++) {
        out[i] = plan[i] * r / B;
        rem[i] = plan[i] * r % B;
        given += out[i];
    }
    for (long k = 0; k < r - given; k++) {
        int best = -1;

        for (int i = 0; i < P; i++) {
            if (!extra[i] && (best < 0 || rem[i] > rem[best])) {
                best = i;
            }
        }
        extra[best] = 1;
        out[best]++;
    }
    free(rem);
    free(extra);
}

START_TEST(test_short_step_is_largest_remainder)
{
    for (int trial = 0; trial < 3000; trial++) {
        long B = 2 + test_below(500);
        long r = 1 + test_below(B - 1);
        long N = B * test_below(4) + r;
        int P = 1 + (int) test_below(64);
        long plan[64];
        long got[64];
        long want[64];

        random_plan(B, P, plan);
        ck_assert_int_eq(ob_shard_counts(N, B, N / B, P, plan, got), OMNIBATCH_SUCCESS);
        reference_short_split(B, r, P, plan, want);
        for (int i = 0; i < P; i++) {
            if (got[i] != want[i]) {
                ck_abort_msg("B=%ld r=%ld P=%d rank %d: %ld, expected %ld", B, r, P, i, got[i], want[i]);
            }
        }
    }
}
END_TEST

START_TEST(test_short_step_ties_go_to_lower_ranks)
{
    long plan[4] = { 1, 1, 1, 1 };
    long counts[4];
    long plan2[5] = { 0, 3, 0, 3, 0 };
    long counts2[5];

    /* N = 10, B = 4: the last step has 2 samples; every rank's share is 1/2. */
    ck_assert_int_eq(ob_shard_counts(10, 4, 2, 4, plan, counts), OMNIBATCH_SUCCESS);
    ck_assert(1 == counts[0] && 1 == counts[1] && 0 == counts[2] && 0 == counts[3]);
    /* B = 6, r = 1: shares 1/2 for ranks 1 and 3; rank 1 takes it, the idle ranks nothing. */
    ck_assert_int_eq(ob_shard_counts(13, 6, 2, 5, plan2, counts2), OMNIBATCH_SUCCESS);
    ck_assert(0 == counts2[0] && 1 == counts2[1] && 0 == counts2[2] && 0 == counts2[3]
              && 0 == counts2[4]);
}
END_TEST

/* Beyond sqrt(LONG_MAX) the product plan_i * r no longer fits in a long. */
START_TEST(test_short_step_with_huge_batches)
{
#ifdef __SIZEOF_INT128__
    const long B = 10000000019L;
    const long r = B - 12345;
    const long N = 3 * B + r;
    long plan[3] = { B / 3, B / 3 + 1, B - B / 3 - (B / 3 + 1) };
    long counts[3];
    long sum = 0;

    ck_assert_int_eq(ob_shard_counts(N, B, 3, 3, plan, counts), OMNIBATCH_SUCCESS);
    for (int i = 0; i < 3; i++) {
        __int128 exact = (__int128) plan[i] * r;
        long lo = (long) (exact / B);

        ck_assert_msg(counts[i] == lo || counts[i] == lo + 1, "rank %d: %ld, floor %ld", i, counts[i], lo);
        sum += counts[i];
    }
    ck_assert_int_eq(sum, r);
#endif
}
END_TEST

/* ---- arguments ---------------------------------------------------------------------------- */

START_TEST(test_bad_arguments_are_named)
{
    long plan[3] = { 2, 3, 5 };
    long neg[3] = { 6, -1, 5 };
    long over[3] = { 4, 5, 5 };
    long under[3] = { 2, 3, 4 };
    long counts[3];
    long start;
    long count;

    ck_assert_int_eq(ob_shard_counts(0, 10, 0, 3, plan, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "N=0: expected a data set of at least 1 sample");
    ck_assert_int_eq(ob_shard_counts(100, 0, 0, 3, plan, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "B=0: expected a global batch of at least 1 sample");
    ck_assert_int_eq(ob_shard_counts(95, 10, 10, 3, plan, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "step=10: expected a step in [0, 9] (N=95, B=10)");
    ck_assert_int_eq(ob_shard_counts(95, 10, -1, 3, plan, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "step=-1: expected a step in [0, 9] (N=95, B=10)");
    ck_assert_int_eq(ob_shard_counts(95, 10, 0, 0, plan, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "P=0: expected at least 1 rank");
    ck_assert_int_eq(ob_shard_counts(95, 10, 0, 3, NULL, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "plan=NULL: expected P=3 counts");
    ck_assert_int_eq(ob_shard_counts(95, 10, 0, 3, neg, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "plan[1]=-1: expected a count >= 0");
    ck_assert_int_eq(ob_shard_counts(95, 10, 0, 3, over, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(),
                     "plan[2]=5 takes the plan's sum past B=10: expected counts summing to B");
    ck_assert_int_eq(ob_shard_counts(95, 10, 0, 3, under, counts), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "plan sums to 9: expected counts summing to B=10");
    ck_assert_int_eq(ob_shard_counts(95, 10, 0, 3, plan, NULL), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "counts=NULL: expected room for P=3 counts");
    ck_assert_int_eq(ob_shard_locate(95, 10, 0, 3, plan, 3, &start, &count), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "rank=3: expected a rank in [0, 2]");
    ck_assert_int_eq(ob_shard_locate(95, 10, 0, 3, plan, -1, &start, &count), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "rank=-1: expected a rank in [0, 2]");
    ck_assert_int_eq(ob_shard_locate(95, 10, 0, 3, under, 0, &start, &count), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "plan sums to 9: expected counts summing to B=10");
    ck_assert_int_eq(ob_shard_locate(95, 10, 0, 3, plan, 0, NULL, &count), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "start or count is NULL: expected where to store the slice");
}
END_TEST

/* ---- the permutation ------------------------------------------------------------------------- */

/* The documented algorithm, written out from its published descriptions:
 * splitmix64 seeds xoshiro256**, which drives a Fisher-Yates shuffle. */
static uint64_t ref_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t ref_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t ref_xoshiro(uint64_t s[4])
{
    uint64_t out = ref_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ref_rotl(s[3], 45);
    return out;
}

static void ref_permutation(uint64_t seed, long epoch, long N, long *perm)
{
    uint64_t e = (uint64_t) epoch;
    uint64_t x = seed + ref_splitmix64(&e);
    uint64_t s[4];

    for (int i = 0; i < 4; i++) {
        s[i] = ref_splitmix64(&x);
    }
    for (long i = 0; i < N; i++) {
        perm[i] = i;
    }
    for (long i = N - 1; i > 0; i--) {
        uint64_t n = (uint64_t) i + 1;
        uint64_t threshold = (0 - n) % n;
        uint64_t v;
        long j;
        long tmp;

        do {
            v = ref_xoshiro(s);
        } while (v < threshold);
        j = (long) (v % n);
        tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
}

START_TEST(test_reference_generator_matches_published_values)
{
    /* splitmix64 from state 0: the first output given with its reference code. */
    uint64_t x = 0;

    ck_assert(0xe220a8397b1dcdafULL == ref_splitmix64(&x));
}
END_TEST

static int is_permutation(const long *perm, long N)
{
    char *seen = calloc((size_t) N, 1);
    int ok = NULL != seen;

    for (long i = 0; ok && i < N; i++) {
        ok = perm[i] >= 0 && perm[i] < N && !seen[perm[i]];
        if (ok) {
            seen[perm[i]] = 1;
        }
    }
    free(seen);
    return ok;
}

START_TEST(test_permutation_is_the_documented_one)
{
    static const long sizes[] = { 1, 2, 3, 10, 97, 1000, 65537 };
    static const uint64_t seeds[] = { 0, 1, 42, 0xffffffffffffffffULL };

    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++) {
        long N = sizes[a];
        long *got = malloc((size_t) N * sizeof *got);
        long *want = malloc((size_t) N * sizeof *want);

        ck_assert(NULL != got && NULL != want);
        for (size_t b = 0; b < sizeof seeds / sizeof seeds[0]; b++) {
            for (long epoch = 0; epoch < 3; epoch++) {
                ck_assert_int_eq(ob_shard_permutation(seeds[b], epoch, N, got), OMNIBATCH_SUCCESS);
                ck_assert(is_permutation(got, N));
                ref_permutation(seeds[b], epoch, N, want);
                ck_assert_msg(0 == memcmp(got, want, (size_t) N * sizeof *got),
                              "N=%ld seed=%llu epoch=%ld", N, (unsigned long long) seeds[b], epoch);
            }
        }
        free(got);
        free(want);
    }
}
END_TEST

START_TEST(test_permutation_is_deterministic_and_differs_per_epoch_and_seed)
{
    enum { N = 1000, EPOCHS = 12 };
    static long perms[EPOCHS][N];
    long again[N];
    long other[N];

    for (int e = 0; e < EPOCHS; e++) {
        ck_assert_int_eq(ob_shard_permutation(1234, e, N, perms[e]), OMNIBATCH_SUCCESS);
        ck_assert(is_permutation(perms[e], N));
        ck_assert_int_eq(ob_shard_permutation(1234, e, N, again), OMNIBATCH_SUCCESS);
        ck_assert(0 == memcmp(perms[e], again, sizeof again));
        for (int f = 0; f < e; f++) {
            ck_assert_msg(0 != memcmp(perms[e], perms[f], sizeof again), "epochs %d and %d agree", e, f);
        }
    }
    /* Seed and epoch do not trade off: (s, e + 1) is not (s + 1, e). */
    ck_assert_int_eq(ob_shard_permutation(1235, 0, N, other), OMNIBATCH_SUCCESS);
    ck_assert(0 != memcmp(perms[1], other, sizeof other));
    ck_assert(0 != memcmp(perms[0], other, sizeof other));
}
END_TEST

/* Every element lands at every position about equally often over many
 * epochs; a biased shuffle (Sattolo's, or j in [0, N)) fails this. */
START_TEST(test_permutation_is_uniform)
{
    enum { N = 5, EPOCHS = 20000 };
    long count[N][N] = { { 0 } };
    long perm[N];

    for (long e = 0; e < EPOCHS; e++) {
        ck_assert_int_eq(ob_shard_permutation(7, e, N, perm), OMNIBATCH_SUCCESS);
        for (int pos = 0; pos < N; pos++) {
            count[perm[pos]][pos]++;
        }
    }
    /* Expected 4000 each, standard deviation about 57: 10% is 7 deviations. */
    for (int v = 0; v < N; v++) {
        for (int pos = 0; pos < N; pos++) {
            ck_assert_msg(labs(count[v][pos] - EPOCHS / N) < EPOCHS / N / 10, "%d at %d: %ld times", v,
                          pos, count[v][pos]);
        }
    }
}
END_TEST

START_TEST(test_permutation_bad_arguments)
{
    long perm[4];

    ck_assert_int_eq(ob_shard_permutation(1, 0, 0, perm), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "N=0: expected a data set of at least 1 sample");
    ck_assert_int_eq(ob_shard_permutation(1, -1, 4, perm), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "epoch=-1: expected an epoch >= 0");
    ck_assert_int_eq(ob_shard_permutation(1, 0, 4, NULL), OMNIBATCH_ERR_ARG);
    ck_assert_str_eq(ob_last_error(), "perm=NULL: expected room for N=4 positions");
}
END_TEST

static Suite *make_shard_suite(void)
{
    Suite *s = suite_create("shard");
    TCase *slices = tcase_create("slices");
    TCase *perm = tcase_create("permutation");

    tcase_set_timeout(slices, 60);
    tcase_add_test(slices, test_steps_per_epoch);
    tcase_add_test(slices, test_every_sample_once_per_epoch_whatever_the_plans);
    tcase_add_test(slices, test_short_step_is_largest_remainder);
    tcase_add_test(slices, test_short_step_ties_go_to_lower_ranks);
    tcase_add_test(slices, test_short_step_with_huge_batches);
    tcase_add_test(slices, test_bad_arguments_are_named);
    suite_add_tcase(s, slices);

    tcase_set_timeout(perm, 60);
    tcase_add_test(perm, test_reference_generator_matches_published_values);
    tcase_add_test(perm, test_permutation_is_the_documented_one);
    tcase_add_test(perm, test_permutation_is_deterministic_and_differs_per_epoch_and_seed);
    tcase_add_test(perm, test_permutation_is_uniform);
    tcase_add_test(perm, test_permutation_bad_arguments);
    suite_add_tcase(s, perm);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_shard_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
